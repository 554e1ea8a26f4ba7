package train

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/export"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

func TestLearnablesCoverParameters(t *testing.T) {
	t.Parallel()
	spec := nn.Spec{Sizes: []int{5, 4, 3}, PriorPrecision: []float64{1}}
	got := spec.Layout()
	type place struct {
		Name   string
		Shape  []int
		Offset int
	}
	want := []place{
		{"W0", []int{5, 4}, 0}, {"b0", []int{4}, 20},
		{"W1", []int{4, 3}, 24}, {"b1", []int{3}, 36},
	}
	for i, p := range got {
		if i >= len(want) || !reflect.DeepEqual(place{p.Name, p.Shape, p.Offset}, want[i]) {
			t.Fatalf("layout = %+v, want %+v", got, want)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("layout = %+v, want %+v", got, want)
	}
	if end := got[len(got)-1].Offset + got[len(got)-1].Size(); end != spec.NumParams() {
		t.Fatalf("learnables end at %d, model has %d parameters", end, spec.NumParams())
	}
}

// trainSmall trains smallConfig with steps into dir.
func trainSmall(t *testing.T, dir string, steps int, seed uint64) {
	t.Helper()
	cfg := smallConfig()
	cfg.Steps, cfg.Seed = steps, seed
	r, err := New(dir, cfg, true, setupOf(smallData(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// TestExportNPZ exports two runs of unequal length, reads the archive back
// with npyio and checks every array against the samples files and Evaluate.
func TestExportNPZ(t *testing.T) {
	t.Parallel()
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	trainSmall(t, a, 120, 1) // 8 samples (burn-in 40, thin 10)
	trainSmall(t, b, 80, 2)  // 4 samples
	data := smallData(t)
	out := filepath.Join(t.TempDir(), "post.npz")
	sum, err := export.NPZ(out, []string{a, b}, data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sum.Draws, []int{8, 4}) || sum.LogLikDraws != 4 || sum.DType != "float32" {
		t.Fatalf("summary %+v", sum)
	}

	r, err := npz.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	spec := nn.Spec{Sizes: []int{16, 12, 3}, PriorPrecision: []float64{1}}
	wantKeys := []string{"W0.npy", "b0.npy", "W1.npy", "b1.npy", "step.npy", "chain.npy", "chain_dirs.npy", "log_likelihood.npy", "log_likelihood_step.npy"}
	if !reflect.DeepEqual(r.Keys(), wantKeys) {
		t.Fatalf("keys %v, want %v", r.Keys(), wantKeys)
	}
	shape := func(name string) []int { return r.Header(name + ".npy").Descr.Shape }

	// The weight arrays, against the samples files read directly.
	var want [][]float64
	var wantStep, wantChain []int64
	for c, dir := range []string{a, b} {
		if _, _, err := rundir.ReadSamples(filepath.Join(dir, rundir.SamplesFile), func(step int, theta []float64) error {
			want = append(want, append([]float64(nil), theta...))
			wantStep = append(wantStep, int64(step))
			wantChain = append(wantChain, int64(c))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range spec.Layout() {
		if got := shape(l.Name); !reflect.DeepEqual(got, append([]int{12}, l.Shape...)) {
			t.Fatalf("%s shape %v, want [12 %v]", l.Name, got, l.Shape)
		}
		var v []float32
		if err := r.Read(l.Name+".npy", &v); err != nil {
			t.Fatal(err)
		}
		for s := range want {
			for j := 0; j < l.Size(); j++ {
				if float64(v[s*l.Size()+j]) != want[s][l.Offset+j] {
					t.Fatalf("%s sample %d value %d: %v, samples file %v", l.Name, s, j, v[s*l.Size()+j], want[s][l.Offset+j])
				}
			}
		}
	}
	// W0[s, i, o] is theta[i*out + o]: row-major [in, out], as nn.Layer says.
	var w0 []float32
	r.Read("W0.npy", &w0)
	if float64(w0[1*16*12+2*12+5]) != want[1][2*12+5] {
		t.Fatal("W0 is not [sample, in, out] row-major")
	}
	var step, chain []int64
	if err := r.Read("step.npy", &step); err != nil {
		t.Fatal(err)
	}
	if err := r.Read("chain.npy", &chain); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(step, wantStep) || !reflect.DeepEqual(chain, wantChain) {
		t.Fatalf("step %v chain %v, want %v %v", step, chain, wantStep, wantChain)
	}
	var dirs []string
	if err := r.Read("chain_dirs.npy", &dirs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dirs, []string{a, b}) {
		t.Fatalf("chain_dirs %v", dirs)
	}

	// The log-likelihood matrix: [chains, shortest chain's draws, examples],
	// whose mean over examples is Evaluate's held-out trace.
	if got := shape("log_likelihood"); !reflect.DeepEqual(got, []int{2, 4, data.N}) {
		t.Fatalf("log_likelihood shape %v, want [2 4 %d]", got, data.N)
	}
	var ll []float64
	if err := r.Read("log_likelihood.npy", &ll); err != nil {
		t.Fatal(err)
	}
	var llStep []int64
	r.Read("log_likelihood_step.npy", &llStep)
	if !reflect.DeepEqual(llStep, append(append([]int64(nil), wantStep[:4]...), wantStep[8:12]...)) {
		t.Fatalf("log_likelihood_step %v", llStep)
	}
	rep, err := evaluate.Evaluate(runspec.DefaultSetup(), []string{a, b}, "", data)
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 2; c++ {
		for d := 0; d < 4; d++ {
			m := 0.0
			for i := 0; i < data.N; i++ {
				v := ll[(c*4+d)*data.N+i]
				if v > 0 || math.IsNaN(v) {
					t.Fatalf("log-likelihood %v", v)
				}
				m += v
			}
			if m /= float64(data.N); math.Abs(m-rep.HeldOut[c][d]) > 1e-12 {
				t.Fatalf("chain %d draw %d: mean log-likelihood %v, Evaluate's %v", c, d, m, rep.HeldOut[c][d])
			}
		}
	}
}

func TestExportNPZErrors(t *testing.T) {
	t.Parallel()
	a := filepath.Join(t.TempDir(), "a")
	trainSmall(t, a, 120, 1)
	other := filepath.Join(t.TempDir(), "other")
	cfg := smallConfig()
	cfg.Arch = "16-5-3"
	r, err := New(other, cfg, true, setupOf(smallData(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	out := filepath.Join(t.TempDir(), "x.npz")
	for _, tc := range []struct {
		runs []string
		want string
	}{
		{nil, "no runs"},
		{[]string{a, other}, "cannot export together"},
		{[]string{filepath.Join(t.TempDir(), "missing")}, "missing"},
	} {
		if _, err := export.NPZ(out, tc.runs, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("runs %v: error %v, want one containing %q", tc.runs, err, tc.want)
		}
	}
}
