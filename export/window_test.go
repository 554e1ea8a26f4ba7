package export

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// windowCases are the step windows exported from trainChains' run, whose
// two chains each hold samples at steps 120, 140, ..., 200.
var windowCases = []struct {
	name  string
	win   rundir.Window
	steps []int64 // each chain's steps in the window
}{
	{"all", rundir.Window{}, []int64{120, 140, 160, 180, 200}},
	{"from", rundir.Window{From: 150}, []int64{160, 180, 200}},
	{"from a sample's step", rundir.Window{From: 140}, []int64{140, 160, 180, 200}},
	{"to", rundir.Window{To: 170}, []int64{120, 140, 160}},
	{"both", rundir.Window{From: 130, To: 180}, []int64{140, 160, 180}},
	{"one sample", rundir.Window{From: 160, To: 160}, []int64{160}},
}

// TestExportWindow exports trainChains' run with step windows as npz and
// as InferenceData: the steps exported are exactly the window's, and each
// draw's weights and test log-likelihoods are those the whole run's
// export holds for the same chain and step.
func TestExportWindow(t *testing.T) {
	run, test := trainChains(t)
	out := t.TempDir()
	full := readNPZ(t, exportNPZ(t, filepath.Join(out, "all.npz"), []string{run}, test, rundir.Window{}))
	if want := []int64{120, 140, 160, 180, 200, 120, 140, 160, 180, 200}; !slices.Equal(full.step, want) {
		t.Fatalf("the whole run's steps %v, want %v", full.step, want)
	}
	for i, tc := range windowCases {
		t.Run(tc.name, func(t *testing.T) {
			path := exportNPZ(t, filepath.Join(out, fmt.Sprintf("w%d.npz", i)), []string{run}, test, tc.win)
			got := readNPZ(t, path)
			var wantSteps, wantChains []int64
			for c := range 2 {
				wantSteps = append(wantSteps, tc.steps...)
				for range tc.steps {
					wantChains = append(wantChains, int64(c))
				}
			}
			if !slices.Equal(got.step, wantSteps) || !slices.Equal(got.chain, wantChains) {
				t.Fatalf("npz steps %v chains %v, want %v and %v", got.step, got.chain, wantSteps, wantChains)
			}
			llStep := readNPZInts(t, path, LogLikStep)
			if !slices.Equal(llStep, wantSteps) {
				t.Fatalf("npz %s %v, want %v", LogLikStep, llStep, wantSteps)
			}
			for k := range got.step {
				c, step := int(got.chain[k]), got.step[k]
				j := full.indexOf(c, step)
				for _, name := range []string{"W0", "b0", "W1", "b1"} {
					n := len(full.learnables[name]) / len(full.step)
					if !slices.Equal(got.learnables[name][k*n:(k+1)*n], full.learnables[name][j*n:(j+1)*n]) {
						t.Fatalf("npz %s of chain %d at step %d differs from the whole run's", name, c, step)
					}
				}
				d := k - c*len(tc.steps) // the draw's index in its chain
				if !slices.Equal(got.loglikOf(c, d, len(tc.steps), test.N), full.loglikOf(c, j-c*5, 5, test.N)) {
					t.Fatalf("npz log_likelihood of chain %d at step %d differs from the whole run's", c, step)
				}
			}

			store := filepath.Join(out, fmt.Sprintf("w%d.zarr", i))
			sum, err := Zarr(store, []string{run}, test, ZarrOptions{Compress: i%2 == 1, Window: tc.win})
			if err != nil {
				t.Fatal(err)
			}
			if sum.DrawsPerChain != len(tc.steps) || sum.Window != tc.win {
				t.Fatalf("zarr summary: %d draws per chain, window %+v", sum.DrawsPerChain, sum.Window)
			}
			checkZarrWindow(t, store, full, wantSteps, test.N)
			checkWindowAttrs(t, store, tc.win)
		})
	}
}

