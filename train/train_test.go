package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

func smallConfig() runspec.Config {
	c := runspec.DefaultConfig()
	c.Sampler = "ptsghmc"
	c.Arch = "16-12-3"
	c.Validation = 30
	c.Replicas = 3
	c.TMax = 1.5
	c.Steps = 120
	c.BurnIn = 40
	c.Thin = 10
	c.Batch = 16
	c.Exchange = 5
	c.XBatch = 8
	c.CkptEvery = 25
	c.LogEvery = 10
	c.Workers = 2
	return c
}

// setupOf returns the process's registries with the training data d: the
// Setup of a run of the built-in models and kernels on d.
func setupOf(d *datasets.Dataset) runspec.Setup { return runspec.DefaultSetup().WithTrain(d) }

func smallData(t testing.TB) *datasets.Dataset {
	d, err := datasets.SyntheticImages(200, 16, 3, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// trainRef trains cfg on data uninterrupted in a new directory and returns
// the open run and its directory: the reference an interrupted run is
// compared with, or a finished run to evaluate or resume.
func trainRef(t *testing.T, cfg runspec.Config, s runspec.Setup) (*Run, string) {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "ref")
	r, err := New(ref, cfg, true, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return r, ref
}

// trainChainsRef trains cfg's chains on data in one process, uninterrupted,
// in a new directory, closes them and returns the directory: the reference
// that chains run otherwise are compared with.
func trainChainsRef(t *testing.T, cfg runspec.Config, s runspec.Setup) string {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "ref")
	c, err := NewChains(ref, cfg, true, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	return ref
}

func readAll(t *testing.T, dir string) (samples, metrics []byte) {
	t.Helper()
	s, err := os.ReadFile(filepath.Join(dir, rundir.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// checkUninterrupted fails t unless a resumed run's final rung-1
// parameters got and its samples and metrics files in dir are the
// uninterrupted run's (want, ws, wm) bit for bit.
func checkUninterrupted(t *testing.T, dir string, got, want []float64, ws, wm []byte) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("final rung-1 parameter %d: %v, uninterrupted %v", i, got[i], want[i])
		}
	}
	gs, gm := readAll(t, dir)
	if !bytes.Equal(gs, ws) {
		t.Fatalf("samples differ from the uninterrupted run's: %d bytes vs %d", len(gs), len(ws))
	}
	if !bytes.Equal(gm, wm) {
		t.Fatalf("metrics differ from the uninterrupted run's:\n%s\nvs\n%s", gm, wm)
	}
}

// TestResumeEqualsUninterrupted interrupts a run (as SIGINT would, through
// its context) at several points, resumes it, and checks that the samples
// and metrics files and the final state equal an uninterrupted run's, bit
// for bit. Each sampler is covered.
//
// The adaptive ladders (4 rungs, exchanges every 5 steps, burn-in 40) tune
// in rounds ending at steps 10, 30 and 40 (the last cut to end at burn-in):
// they are stopped inside the first and the second round and after tuning.
// The adaptive-restart case (T = 1..10, exchanges every step, burn-in 200,
// seed 2) has a tuning round (steps 62-126) spoiled by a trend and
// restarted: it is stopped inside that round, at its end, inside the
// restarted one and after tuning.
func TestResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	adaptive := func(target float64) func(*runspec.Config) {
		return func(c *runspec.Config) { c.Replicas, c.Ladder, c.SwapTarget = 4, "adaptive", target }
	}
	for _, tc := range []struct {
		sampler string
		cycle   int
		name    string
		mod     func(*runspec.Config)
		stops   []int
	}{
		{"ptsghmc", 0, "", nil, nil}, {"sgnht", 0, "", nil, nil}, {"sgd", 0, "", nil, nil}, {"ptsghmc", 45, "", nil, nil},
		{"ptsghmc", 0, "adaptive", adaptive(0), []int{7, 22, 33, 97}},
		{"ptsghmc", 0, "adaptive-free-top", adaptive(0.3), []int{7, 22, 33, 97}},
		{"ptsghmc", 0, "adaptive-restart", func(c *runspec.Config) {
			c.Replicas, c.Ladder, c.TMax, c.Exchange, c.Steps, c.BurnIn, c.Seed = 4, "adaptive", 10, 1, 260, 200, 2
		}, []int{70, 126, 150, 230}},
		{"ptsghmc", 0, "resghmc", func(c *runspec.Config) { c.XTest, c.XF = "resghmc", 1 }, nil},
		{"ptsghmc", 0, "noise-aware", func(c *runspec.Config) { c.NoiseTarget, c.LR = 0.05, 0.5 }, nil},
		// a posterior temperature, with stops mid-cycle (cycles of 45 steps)
		{"ptsghmc", 45, "cold", func(c *runspec.Config) { c.Temperature = 0.1 }, []int{20, 61, 97}},
		{"sgnht", 45, "cold", func(c *runspec.Config) { c.Temperature = 0.3 }, []int{20, 61, 97}},
		{"sgld", 0, "cold", func(c *runspec.Config) { c.Temperature = 0.3 }, nil},
		// SGD warm-up to step 30, stopped before, at and after the switch
		{"sgnht", 0, "sgd-warmup", func(c *runspec.Config) { c.SGDWarmup = 30 }, []int{17, 30, 31, 61}},
		// and with its own batch size (8, then 16)
		{"sgnht", 0, "sgd-warmup-batch", func(c *runspec.Config) { c.SGDWarmup, c.WarmupBatch = 30, 8 }, []int{17, 30, 31, 61}},
		// preconditioners: burn-in 40 re-estimates the masses at steps 4,
		// 8, 16 and 32; stopped inside windows, at an end and after
		{"ptsghmc", 0, "rmsprop", func(c *runspec.Config) { c.Precondition = "rmsprop" }, []int{3, 8, 11, 32, 61}},
		{"sgnht", 0, "variance", func(c *runspec.Config) { c.Precondition = "variance" }, []int{3, 8, 11, 32, 33, 61}},
		{"sgld", 0, "rmsprop", func(c *runspec.Config) { c.Precondition = "rmsprop" }, []int{3, 11, 61}},
		// the dense mass: from the gradients in the windows ending at 4
		// and 8, from the draws in those ending at 16 and 32; the
		// low-rank mass's subspace iteration steps at 10, 12 and 14 in
		// the third window
		{"ptsghmc", 0, "dense", func(c *runspec.Config) { c.Precondition = "dense" }, []int{3, 8, 11, 32, 61}},
		{"sgnht", 0, "lowrank", func(c *runspec.Config) { c.Precondition, c.MassRank = "lowrank", 2 }, []int{3, 11, 13, 32, 61}},
		// the noise correction estimates over steps 33-40 (after the last
		// mass window) and applies from step 40
		{"ptsghmc", 0, "noise-correction", func(c *runspec.Config) { c.Precondition, c.NoiseCorrection = "rmsprop", true }, []int{35, 40, 61}},
		{"sghmc", 0, "noise-correction", func(c *runspec.Config) { c.NoiseCorrection = true }, []int{25, 61}},
	} {
		t.Run(fmt.Sprintf("%s/cycle%d/%s", tc.sampler, tc.cycle, tc.name), func(t *testing.T) {
			cfg := smallConfig()
			cfg.Sampler = tc.sampler
			cfg.Cycle = tc.cycle
			if tc.mod != nil {
				tc.mod(&cfg)
			}
			stops := tc.stops
			if stops == nil {
				stops = []int{33, 61, 97}
			}
			data := smallData(t)
			r, ref := trainRef(t, cfg, setupOf(data))
			want := append([]float64(nil), r.State().Rungs[0].Theta...)
			r.Close()
			ws, wm := readAll(t, ref)

			dir := filepath.Join(t.TempDir(), "int")
			r, err := New(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			for _, stopAt := range stops {
				interruptAt(t, r, stopAt)
				// Simulate a crash after the checkpoint: garbage appended to
				// the samples and metrics files must be dropped on resume.
				f, _ := os.OpenFile(filepath.Join(dir, rundir.SamplesFile), os.O_APPEND|os.O_WRONLY, 0)
				f.Write([]byte("torn record"))
				f.Close()
				if r, err = Resume(dir, 0, setupOf(data)); err != nil {
					t.Fatal(err)
				}
				if r.Steps() != stopAt {
					t.Fatalf("resumed at step %d, want %d", r.Steps(), stopAt)
				}
			}
			if err := r.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			got := r.State().Rungs[0].Theta
			if tc.name == "adaptive" || tc.name == "adaptive-free-top" {
				tu := r.State().Tuning
				if len(tu.Rounds) != 3 || tu.Rounds[0].Step != 10 || tu.Rounds[1].Step != 30 || tu.Rounds[2].Step != 40 {
					t.Fatalf("tuning rounds %+v: want three, ending at steps 10, 30 and 40", tu.Rounds)
				}
				t.Logf("ladder %.4g -> %.4g -> %.4g", tu.Rounds[0].Temps, tu.Rounds[0].Next, tu.Rounds[1].Next)
			}
			if tc.name == "adaptive-restart" {
				tu := r.State().Tuning
				spoiled := ""
				for _, rd := range tu.Rounds {
					if rd.Spoiled != "" {
						spoiled += fmt.Sprintf("%d..%d ", rd.Start, rd.Step)
					}
				}
				if tu.Restarts == 0 || spoiled == "" {
					t.Fatalf("no tuning round was restarted: the case no longer covers resuming through a restart")
				}
				t.Logf("restarted rounds: %s", spoiled)
			}
			r.Close()
			checkUninterrupted(t, dir, got, want, ws, wm)
		})
	}
}

// TestCyclicalSchedule checks the cyclical learning-rate multiplier and
// which steps keep samples.
func TestCyclicalSchedule(t *testing.T) {
	t.Parallel()
	c := smallConfig()
	c.Cycle, c.CycleKeep, c.BurnIn, c.Thin = 10, 0.3, 10, 1
	for _, tc := range []struct {
		step  int
		scale float64
		keep  bool
	}{
		{1, 1, false},
		{6, 0.5, false}, // cos(pi/2)
		{8, 0.5 * (math.Cos(0.7*math.Pi) + 1), false}, // in the kept fraction, but burn-in
		{11, 1, false}, // a new cycle starts at the full rate
		{17, 0.5 * (math.Cos(0.6*math.Pi) + 1), false},
		{18, 0.5 * (math.Cos(0.7*math.Pi) + 1), true},
		{20, 0.5 * (math.Cos(0.9*math.Pi) + 1), true},
	} {
		if got := stepScale(c, tc.step); math.Abs(got-tc.scale) > 1e-15 {
			t.Errorf("step %d: scale %v, want %v", tc.step, got, tc.scale)
		}
		if got := keepSample(c, tc.step, false); got != tc.keep {
			t.Errorf("step %d: keep %v, want %v", tc.step, got, tc.keep)
		}
	}
	c.Cycle = 0
	if stepScale(c, 17) != 1 || !keepSample(c, 17, false) {
		t.Error("without a cycle every step runs at the full rate and thinning alone decides")
	}
}

// TestCheckpointTruncatedOrCorrupt truncates a checkpoint at every byte
// offset of its last 4 KB (and flips bytes) and checks each is rejected with
// a clear error, and that Resume leaves the file untouched.
func TestCheckpointTruncatedOrCorrupt(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	dir := t.TempDir()
	r, err := New(dir, cfg, true, setupOf(smallData(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	path := filepath.Join(dir, rundir.CheckpointFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rundir.ReadCheckpoint(path); err != nil {
		t.Fatalf("good checkpoint rejected: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "ckpt")
	from := max(0, len(good)-4096)
	for n := from; n < len(good); n++ {
		os.WriteFile(bad, good[:n], 0o644)
		_, err := rundir.ReadCheckpoint(bad)
		if err == nil || !errors.Is(err, rundir.ErrCheckpoint) || !strings.Contains(err.Error(), bad) {
			t.Fatalf("truncated to %d of %d bytes: error %v", n, len(good), err)
		}
	}
	for _, off := range []int{3, 10, 30, len(good) / 2, len(good) - 1} {
		b := append([]byte(nil), good...)
		b[off] ^= 0x40
		os.WriteFile(bad, b, 0o644)
		if _, err := rundir.ReadCheckpoint(bad); err == nil {
			t.Fatalf("byte %d flipped: accepted", off)
		}
	}
	// Resume of a run whose checkpoint is corrupt fails and keeps the file.
	corrupt := append([]byte(nil), good[:len(good)-100]...)
	os.WriteFile(path, corrupt, 0o644)
	if _, err := Resume(dir, 0, setupOf(smallData(t))); err == nil {
		t.Fatal("corrupt checkpoint resumed")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, corrupt) {
		t.Fatal("corrupt checkpoint was overwritten")
	}
	if _, err := os.Stat(path + ".prev"); err != nil {
		t.Fatalf("previous checkpoint not kept: %v", err)
	}
}

func TestSamplesTornRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s")
	w, err := rundir.CreateSamples(path, rundir.SampleHeader{Arch: "2-2", Params: 3, DType: "float64"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		w.Append(i*10, []float64{float64(i), 1.5, -2})
	}
	w.Close()
	full, _ := os.ReadFile(path)
	// tear the last record at every offset
	rec := 8 + 3*8 + 4
	for cut := 1; cut < rec; cut++ {
		os.WriteFile(path, full[:len(full)-cut], 0o644)
		var steps []int
		_, dropped, err := rundir.ReadSamples(path, func(s int, th []float64) error { steps = append(steps, s); return nil })
		if err != nil || !dropped || len(steps) != 2 || steps[1] != 10 {
			t.Fatalf("cut %d: steps %v dropped %v err %v", cut, steps, dropped, err)
		}
	}
	// a corrupted value in the middle record is corruption (an intact
	// record follows it): an error naming the file, the record and its
	// step, or with skipCorrupt a skip that is counted
	b := append([]byte(nil), full...)
	b[len(b)-rec-5] ^= 1
	os.WriteFile(path, b, 0o644)
	n := 0
	_, _, err = rundir.ReadSamples(path, func(int, []float64) error { n++; return nil })
	if !errors.Is(err, rundir.ErrCorruptSamples) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "record #2 (counting from 1; step field 10") {
		t.Fatalf("corrupt record: read %d, error %v", n, err)
	}
	var steps []int
	sc, err := rundir.ScanSamples(path, true, func(s int, _ []float64) error { steps = append(steps, s); return nil })
	if err != nil || len(steps) != 2 || steps[0] != 0 || steps[1] != 20 || len(sc.Corrupt) != 1 || sc.Corrupt[0] != (rundir.BadRecord{Index: 1, Step: 10}) || sc.Dropped() {
		t.Fatalf("skip corrupt: steps %v, scan %+v, error %v", steps, sc, err)
	}
	// the same damage in the last record is a torn end: dropped, no error
	b = append([]byte(nil), full...)
	b[len(b)-5] ^= 1
	os.WriteFile(path, b, 0o644)
	sc, err = rundir.ScanSamples(path, false, nil)
	if err != nil || sc.Intact != 2 || sc.Torn != 1 || sc.TornBytes != 0 {
		t.Fatalf("bad last record: scan %+v, error %v", sc, err)
	}
	os.WriteFile(path, []byte("not a samples file at all"), 0o644)
	if _, _, err := rundir.ReadSamples(path, func(int, []float64) error { return nil }); err == nil || !strings.Contains(err.Error(), "bad magic") {
		t.Fatalf("bad file: %v", err)
	}
}

func TestConfigFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js := filepath.Join(dir, "c.json")
	os.WriteFile(js, []byte(`{"arch": "784-100-10", "steps": 77}`), 0o644)
	yml := filepath.Join(dir, "c.yaml")
	os.WriteFile(yml, []byte("arch: 784-50-10\nreplicas: 6\nlr: 0.01\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("arhc: 784-50-10\n"), 0o644)
	c := runspec.DefaultConfig()
	if err := runspec.LoadConfigFile(js, &c); err != nil || c.Arch != "784-100-10" || c.Steps != 77 || c.Batch != 128 {
		t.Fatalf("json: %v %+v", err, c)
	}
	if err := runspec.LoadConfigFile(yml, &c); err != nil || c.Arch != "784-50-10" || c.Replicas != 6 || c.LR != 0.01 {
		t.Fatalf("yaml: %v %+v", err, c)
	}
	if err := runspec.LoadConfigFile(bad, &c); err == nil || !strings.Contains(err.Error(), "arhc") {
		t.Fatalf("unknown field: %v", err)
	}
	c = runspec.DefaultConfig()
	c.Friction = 2
	if err := c.Validate(runspec.DefaultSetup()); err == nil || !strings.Contains(err.Error(), "friction") {
		t.Fatalf("bad friction: %v", err)
	}
	for _, tol := range []float64{-1e-8, 1} {
		c = runspec.DefaultConfig()
		c.XTolerance = tol
		if err := c.Validate(runspec.DefaultSetup()); err == nil || !strings.Contains(err.Error(), "xtolerance") {
			t.Fatalf("xtolerance %v: %v", tol, err)
		}
	}
	c = runspec.DefaultConfig()
	c.XMargin = -1
	if err := c.Validate(runspec.DefaultSetup()); err == nil || !strings.Contains(err.Error(), "xmargin") {
		t.Fatalf("bad xmargin: %v", err)
	}
	c = runspec.DefaultConfig()
	c.PriorDF = -2
	if err := c.Validate(runspec.DefaultSetup()); err == nil || !strings.Contains(err.Error(), "prior_df") {
		t.Fatalf("bad prior_df: %v", err)
	}
	c.PriorDF = 4
	spec, err := c.Spec(784, 10)
	if err != nil || spec.PriorDF != 4 || spec.Precision(1) != c.Prior*400 {
		t.Fatalf("prior_df 4: spec %+v, %v", spec, err)
	}
}

// TestConfigTempering checks that bad tempering settings are refused with
// an error naming the setting.
func TestConfigTempering(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mod  func(*runspec.Config)
		want string // "" : valid
	}{
		{"adaptive fixed ends", func(c *runspec.Config) { c.Ladder = "adaptive" }, ""},
		{"adaptive free top", func(c *runspec.Config) { c.Ladder, c.SwapTarget = "adaptive", 0.3 }, ""},
		{"swap target without adaptive", func(c *runspec.Config) { c.SwapTarget = 0.3 }, "swap_target needs ladder adaptive"},
		{"swap target above Barker's 1/2", func(c *runspec.Config) { c.Ladder, c.SwapTarget = "adaptive", 0.6 }, "(0, 0.5)"},
		{"adaptive with 2 rungs", func(c *runspec.Config) { c.Ladder, c.Replicas = "adaptive", 2 }, "at least 3 replicas"},
		{"adaptive, burn-in too short", func(c *runspec.Config) { c.Ladder, c.BurnIn = "adaptive", 900 }, "burnin 900 must be at least 2 x exchange"},
		{"adaptive, first-rung scheme", func(c *runspec.Config) { c.Ladder, c.Scheme = "adaptive", "first" }, "scheme alternate"},
		{"swap target with resghmc", func(c *runspec.Config) { c.Ladder, c.SwapTarget, c.XTest = "adaptive", 0.3, "resghmc" }, "swap_target is a Barker"},
		{"unknown exchange test", func(c *runspec.Config) { c.XTest = "metropolis" }, "exchange_test"},
		{"no chains", func(c *runspec.Config) { c.Chains = 0 }, "chains must be at least 1"},
		{"cold posterior", func(c *runspec.Config) { c.Temperature = 0.1 }, ""},
		{"negative temperature", func(c *runspec.Config) { c.Temperature = -1 }, "temperature must be positive"},
		{"unknown tempering", func(c *runspec.Config) { c.Tempering = "likelihood" }, "tempering must be noise or gradient"},
		{"temperature of sgd", func(c *runspec.Config) { c.Sampler, c.Temperature = "sgd", 0.1 }, "does not apply to sgd"},
		{"sgd warm-up of PT", func(c *runspec.Config) { c.SGDWarmup = 1000 }, "single-chain sampler"},
		{"sgd warm-up of sgnht", func(c *runspec.Config) { c.Sampler, c.SGDWarmup = "sgnht", 1000 }, ""},
		{"sgd warm-up past burn-in", func(c *runspec.Config) { c.Sampler, c.SGDWarmup = "sgnht", 9000 }, "burnin must be at least sgd_warmup"},
		{"warm-up batch", func(c *runspec.Config) { c.Sampler, c.SGDWarmup, c.WarmupBatch, c.Batch = "sgnht", 1000, 128, 512 }, ""},
		{"warm-up batch without warm-up", func(c *runspec.Config) { c.Sampler, c.WarmupBatch = "sgnht", 128 }, "warmup_batch needs sgd_warmup"},
		{"negative warm-up batch", func(c *runspec.Config) { c.Sampler, c.SGDWarmup, c.WarmupBatch = "sgnht", 1000, -1 }, "warmup_batch must be non-negative"},
		{"warm-up batch below the shards", func(c *runspec.Config) { c.Sampler, c.SGDWarmup, c.WarmupBatch, c.GradShards = "sgnht", 1000, 2, 4 }, "grad_shards must be 0 (one per core) to warmup_batch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := runspec.DefaultConfig()
			c.Sampler, c.Replicas, c.Exchange, c.BurnIn = "ptsghmc", 4, 500, 8000
			tc.mod(&c)
			err := c.Validate(runspec.DefaultSetup())
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// interruptAt trains r until it has done step stop, cancels it there (Train
// then checkpoints and returns ErrInterrupted) and closes it.
func interruptAt(t *testing.T, r *Run, stop int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	err := r.Train(ctx, func(s Status) {
		if s.Step == stop {
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("stop at %d: %v", stop, err)
	}
	r.Close()
}

// TestPosteriorTemperatureWired checks that a run's --temperature reaches
// the sampler (rung 1 at T, PT's rungs at T times the ladder), is labelled,
// and that a config that predates the tempering setting resumes with the
// gradient tempering its PT rungs used.
func TestPosteriorTemperatureWired(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.Temperature = 0.1
	r, err := New(filepath.Join(t.TempDir(), "cold"), cfg, true, setupOf(smallData(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for j, want := range []float64{0.1, 0.1 * math.Sqrt(1.5), 0.15} {
		if got := tempering.TemperedRung(r.Cfg.PosteriorTemperature(), r.state.Temps[j]); math.Abs(got-want) > 1e-12 {
			t.Errorf("rung %d samples at T = %v, want %v", j+1, got, want)
		}
	}
	if l := r.Cfg.TemperatureLabel(); l != "tempered posterior, T = 0.1" {
		t.Errorf("label %q", l)
	}
	var old runspec.Config
	if err := json.Unmarshal([]byte(`{"sampler":"ptsghmc"}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.TemperingValue() != sampler.TemperGradient || old.PosteriorTemperature() != 1 || old.TemperatureLabel() != "" {
		t.Errorf("a config without tempering: %v, T %v, label %q; want gradient, 1, none", old.TemperingValue(), old.PosteriorTemperature(), old.TemperatureLabel())
	}
	if runspec.DefaultConfig().TemperingValue() != sampler.TemperNoise {
		t.Errorf("new runs temper the noise")
	}
}

// TestLadderLength checks that a new run's listed ladder must have as many
// temperatures as replicas (the run would step as many rungs as the list
// and record another count), refused by CheckSettings with the count to
// give, while Validate (which resumes also run) leaves it to them.
func TestLadderLength(t *testing.T) {
	t.Parallel()
	all := func(string) bool { return true }
	for _, tc := range []struct {
		ladder string
		want   string
	}{
		{"1,1.2,1.5,2", ""},
		{"1,1.2,1.5", "lists 3 temperatures for 4 replicas: give --replicas 3"},
		{"1,1.2,1.5,2,3", "lists 5 temperatures for 4 replicas: give --replicas 5"},
		{"geometric", ""},
	} {
		c := runspec.DefaultConfig()
		c.Sampler, c.Replicas, c.Ladder = runspec.PTSGHMC, 4, tc.ladder
		_, err := c.CheckSettings(all)
		if tc.want == "" && err != nil && strings.Contains(err.Error(), "temperatures for") {
			t.Errorf("ladder %s: refused: %v", tc.ladder, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ladder %s: error %v, want one containing %q", tc.ladder, err, tc.want)
		}
	}
}

// TestResumeAfterFinishInBurnIn checks that a run Finish ended inside its
// burn-in (a --time-limit at step 0 or 20 of a burn-in of 40) resumes
// with more --steps and ends where an uninterrupted run does, one chain
// and two: its recorded steps, no more than the burn-in, made its
// checkpoint "unusable" to the resume's check of the settings.
func TestResumeAfterFinishInBurnIn(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	for _, tc := range []struct {
		name   string
		chains int
		stop   int
	}{{"one chain, step 20", 1, 20}, {"one chain, step 0", 1, 0}, {"two chains, step 20", 2, 20}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig()
			cfg.Sampler, cfg.Chains = "sgnht", tc.chains
			ref := trainChainsRef(t, cfg, setupOf(data))

			dir := filepath.Join(t.TempDir(), "limited")
			c, err := NewChains(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			if tc.stop > 0 {
				interruptAll(t, c, tc.stop)
			}
			if err := c.Finish(); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if c, err = ResumeChains(dir, cfg.Steps, setupOf(data)); err != nil {
				t.Fatalf("resume with --steps %d of a run ended at step %d (burn-in %d): %v", cfg.Steps, tc.stop, cfg.BurnIn, err)
			}
			if err := c.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			c.Close()
			for i := 1; i <= tc.chains; i++ {
				want, _ := readAll(t, rundir.ChainDir(ref, tc.chains, i))
				got, _ := readAll(t, rundir.ChainDir(dir, tc.chains, i))
				if !bytes.Equal(got, want) {
					t.Errorf("chain %d: its samples file after the resume (%d bytes) differs from the uninterrupted run's (%d bytes)", i, len(got), len(want))
				}
			}
		})
	}
}

// TestResumeAfterCrashInFinish kills a run inside Finish (a --time-limit's
// end) after it saved config.json with the steps done and before its
// checkpoint: the run resumes from its last checkpoint to the steps that
// checkpoint records, and its config.json, samples and metrics end as an
// uninterrupted run's (config.json kept the target Finish never committed).
func TestResumeAfterCrashInFinish(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	for _, chains := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d chains", chains), func(t *testing.T) {
			cfg := smallConfig()
			cfg.Sampler, cfg.Chains = "sgnht", chains
			ref := trainChainsRef(t, cfg, setupOf(data))

			dir := filepath.Join(t.TempDir(), "crashed")
			c, err := NewChains(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			interruptAll(t, c, 33)
			// Finish's first write, then the kill: every config.json says
			// the run ends at step 33; no checkpoint says so
			for i, r := range c.Runs {
				cc := r.Cfg
				cc.Steps = 33
				if err := rundir.WriteConfig(rundir.ChainDir(dir, chains, i+1), cc); err != nil {
					t.Fatal(err)
				}
			}
			if chains > 1 {
				top := c.Cfg
				top.Steps = 33
				if err := rundir.WriteConfig(dir, top); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			if c, err = ResumeChains(dir, 0, setupOf(data)); err != nil {
				t.Fatal(err)
			}
			if err := c.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			c.Close()
			sameRunFiles(t, ref, dir, chains)
		})
	}
}

// TestResumeStepsKilledBeforeCheckpoint resumes a run stopped at step 33
// of 120 with --steps 90 and kills it before its next checkpoint (closed
// without a step): a resume without --steps continues to the 90 steps the
// user asked for, which config.json records, and its config.json, samples
// and metrics end as those of an uninterrupted run of 90 steps. The resume
// commits the new target to the checkpoint before config.json records it
// (the checkpoint kept 120, and the next resume trained to 120); a --steps
// of the steps done, with no step after it, is kept too.
func TestResumeStepsKilledBeforeCheckpoint(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	for _, chains := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d chains", chains), func(t *testing.T) {
			cfg := smallConfig()
			cfg.Sampler, cfg.Chains = "sgnht", chains
			want := cfg
			want.Steps = 90
			ref := trainChainsRef(t, want, setupOf(data))

			dir := filepath.Join(t.TempDir(), "killed")
			c, err := NewChains(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			interruptAll(t, c, 33)
			c.Close()
			if c, err = ResumeChains(dir, 90, setupOf(data)); err != nil {
				t.Fatal(err)
			}
			c.Close() // the kill, before the next checkpoint
			if c, err = ResumeChains(dir, 0, setupOf(data)); err != nil {
				t.Fatal(err)
			}
			if c.Cfg.Steps != 90 {
				t.Errorf("resumed without --steps to %d steps, want the 90 of the killed resume's --steps", c.Cfg.Steps)
			}
			if err := c.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			c.Close()
			sameRunFiles(t, ref, dir, chains)
		})
	}
	// --steps of the steps done leaves no step to checkpoint: the resume's
	// own checkpoint records the target, and the next resume keeps it
	dir := filepath.Join(t.TempDir(), "ended")
	r, err := New(dir, smallConfig(), true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	interruptAt(t, r, 33)
	if r, err = Resume(dir, 33, setupOf(data)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r, err = Resume(dir, 0, setupOf(data)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r.Cfg.Steps != 33 {
		t.Errorf("resumed --steps 33 at step 33, then without --steps: target %d, want 33", r.Cfg.Steps)
	}
}

// TestNewRefusesNoSample checks that settings under which no step keeps a
// sample are refused before anything trains, naming the flags, and that
// the boundary cases keep one.
func TestNewRefusesNoSample(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	for _, tc := range []struct {
		name string
		mod  func(*runspec.Config)
		ok   bool
	}{
		{"thin past the steps", func(c *runspec.Config) { c.Steps, c.BurnIn, c.Thin = 100, 90, 20 }, false},
		{"thin to the last step", func(c *runspec.Config) { c.Steps, c.BurnIn, c.Thin = 100, 90, 10 }, true},
		// cycles of 100 keeping their last 20 steps: steps 101-150 keep none, 181-200 do
		{"cycle keeps none", func(c *runspec.Config) { c.Steps, c.BurnIn, c.Thin, c.Cycle = 150, 100, 1, 100 }, false},
		{"cycle keeps its end", func(c *runspec.Config) { c.Steps, c.BurnIn, c.Thin, c.Cycle = 200, 100, 1, 100 }, true},
		{"sgd keeps its last step", func(c *runspec.Config) { c.Sampler, c.Steps, c.BurnIn, c.Thin = "sgd", 100, 90, 20 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig()
			cfg.Sampler = "sgnht"
			tc.mod(&cfg)
			dir := filepath.Join(t.TempDir(), "run")
			c, err := NewChains(dir, cfg, false, setupOf(data))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "no step keeps a sample") || !strings.Contains(err.Error(), fmt.Sprintf("--thin %d", cfg.Thin)) {
				t.Errorf("error %q, want it to say no step keeps a sample and name --thin", err)
			}
			if _, serr := os.Stat(dir); serr == nil {
				t.Error("a refused run left its directory behind")
			}
		})
	}
}

// sameRunFiles checks that the run of the given chains in dir wrote the
// files of the uninterrupted run in ref, byte for byte: config.json, and
// each chain's config, samples and metrics (a run of one chain's own).
func sameRunFiles(t *testing.T, ref, dir string, chains int) {
	t.Helper()
	dirs := []string{""}
	for i := 1; i <= chains && chains > 1; i++ {
		dirs = append(dirs, fmt.Sprintf("chain-%d", i))
	}
	for _, d := range dirs {
		files := []string{rundir.ConfigFile}
		if d != "" || chains == 1 {
			files = append(files, rundir.SamplesFile, rundir.MetricsFile)
		}
		for _, f := range files {
			want, _ := os.ReadFile(filepath.Join(ref, d, f))
			got, err := os.ReadFile(filepath.Join(dir, d, f))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s differs from the uninterrupted run's (%v): %d bytes vs %d", filepath.Join(d, f), err, len(got), len(want))
			}
		}
	}
}
