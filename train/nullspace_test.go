package train

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestNullSpacePriorWritesRawInputNetworks trains with a null-space prior on
// images whose last four pixels are always dark (so the data leave those
// directions out) and checks that the samples the run writes are the
// networks of the raw images: a sample predicts the raw validation images
// as the chain's own weights predict the mapped ones; that the weights of
// the dark pixels spread about the scale times wider than the others'; and
// that the run records the prior's digest and refuses a resume that fits
// another.
func TestNullSpacePriorWritesRawInputNetworks(t *testing.T) {
	data := smallData(t)
	for i := 0; i < data.N; i++ {
		clear(data.Row(i)[12:])
	}
	cfg := smallConfig()
	cfg.Sampler, cfg.Replicas, cfg.NullSpaceScale = "sgnht", 1, 8
	cfg.Steps, cfg.BurnIn = 400, 100
	s := setupOf(data)
	r, dir := trainRef(t, cfg, s)
	defer r.Close()
	if r.null == nil || r.null.K > 12 {
		t.Fatalf("null-space prior %+v, want a span of at most 12 of 16 pixels", r.null)
	}
	_, rawVal, err := runspec.SplitData(r.Cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	var last []float64
	var lastStep int
	if _, _, err := rundir.ReadSamples(filepath.Join(dir, rundir.SamplesFile), func(step int, theta []float64) error {
		last, lastStep = append(last[:0], theta...), step
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if lastStep != r.state.Steps {
		t.Fatalf("last sample at step %d, run at %d", lastStep, r.state.Steps)
	}
	// the validation images, and noise images lit where the data are dark
	noise := &datasets.Dataset{N: 30, D: 16, Classes: 3, X: make([]float32, 30*16), Labels: make([]int, 30)}
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range noise.X {
		noise.X[i] = float32(rng.Float64())
	}
	mappedNoise := &datasets.Dataset{N: 30, D: 16, Classes: 3, X: append([]float32(nil), noise.X...), Labels: noise.Labels}
	if err := r.null.Inputs(mappedNoise); err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		name        string
		raw, mapped *datasets.Dataset
	}{{"validation", rawVal, r.Val}, {"noise", noise, mappedNoise}} {
		own, _, err := r.val.Fit(r.state.Rungs[0].Theta, set.mapped)
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := r.val.Fit(last, set.raw)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(own-raw) > 1e-4*math.Abs(own) {
			t.Errorf("%s log-likelihood: the chain's weights on mapped images %g, the written sample on raw images %g", set.name, own, raw)
		}
	}
	// W0 is 16x12, row i the weights of pixel i
	first := r.Model.Layout[0]
	w := last[first.Offset : first.Offset+first.Size()]
	spread := func(from, to int) float64 {
		ss := 0.0
		for _, v := range w[from*12 : to*12] {
			ss += v * v
		}
		return math.Sqrt(ss / float64((to-from)*12))
	}
	if dark, lit := spread(12, 16), spread(0, 12); dark < 3*lit {
		t.Errorf("weights of the dark pixels spread %.3g, of the lit ones %.3g: the prior did not widen off the data", dark, lit)
	}
	r.Close()
	rec, err := rundir.ReadRunConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.NullSpaceKeep != 0.999 {
		t.Errorf("config.json records null_space_keep %v, want the default 0.999 it used", rec.NullSpaceKeep)
	}
	if rec.NullSpaceSHA256 != r.null.Digest() {
		t.Fatalf("config.json records null_space_sha256 %q, the prior's is %s", rec.NullSpaceSHA256, r.null.Digest())
	}
	// a resume on data that fit another prior is refused, naming both
	other := smallData(t)
	for i := 0; i < other.N; i++ {
		clear(other.Row(i)[10:])
	}
	if _, err := Resume(dir, cfg.Steps+20, setupOf(other)); err == nil || !strings.Contains(err.Error(), rec.NullSpaceSHA256) {
		t.Errorf("resume on other data: %v, want a refusal naming %s", err, rec.NullSpaceSHA256)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

func TestNullSpacePriorNeedsAnMLP(t *testing.T) {
	cfg := smallConfig()
	cfg.Model, cfg.NullSpaceScale = "lenet", 4
	if err := cfg.Validate(runspec.DefaultSetup()); err == nil || !strings.Contains(err.Error(), "null_space_scale needs an MLP") {
		t.Errorf("lenet with a null-space prior: %v", err)
	}
}