// checkZarrWindow checks the InferenceData store's steps (sample_stats)
// against steps ([chain, draw], flattened) and its weights and
// log-likelihoods against the whole run's npz, draw by draw.
func checkZarrWindow(t *testing.T, store string, full npzData, steps []int64, examples int) {
	t.Helper()
	got := readZarr(t, store, "sample_stats/step")
	if !slices.Equal(got, int64sToFloats(steps)) {
		t.Fatalf("zarr sample_stats step %v, want %v", got, steps)
	}
	d := len(steps) / 2
	ll := readZarr(t, store, "log_likelihood/"+Observed)
	for _, name := range []string{"W0", "b1"} {
		w := readZarr(t, store, "posterior/"+name)
		n := len(full.learnables[name]) / len(full.step)
		for k, step := range steps {
			c := k / d
			j := full.indexOf(c, step)
			for x := range n {
				if w[k*n+x] != float64(full.learnables[name][j*n+x]) {
					t.Fatalf("zarr %s of chain %d at step %d differs from the whole run's", name, c, step)
				}
			}
			if !slices.Equal(ll[k*examples:(k+1)*examples], full.loglikOf(c, j-c*5, 5, examples)) {
				t.Fatalf("zarr log_likelihood of chain %d at step %d differs from the whole run's", c, step)
			}
		}
	}
}

// checkWindowAttrs checks the root's window attributes: from_step and
// to_step when set, and draws_note naming the window.
func checkWindowAttrs(t *testing.T, store string, win rundir.Window) {
	t.Helper()
	var attrs map[string]any
	readJSON(t, filepath.Join(store, ".zattrs"), &attrs)
	for name, v := range map[string]int{"from_step": win.From, "to_step": win.To} {
		got, ok := attrs[name]
		if v == 0 && ok || v > 0 && got != float64(v) {
			t.Errorf("attribute %s = %v, want %d (absent when 0)", name, got, v)
		}
	}
	note := attrs["draws_note"].(string)
	if win != (rundir.Window{}) && !strings.Contains(note, "taken ") || win == (rundir.Window{}) && strings.Contains(note, "taken ") {
		t.Errorf("window %+v: draws_note %q", win, note)
	}
}

// TestExportWindowUnequalChains exports trainChains' run with a shorter
// run of the same model (samples at steps 120 to 160) from step 130: the
// npz weights keep every sample in the window, while the log-likelihoods
// and the InferenceData store hold each chain's first draws in it, as
// many as the shortest chain has.
func TestExportWindowUnequalChains(t *testing.T) {
	run, test := trainChains(t)
	short := trainShort(t, 160)
	out := t.TempDir()
	win := rundir.Window{From: 130}
	path := exportNPZ(t, filepath.Join(out, "w.npz"), []string{run, short}, test, win)
	got := readNPZ(t, path)
	if want := []int64{140, 160, 180, 200, 140, 160, 180, 200, 140, 160}; !slices.Equal(got.step, want) {
		t.Fatalf("npz steps %v, want %v", got.step, want)
	}
	if ll := readNPZInts(t, path, LogLikStep); !slices.Equal(ll, []int64{140, 160, 140, 160, 140, 160}) {
		t.Fatalf("npz %s %v", LogLikStep, ll)
	}
	store := filepath.Join(out, "w.zarr")
	if _, err := Zarr(store, []string{run, short}, nil, ZarrOptions{Window: win}); err != nil {
		t.Fatal(err)
	}
	if s := readZarr(t, store, "sample_stats/step"); !slices.Equal(s, []float64{140, 160, 140, 160, 140, 160}) {
		t.Fatalf("zarr steps %v", s)
	}
}

