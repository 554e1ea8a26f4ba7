package train

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestChains runs 3 independent PT chains in one process and checks that
// chain 1 equals the single-chain run of the same seed bit for bit, that
// chains 2 and 3 differ from it, and that interrupting and resuming the
// whole run gives every chain the same samples and metrics as the
// uninterrupted run.
func TestChains(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	data := smallData(t)
	r, single := trainRef(t, cfg, setupOf(data))
	r.Close()

	cfg.Chains = 3
	ref := trainChainsRef(t, cfg, setupOf(data))
	ss, _ := readAll(t, single)
	for i := 1; i <= 3; i++ {
		s, _ := readAll(t, rundir.ChainDir(ref, 3, i))
		if same := bytes.Equal(s, ss); same != (i == 1) {
			t.Errorf("chain %d's samples equal the single-chain run's: %v", i, same)
		}
	}

	dir := filepath.Join(t.TempDir(), "int")
	c, err := NewChains(dir, cfg, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{20, 70} {
		ctx, cancel := context.WithCancel(context.Background())
		err := c.Train(ctx, func(chain int, s Status) {
			if chain == 2 && s.Step == stopAt {
				cancel()
			}
		})
		cancel()
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("stop at %d: %v", stopAt, err)
		}
		c.Close()
		if c, err = ResumeChains(dir, 0, setupOf(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for i := 1; i <= 3; i++ {
		ws, wm := readAll(t, rundir.ChainDir(ref, 3, i))
		gs, gm := readAll(t, rundir.ChainDir(dir, 3, i))
		if !bytes.Equal(ws, gs) || !bytes.Equal(wm, gm) {
			t.Errorf("chain %d: resumed run's samples or metrics differ from the uninterrupted run's", i)
		}
	}
	dirs, err := rundir.RunDirs([]string{dir})
	if err != nil || len(dirs) != 3 {
		t.Fatalf("RunDirs: %v, %v", dirs, err)
	}
	// a new run over the 3-chain run is refused without overwrite
	if err := checkFree(dir, false); err == nil {
		t.Error("a new run may replace a 3-chain run without --overwrite")
	}
	// one chain's directory resumes on its own
	one, err := ResumeChains(rundir.ChainDir(dir, 3, 2), 0, setupOf(data))
	if err != nil || len(one.Runs) != 1 || one.Steps() != cfg.Steps {
		t.Fatalf("resume of chain 2's directory: %v", err)
	}
	one.Close()
}

// TestChainsRHat pools chains through Evaluate: four SGNHT chains of one
// run give split R-hat below 1.05 on their held-out log-likelihood traces
// (on a data set without a validation split), and replacing one of them by
// a chain started far away (weights times 6) and stopped soon after its
// burn-in gives more than 1.1 (measured 1.029 and 2.348).
func TestChainsRHat(t *testing.T) {
	t.Parallel()
	data, err := datasets.SyntheticImages(600, 16, 3, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := data.Split(200, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := smallConfig()
	cfg.Sampler, cfg.Validation, cfg.Chains = "sgnht", 0, 4
	cfg.Steps, cfg.BurnIn, cfg.Thin = 40000, 2000, 50
	dir := filepath.Join(t.TempDir(), "run")
	c, err := NewChains(dir, cfg, true, setupOf(train))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	good, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{dir}, "", test)
	if err != nil {
		t.Fatal(err)
	}

	off := cfg
	off.Chains, off.Seed, off.Steps = 1, 99, 3000
	odir := filepath.Join(t.TempDir(), "off")
	r, err := New(odir, off, true, setupOf(train))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.State().Rungs[0].Theta {
		r.State().Rungs[0].Theta[i] *= 6
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	runs, _ := rundir.RunDirs([]string{dir})
	bad, err := evaluate.Evaluate(runspec.DefaultSetup(), append(runs[:3:3], odir), "", test)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mixed chains: R-hat %.3f ESS %.0f; with a displaced, early-stopped chain: R-hat %.3f ESS %.0f", good.RHat, good.ESS, bad.RHat, bad.ESS)
	if !(good.RHat < 1.05) {
		t.Errorf("R-hat of four chains of one posterior is %.3f, want < 1.05", good.RHat)
	}
	if !(bad.RHat > 1.1) {
		t.Errorf("R-hat with a displaced chain is %.3f, want > 1.1", bad.RHat)
	}
}

// TestResumeChainsBeforeFirstCheckpoint kills a run of three chains while
// NewChains writes it: chain 1 has its first checkpoint, chain 2 its
// config, samples and metrics files but no checkpoint yet (or no files at
// all, its directory holding only its lock), and chain 3 nothing. A resume
// starts chains 2 and 3 as NewChains would have (the run's seed stream and
// config), and every chain's samples, metrics and config, and the run's
// config, end as an uninterrupted run's, byte for byte; a resume with
// --steps starts them with that target.
func TestResumeChainsBeforeFirstCheckpoint(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	for _, tc := range []struct {
		name  string
		empty bool // chain 2's directory holds nothing but its lock
		steps int  // the resume's --steps
	}{{"files without checkpoint", false, 0}, {"empty directory", true, 0}, {"with --steps", false, 90}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig()
			cfg.Sampler, cfg.Chains = "sgnht", 3
			refCfg := cfg
			if tc.steps > 0 {
				refCfg.Steps = tc.steps
			}
			ref := trainChainsRef(t, refCfg, setupOf(data))

			dir := filepath.Join(t.TempDir(), "crashed")
			c, err := NewChains(dir, cfg, true, setupOf(data))
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			// the kill: chain 2 before its first checkpoint, chain 3 before
			// anything of its own
			two := rundir.ChainDir(dir, 3, 2)
			os.Remove(filepath.Join(two, rundir.CheckpointFile))
			if tc.empty {
				if err := clearChainDir(two); err != nil {
					t.Fatal(err)
				}
			}
			if err := clearChainDir(rundir.ChainDir(dir, 3, 3)); err != nil {
				t.Fatal(err)
			}
			if c, err = ResumeChains(dir, tc.steps, setupOf(data)); err != nil {
				t.Fatalf("resume of a run killed before chain 2's first checkpoint: %v", err)
			}
			if err := c.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			c.Close()
			sameRunFiles(t, ref, dir, 3)
		})
	}
}

// TestResumeRefusesChainWithSamplesButNoCheckpoint checks that a chain
// that has kept samples and whose checkpoints were removed since is not
// taken for a killed start: the resume refuses, naming the samples file,
// and leaves its samples as they were (starting the chain afresh
// truncated them).
func TestResumeRefusesChainWithSamplesButNoCheckpoint(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	cfg := smallConfig()
	cfg.Sampler, cfg.Chains = "sgnht", 2
	dir := filepath.Join(t.TempDir(), "run")
	c, err := NewChains(dir, cfg, true, setupOf(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	two := rundir.ChainDir(dir, 2, 2)
	samples := filepath.Join(two, rundir.SamplesFile)
	before, err := os.ReadFile(samples)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.CheckpointFile, rundir.CheckpointFile + ".prev"} {
		os.Remove(filepath.Join(two, f))
	}
	c, err = ResumeChains(dir, 2*cfg.Steps, setupOf(data))
	if err == nil {
		c.Close()
		t.Fatal("resumed a chain whose checkpoints were removed, its samples kept")
	}
	if !strings.Contains(err.Error(), samples) || !strings.Contains(err.Error(), "checkpoints were removed") {
		t.Errorf("error %q, want it to name %s and the removed checkpoints", err, samples)
	}
	if after, _ := os.ReadFile(samples); !bytes.Equal(after, before) {
		t.Errorf("samples changed: %d bytes, were %d", len(after), len(before))
	}
}

// TestResumeChainsLeavesRunWhenAChainFails checks what a resume of
// several chains that cannot open one of them leaves: with --steps, the
// chains opened before it keep their checkpoints byte for byte (each
// committed the new target as it opened, so a later resume without
// --steps trained them to it and the others to the old one); a chain
// directory removed since the run began is refused, not started afresh;
// and a chain without checkpoints whose samples header is whole but
// corrupt is refused, its file left as it was.
func TestResumeChainsLeavesRunWhenAChainFails(t *testing.T) {
	t.Parallel()
	data := smallData(t)
	cfg := smallConfig()
	cfg.Sampler, cfg.Chains = "sgnht", 3
	newRun := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "run")
		c, err := NewChains(dir, cfg, true, setupOf(data))
		if err != nil {
			t.Fatal(err)
		}
		interruptAll(t, c, 33)
		c.Close()
		return dir
	}
	t.Run("corrupt checkpoint of chain 3", func(t *testing.T) {
		dir := newRun(t)
		var before [][]byte
		for i := 1; i <= 2; i++ {
			b, err := os.ReadFile(filepath.Join(rundir.ChainDir(dir, 3, i), rundir.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			before = append(before, b)
		}
		ck := filepath.Join(rundir.ChainDir(dir, 3, 3), rundir.CheckpointFile)
		b, err := os.ReadFile(ck)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(ck, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := ResumeChains(dir, 200, setupOf(data)); err == nil {
			c.Close()
			t.Fatal("resumed with chain 3's checkpoint corrupt")
		}
		for i := 1; i <= 2; i++ {
			b, _ := os.ReadFile(filepath.Join(rundir.ChainDir(dir, 3, i), rundir.CheckpointFile))
			if !bytes.Equal(b, before[i-1]) {
				t.Errorf("chain %d's checkpoint changed by a resume that failed", i)
			}
		}
	})
	t.Run("chain directory removed", func(t *testing.T) {
		dir := newRun(t)
		two := rundir.ChainDir(dir, 3, 2)
		if err := os.RemoveAll(two); err != nil {
			t.Fatal(err)
		}
		c, err := ResumeChains(dir, 0, setupOf(data))
		if err == nil {
			c.Close()
			t.Fatal("resumed a run whose chain 2 directory was removed")
		}
		if !strings.Contains(err.Error(), "restore "+two) {
			t.Errorf("error %q, want it to say to restore %s", err, two)
		}
		if _, err := os.Stat(two); err == nil {
			t.Errorf("%s made again by a resume that failed", two)
		}
	})
	t.Run("corrupt samples header, no checkpoint", func(t *testing.T) {
		dir := newRun(t)
		two := rundir.ChainDir(dir, 3, 2)
		samples := filepath.Join(two, rundir.SamplesFile)
		b, err := os.ReadFile(samples)
		if err != nil {
			t.Fatal(err)
		}
		b[9] ^= 0xff // the format version: the header's checksum fails
		if err := os.WriteFile(samples, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{rundir.CheckpointFile, rundir.CheckpointFile + ".prev"} {
			os.Remove(filepath.Join(two, f))
		}
		c, err := ResumeChains(dir, 0, setupOf(data))
		if err == nil {
			c.Close()
			t.Fatal("started afresh a chain whose samples header is corrupt")
		}
		if !strings.Contains(err.Error(), samples) {
			t.Errorf("error %q, want it to name %s", err, samples)
		}
		if after, _ := os.ReadFile(samples); !bytes.Equal(after, b) {
			t.Errorf("samples changed: %d bytes, were %d", len(after), len(b))
		}
	})
}
