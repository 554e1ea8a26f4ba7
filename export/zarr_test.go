package export

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/train"
)

// xarrayPython returns a Python interpreter that imports xarray and zarr
// (Debian's python3-xarray and python3-zarr), or skips the test.
func xarrayPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if err := exec.Command(py, "-c", "import xarray, zarr").Run(); err == nil {
			return py
		}
	}
	t.Skip("no python3 with xarray and zarr (apt-get install python3-xarray python3-zarr): the InferenceData store is not read back")
	return ""
}

type xrVar struct {
	Dims   []string  `json:"dims"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
}

type xrGroup struct {
	Attrs  map[string]any   `json:"attrs"`
	Sizes  map[string]int   `json:"sizes"`
	Vars   map[string]xrVar `json:"vars"`
	Coords map[string]xrVar `json:"coords"`
}

// readXarray opens the groups of store with xarray.
func readXarray(t *testing.T, py, store string, groups ...string) map[string]xrGroup {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "read_inferencedata.py"), store}, groups...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("xarray: %v\n%s", err, stderr.String())
	}
	var out map[string]xrGroup
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// trainChains trains a 16-8-3 run of two chains, logging metrics every 30
// steps (so most draws' statistics come from an earlier line), and returns
// it with held-out data.
func trainChains(t *testing.T) (string, *datasets.Dataset) {
	t.Helper()
	return trainRun(t, 2, 200)
}

// trainRun trains a 16-8-3 run of chains chains for steps steps (burn-in
// 100, thin 20: samples at steps 120, 140, ...), logging metrics every 30
// steps, and returns it with held-out data.
func trainRun(t *testing.T, chains, steps int) (string, *datasets.Dataset) {
	t.Helper()
	return trainRunLogging(t, chains, steps, 30)
}

// trainRunLogging is trainRun with a metrics line every logEvery steps.
func trainRunLogging(t *testing.T, chains, steps, logEvery int) (string, *datasets.Dataset) {
	t.Helper()
	return trainRunWith(t, chains, steps, logEvery, nil)
}

// trainRunWith is trainRunLogging with the configuration changed by edit
// (when not nil) before training.
func trainRunWith(t *testing.T, chains, steps, logEvery int, edit func(*runspec.Config)) (string, *datasets.Dataset) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := datasets.SyntheticImages(300, 16, 3, rng)
	test, _ := datasets.SyntheticImages(40, 16, 3, rng)
	cfg := runspec.DefaultConfig()
	cfg.Arch, cfg.Validation, cfg.Chains = "16-8-3", 0, chains
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.LogEvery = steps, 100, 20, 32, logEvery
	if edit != nil {
		edit(&cfg)
	}
	dir := filepath.Join(t.TempDir(), "run")
	run, err := train.NewChains(dir, cfg, true, runspec.DefaultSetup().WithTrain(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, test
}

// TestZarrInXarray exports a two-chain run as npz and as InferenceData
// (raw and zlib chunks) and opens every group with xarray: the schema's
// dimensions, the selected weights (two learnables and a flat range),
// the log-likelihoods and labels equal npz's exactly, and sample_stats
// holds the metrics line at or before each draw's step.
func TestZarrInXarray(t *testing.T) {
	py := xarrayPython(t)
	run, test := trainChains(t)
	out := t.TempDir()
	npzPath := filepath.Join(out, "p.npz")
	if _, err := NPZ(npzPath, []string{run}, test); err != nil {
		t.Fatal(err)
	}
	want := readNPZ(t, npzPath)
	for _, compress := range []bool{false, true} {
		store := filepath.Join(out, map[bool]string{false: "raw.zarr", true: "zlib.zarr"}[compress])
		sum, err := Zarr(store, []string{run}, test, ZarrOptions{Params: "b1,W0,3:7", Compress: compress, Created: time.Unix(0, 0), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Zarr(store, []string{run}, test, ZarrOptions{}); err == nil || !strings.Contains(err.Error(), "exists") {
			t.Fatalf("export over an existing store: %v", err)
		}
		got := readXarray(t, py, store, "posterior", "sample_stats", "log_likelihood", "observed_data")
		c, d := 2, sum.DrawsPerChain
		checkPosterior(t, got["posterior"], want, c, d)
		checkLogLik(t, got, want, test, c, d)
		checkSampleStats(t, got["sample_stats"], want, run, c, d)
		for g, grp := range got {
			if grp.Attrs["inference_library"] != "ptsghmc" || grp.Attrs["created_at"] != "1970-01-01T00:00:00Z" {
				t.Errorf("group %s attributes %v", g, grp.Attrs)
			}
		}
		if a := got["posterior"].Attrs; a["sampler"] != "sgnht" || a["model"] != "16-8-3" || !strings.Contains(a["config"].(string), `"steps":200`) {
			t.Errorf("posterior attributes %v", a)
		}
	}
}

// npzData is what NPZ wrote.
type npzData struct {
	learnables map[string][]float32
	step       []int64
	chain      []int64
	loglik     []float64 // [chains, draws, examples]
}

func readNPZ(t *testing.T, path string) npzData {
	t.Helper()
	r, err := npz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := npzData{learnables: map[string][]float32{}}
	for _, n := range []string{"W0", "b0", "W1", "b1"} {
		var v []float32
		if err := r.Read(n+".npy", &v); err != nil {
			t.Fatal(err)
		}
		d.learnables[n] = v
	}
	for name, dst := range map[string]any{Step: &d.step, Chain: &d.chain, LogLik: &d.loglik} {
		if err := r.Read(name+".npy", dst); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// sampleIndex returns the npz index of draw dr of chain c.
func (n npzData) sampleIndex(c, dr int) int {
	k := 0
	for i, ch := range n.chain {
		if int(ch) == c {
			if k == dr {
				return i
			}
			k++
		}
	}
	return -1
}

func checkPosterior(t *testing.T, g xrGroup, want npzData, c, d int) {
	t.Helper()
	shapes := map[string][]int{"W0": {16, 8}, "b1": {3}}
	if !slices.Equal(g.Vars["W0"].Dims, []string{"chain", "draw", "W0_dim_0", "W0_dim_1"}) || g.Vars["W0"].DType != "float32" ||
		!slices.Equal(g.Vars[Theta].Dims, []string{"chain", "draw", ThetaIndex}) || g.Sizes["chain"] != c || g.Sizes["draw"] != d || len(g.Vars) != 3 {
		t.Fatalf("posterior: sizes %v, variables %v", g.Sizes, g.Vars)
	}
	if idx := g.Coords[ThetaIndex].Values; !slices.Equal(idx, []float64{3, 4, 5, 6}) {
		t.Fatalf("theta_index %v", idx)
	}
	for name, shape := range shapes {
		size := shape[0]
		if len(shape) > 1 {
			size *= shape[1]
		}
		v := g.Vars[name].Values
		for ch := 0; ch < c; ch++ {
			for dr := 0; dr < d; dr++ {
				s := want.sampleIndex(ch, dr)
				for j := 0; j < size; j++ {
					if got, w := v[(ch*d+dr)*size+j], float64(want.learnables[name][s*size+j]); got != w {
						t.Fatalf("posterior %s[%d, %d, %d] = %v, npz %v", name, ch, dr, j, got, w)
					}
				}
				for j := 0; j < 4; j++ { // theta 3:7 is W0's flat 3..6
					if got, w := g.Vars[Theta].Values[(ch*d+dr)*4+j], float64(want.learnables["W0"][s*128+3+j]); got != w {
						t.Fatalf("theta[%d, %d, %d] = %v, npz W0 %v", ch, dr, j, got, w)
					}
				}
			}
		}
	}
}

func checkLogLik(t *testing.T, got map[string]xrGroup, want npzData, test *datasets.Dataset, c, d int) {
	t.Helper()
	ll := got["log_likelihood"].Vars[Observed]
	if !slices.Equal(ll.Dims, []string{"chain", "draw", Example}) || len(ll.Values) != c*d*test.N || len(want.loglik) != len(ll.Values) {
		t.Fatalf("log_likelihood %v: %d values, npz %d", ll.Dims, len(ll.Values), len(want.loglik))
	}
	if !slices.Equal(ll.Values, want.loglik) {
		t.Fatal("log_likelihood differs from npz's")
	}
	y := got["observed_data"].Vars[Observed]
	if !slices.Equal(y.Dims, []string{Example}) || y.DType != "int64" || len(y.Values) != test.N {
		t.Fatalf("observed_data y %v %s", y.Dims, y.DType)
	}
	for i, l := range test.Labels {
		if y.Values[i] != float64(l) {
			t.Fatalf("observed y[%d] = %v, label %d", i, y.Values[i], l)
		}
	}
}

func checkSampleStats(t *testing.T, g xrGroup, want npzData, run string, c, d int) {
	t.Helper()
	for _, n := range []string{"step", "metrics_step", "energy", "potential_energy", "kinetic_energy", "lp", "thermostat", "temperature"} {
		if v, ok := g.Vars[n]; !ok || !slices.Equal(v.Dims, []string{"chain", "draw"}) {
			t.Fatalf("sample_stats %s: %v", n, v.Dims)
		}
	}
	for ch := 0; ch < c; ch++ {
		lines, err := rundir.ReadMetrics(rundir.ChainDir(run, 2, ch+1))
		if err != nil {
			t.Fatal(err)
		}
		for dr := 0; dr < d; dr++ {
			k := ch*d + dr
			step := want.step[want.sampleIndex(ch, dr)]
			var line rundir.MetricsLine
			for _, l := range lines { // the last line at or before the step
				if int64(l.Step) <= step {
					line = l
				}
			}
			kin := line.Kinetic[0] * float64(16*8+8+8*3+3) / 2
			if g.Vars["step"].Values[k] != float64(step) || g.Vars["metrics_step"].Values[k] != float64(line.Step) ||
				g.Vars["potential_energy"].Values[k] != line.U || g.Vars["kinetic_energy"].Values[k] != kin ||
				g.Vars["energy"].Values[k] != line.U+kin || g.Vars["thermostat"].Values[k] != line.Xi[0] ||
				g.Vars["temperature"].Values[k] != 1 || g.Vars["lp"].Values[k] != -line.U {
				t.Fatalf("sample_stats chain %d draw %d (step %d, metrics line of step %d): got %v", ch, dr, step, line.Step, g.Vars)
			}
		}
	}
}

// TestSelectParams: names and ranges parse; unknown names and bad ranges
// are refused naming the learnables.
func TestSelectParams(t *testing.T) {
	layout := runspecLayout(t)
	sel, err := SelectParams("W1, b0,0:3,W1", layout)
	if err != nil || len(sel.Learnables) != 2 || sel.Learnables[0].Name != "W1" || !slices.Equal(sel.rangeIndices(), []int64{0, 1, 2}) {
		t.Fatalf("%+v %v", sel, err)
	}
	for _, bad := range []string{"W9", "5:5", "3:1", "-1:2", "0:100000", "a:b"} {
		if _, err := SelectParams(bad, layout); err == nil || !strings.Contains(err.Error(), "W0, b0, W1, b1") && !strings.Contains(err.Error(), "lo:hi") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if all, _ := SelectParams("", layout); len(all.Learnables) != 4 {
		t.Errorf("empty selection: %v", all)
	}
	// names that cannot be variables of the store: refused when selected,
	// naming the learnable; a range of them is fine
	for _, name := range []string{"/fc/Transpose_output_0", "draw", Theta} {
		odd := append(nn.Layout(nil), layout...)
		odd[1].Name = name
		for _, spec := range []string{"", name} {
			if _, err := SelectParams(spec, odd); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("learnable %q", name)) {
				t.Errorf("learnable %q, --params %q: %v, want it refused by name", name, spec, err)
			}
		}
		if sel, err := SelectParams("W0,0:3", odd); err != nil || len(sel.Learnables) != 1 {
			t.Errorf("learnable %q left out: %+v, %v", name, sel, err)
		}
	}
}

func runspecLayout(t *testing.T) nn.Layout {
	t.Helper()
	cfg := runspec.DefaultConfig()
	cfg.Arch = "16-8-3"
	m, err := cfg.BuildModel(runspec.DefaultSetup().Models)
	if err != nil {
		t.Fatal(err)
	}
	return m.Layout
}

// TestZarrSamplesBeforeFirstMetrics exports a run whose first samples
// (steps 120, 140) come before its first metrics line (step 150): their
// statistics come from that first line (metrics_step 150), later draws'
// from the line at or before them.
func TestZarrSamplesBeforeFirstMetrics(t *testing.T) {
	run, test := trainRunLogging(t, 1, 200, 150)
	store := filepath.Join(t.TempDir(), "s.zarr")
	if _, err := Zarr(store, []string{run}, test, ZarrOptions{}); err != nil {
		t.Fatal(err)
	}
	steps := readZarr(t, store, "sample_stats/step")
	mstep := readZarr(t, store, "sample_stats/metrics_step")
	want := map[float64]float64{120: 150, 140: 150, 160: 150, 180: 150, 200: 200}
	if len(steps) != len(want) {
		t.Fatalf("steps %v, want the draws of %v", steps, want)
	}
	for i, s := range steps {
		if w, ok := want[s]; !ok || mstep[i] != w {
			t.Fatalf("draw %d at step %v: metrics_step %v, want %v (steps %v, metrics steps %v)", i, s, mstep[i], w, steps, mstep)
		}
	}
}

// TestZarrTornMetricsLine: a metrics.jsonl whose last line is half
// written past the checkpoint (a chain still training) is read up to the
// checkpoint's bytes: the store's sample_stats are those of the intact
// file.
func TestZarrTornMetricsLine(t *testing.T) {
	run, _ := trainRun(t, 1, 200)
	dir := t.TempDir()
	before := filepath.Join(dir, "before.zarr")
	if _, err := Zarr(before, []string{run}, nil, ZarrOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(run, rundir.MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"step": 210, "U": 12`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	after := filepath.Join(dir, "after.zarr")
	if _, err := Zarr(after, []string{run}, nil, ZarrOptions{}); err != nil {
		t.Fatalf("a torn metrics line past the checkpoint: %v", err)
	}
	for _, key := range []string{"sample_stats/metrics_step", "sample_stats/potential_energy", "sample_stats/thermostat"} {
		if a, b := readZarr(t, after, key), readZarr(t, before, key); !slices.Equal(a, b) {
			t.Errorf("%s %v, the intact file's %v", key, a, b)
		}
	}
}