// TestExportCheckpointedSamples: a chain whose samples file holds records
// past its last checkpoint (a run train is still writing) is exported up
// to the checkpoint's count, with or without a window.
func TestExportCheckpointedSamples(t *testing.T) {
	run, test := trainRun(t, 1, 160) // samples at 120, 140, 160
	path := filepath.Join(run, rundir.SamplesFile)
	w, err := rundir.OpenSamplesAt(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, w.Header().Params)
	for _, step := range []int{180, 200} {
		if err := w.Append(step, theta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for i, tc := range []struct {
		win   rundir.Window
		steps []int64
	}{
		{rundir.Window{}, []int64{120, 140, 160}},
		{rundir.Window{From: 130}, []int64{140, 160}},
	} {
		got := readNPZ(t, exportNPZ(t, filepath.Join(out, fmt.Sprintf("%d.npz", i)), []string{run}, test, tc.win))
		if !slices.Equal(got.step, tc.steps) {
			t.Fatalf("window %+v: steps %v, want %v", tc.win, got.step, tc.steps)
		}
	}
	if _, err := NPZWith(filepath.Join(out, "late.npz"), []string{run}, nil, NPZOptions{Window: rundir.Window{From: 170}}); err == nil ||
		!strings.Contains(err.Error(), "run "+run+" has no samples at step 170 or later (3 samples, the last at step 160)") {
		t.Fatalf("a window past the checkpointed samples: %v", err)
	}
}

// TestExportEmptyWindow: a window with no sample of a chain is refused by
// both formats with an error naming the chain's directory and saying
// which samples it has; so is an inverted window.
func TestExportEmptyWindow(t *testing.T) {
	run, _ := trainChains(t)
	chain1 := rundir.ChainDir(run, 2, 1)
	for _, tc := range []struct {
		win  rundir.Window
		want string
	}{
		{rundir.Window{From: 201}, "run " + chain1 + " has no samples at step 201 or later (5 samples, the last at step 200)"},
		{rundir.Window{To: 119}, "run " + chain1 + " has no samples from step 0 to step 119 (0 samples before it; the first after it at step 120)"},
		{rundir.Window{From: 121, To: 139}, "run " + chain1 + " has no samples from step 121 to step 139 (1 samples before it; the first after it at step 140)"},
		{rundir.Window{From: 150, To: 140}, "step window 150 to 140"},
	} {
		out := t.TempDir()
		path := filepath.Join(out, "p.npz")
		if _, err := NPZWith(path, []string{run}, nil, NPZOptions{Window: tc.win}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("npz, window %+v: %v; want an error saying %q", tc.win, err, tc.want)
		}
		if _, err := Zarr(filepath.Join(out, "p.zarr"), []string{run}, nil, ZarrOptions{Window: tc.win}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("zarr, window %+v: %v; want an error saying %q", tc.win, err, tc.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("window %+v: a refused export left %v", tc.win, entries)
		}
	}
}

// trainShort trains one chain of trainChains' model and settings for
// steps steps and returns its directory.
func trainShort(t *testing.T, steps int) string {
	t.Helper()
	dir, _ := trainRun(t, 1, steps)
	return dir
}

// exportNPZ exports runs in win to path and returns path.
func exportNPZ(t *testing.T, path string, runs []string, data *datasets.Dataset, win rundir.Window) string {
	t.Helper()
	if _, err := NPZWith(path, runs, data, NPZOptions{Window: win}); err != nil {
		t.Fatal(err)
	}
	return path
}

// indexOf returns the npz index of chain c's sample at step, or fails.
func (n npzData) indexOf(c int, step int64) int {
	for i := range n.step {
		if int(n.chain[i]) == c && n.step[i] == step {
			return i
		}
	}
	panic(fmt.Sprintf("no sample of chain %d at step %d", c, step))
}

// loglikOf returns draw d's log-likelihoods of chain c in LogLik of
// draws draws per chain.
func (n npzData) loglikOf(c, d, draws, examples int) []float64 {
	k := c*draws + d
	return n.loglik[k*examples : (k+1)*examples]
}

func readNPZInts(t *testing.T, path, name string) []int64 {
	t.Helper()
	d, err := npz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var v []int64
	if err := d.Read(name+".npy", &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readZarr reads array key of the Zarr v2 store (raw or zlib chunks of
// <f4, <f8 or <i8, C order) as float64 values in C order.
func readZarr(t *testing.T, store, key string) []float64 {
	t.Helper()
	var meta struct {
		Shape, Chunks []int
		DType         string
		Compressor    *struct{ ID string }
	}
	dir := filepath.Join(store, filepath.FromSlash(key))
	readJSON(t, filepath.Join(dir, ".zarray"), &meta)
	size := 1
	grid := make([]int, len(meta.Shape)) // chunks along each dimension
	for i, n := range meta.Shape {
		size *= n
		grid[i] = (n + meta.Chunks[i] - 1) / meta.Chunks[i]
	}
	out := make([]float64, size)
	for ci := make([]int, len(grid)); ci[0] < grid[0]; nextIndex(ci, grid) {
		vals := readChunk(t, dir, ci, meta.DType, meta.Compressor != nil)
		for k := range vals { // the chunk's k-th value: its position in out
			pos, rem := 0, k
			for i := range meta.Shape {
				inner := 1
				for _, c := range meta.Chunks[i+1:] {
					inner *= c
				}
				pos = pos*meta.Shape[i] + ci[i]*meta.Chunks[i] + rem/inner
				rem %= inner
			}
			out[pos] = vals[k]
		}
	}
	return out
}

// nextIndex advances the multi-index ci over grid in C order (ci[0] ==
// grid[0] past the end).
func nextIndex(ci, grid []int) {
	for i := len(ci) - 1; i >= 0; i-- {
		if ci[i]++; ci[i] < grid[i] || i == 0 {
			return
		}
		ci[i] = 0
	}
}

func readChunk(t *testing.T, dir string, ci []int, dtype string, compressed bool) []float64 {
	t.Helper()
	name := make([]string, len(ci))
	for i, v := range ci {
		name[i] = fmt.Sprint(v)
	}
	b, err := os.ReadFile(filepath.Join(dir, strings.Join(name, ".")))
	if err != nil {
		t.Fatal(err)
	}
	if compressed {
		zr, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	var out []float64
	switch dtype {
	case "<f4":
		for i := 0; i < len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
		}
	case "<f8":
		for i := 0; i < len(b); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
		}
	case "<i8":
		for i := 0; i < len(b); i += 8 {
			out = append(out, float64(int64(binary.LittleEndian.Uint64(b[i:]))))
		}
	default:
		t.Fatalf("%s: dtype %s", dir, dtype)
	}
	return out
}

func int64sToFloats(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestZarrWindowThin: export --thin keeps every second draw and is the
// root's and the posterior's attribute window_thin; their thin stays the
// run's (20). Without a window thinning, window_thin is left out.
func TestZarrWindowThin(t *testing.T) {
	run, _ := trainRun(t, 1, 200) // samples at 120, 140, ..., 200
	for i, tc := range []struct {
		win   rundir.Window
		steps []float64
	}{
		{rundir.Window{Thin: 2}, []float64{120, 160, 200}},
		{rundir.Window{}, []float64{120, 140, 160, 180, 200}},
	} {
		store := filepath.Join(t.TempDir(), fmt.Sprintf("t%d.zarr", i))
		if _, err := Zarr(store, []string{run}, nil, ZarrOptions{Window: tc.win}); err != nil {
			t.Fatal(err)
		}
		if s := readZarr(t, store, "sample_stats/step"); !slices.Equal(s, tc.steps) {
			t.Errorf("window %+v: steps %v, want %v", tc.win, s, tc.steps)
		}
		for _, group := range []string{"", "posterior"} {
			var attrs map[string]any
			readJSON(t, filepath.Join(store, group, ".zattrs"), &attrs)
			wt, ok := attrs[WindowThin]
			if attrs["thin"] != float64(20) || tc.win.Thin > 0 && wt != float64(tc.win.Thin) || tc.win.Thin == 0 && ok {
				t.Errorf("window %+v, group %q: thin %v, %s %v; want the run's 20 and %d", tc.win, group, attrs["thin"], WindowThin, wt, tc.win.Thin)
			}
		}
	}
}
