package train

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
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
	last := lastSample(t, dir, r.state.Steps)
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
	if _, err := Resume(dir, cfg.Steps+20, setupOf(other)); err == nil || !strings.Contains(err.Error(), rec.NullSpaceSHA256) || !strings.Contains(err.Error(), "not the run's data") {
		t.Errorf("resume on other data: %v, want a refusal naming %s and the data", err, rec.NullSpaceSHA256)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

// waveImages returns n 28x28 images of low-frequency waves (classes by
// example), whose 5x5 patches leave patch directions out.
func waveImages(n, classes int, seed uint64) *datasets.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	const side = 28
	d := &datasets.Dataset{N: n, D: side * side, Classes: classes, X: make([]float32, n*side*side), Labels: make([]int, n)}
	for e := 0; e < n; e++ {
		c := e % classes
		a, b := 0.5+rng.Float64(), rng.NormFloat64()
		fr, fc := 0.1+0.03*float64(c), 0.15+0.2*rng.Float64()
		for r := 0; r < side; r++ {
			for col := 0; col < side; col++ {
				d.X[e*side*side+r*side+col] = float32(0.5 + 0.3*(a*math.Sin(fr*float64(r))+0.5*b*math.Cos(fc*float64(col))))
			}
		}
		d.Labels[e] = c
	}
	return d
}

// TestNullSpacePriorOfAConvNet trains LeNet a few steps with a null-space
// prior (of the first convolution's patches) and checks that the chain
// samples K' on the raw images through the model's map (nn.ConvNet.FirstMap)
// while the samples written are the plain LeNet's (K = K' A): the normal
// eval path (evaluate.RunModel, an ensemble on the run's engine) of the
// last sample predicts the validation and noise images as the chain's own
// weights do in the mapped graph; that the folded kernels spread about the
// scale times wider off the patches' span than on it; and that the run
// records the prior and refuses a resume whose images fit another.
func TestNullSpacePriorOfAConvNet(t *testing.T) {
	data := waveImages(120, 10, 1)
	cfg := smallConfig()
	cfg.Model, cfg.Arch = "lenet", ""
	cfg.Sampler, cfg.Replicas, cfg.NullSpaceScale = "sgnht", 1, 8
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.Validation = 20, 10, 10, 8, 20
	cfg.LogEvery, cfg.CkptEvery = 10, 10
	s := setupOf(data)
	r, dir := trainRef(t, cfg, s)
	defer r.Close()
	if r.null == nil || r.null.Patch == nil || r.null.D != 25 || r.null.K >= 25 {
		t.Fatalf("null-space prior %+v, want a patch prior leaving some of 25 directions out", r.null)
	}
	if r.Model.Conv == nil || len(r.Model.Conv.FirstMap) != 25*25 {
		t.Fatal("the run's model does not map its first kernel")
	}
	rawTr, rawVal, err := runspec.SplitData(r.Cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Data.X, rawTr.X) || !slices.Equal(r.Val.X, rawVal.X) {
		t.Fatal("a convolution's prior mapped the images")
	}
	last := lastSample(t, dir, r.state.Steps)
	own := r.state.Rungs[0].Theta
	noise, err := datasets.NoiseImages(20, 784, 10, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		name string
		data *datasets.Dataset
	}{{"validation", r.Val}, {"noise", noise}} {
		rcfg, m, err := evaluate.RunModel(s, dir, set.data)
		if err != nil {
			t.Fatal(err)
		}
		if m.Conv == nil || m.Conv.FirstMap != nil {
			t.Fatal("eval's model is not the plain LeNet")
		}
		ens, err := evaluate.NewModelEnsembleOn(rcfg.RunEngine(m), m, set.data)
		if err != nil {
			t.Fatal(err)
		}
		if err := ens.Add(last); err != nil {
			t.Fatal(err)
		}
		i := 0
		if err := r.val.Each(own, set.data, func(_ int, z []float64) {
			lse := autodiff.LogSumExp(z)
			for c, v := range z {
				if p, q := math.Exp(v-lse), ens.Last[i*10+c]; math.Abs(p-q) > 1e-5 {
					t.Fatalf("%s image %d class %d: the chain's K' in the mapped graph gives p %g, eval of the written sample %g", set.name, i, c, p, q)
				}
			}
			i++
		}); err != nil {
			t.Fatal(err)
		}
	}
	// the folded kernels' rows: along the directions left out the scale
	// times the spread of the chain's own (isotropic) K'
	first := r.Model.Layout[0]
	spreadOff := func(w []float64) float64 {
		ss, d := 0.0, r.null.D
		for o := 0; o < first.Shape[0]; o++ {
			for j := 0; j < d-r.null.K; j++ {
				dot := 0.0
				for i := 0; i < d; i++ {
					dot += w[first.Offset+o*d+i] * r.null.V[j*d+i]
				}
				ss += dot * dot
			}
		}
		return math.Sqrt(ss)
	}
	if got, want := spreadOff(last), r.null.Scale*spreadOff(own); math.Abs(got-want) > 1e-6*want {
		t.Errorf("written kernels spread %g off the span, the chain's %g times the scale is %g", got, spreadOff(own), want)
	}
	r.Close()
	rec, err := rundir.ReadRunConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.NullSpaceScale != 8 || rec.NullSpaceKeep != 0.999 || rec.NullSpaceSHA256 != r.null.Digest() {
		t.Fatalf("config.json records scale %v keep %v sha256 %q; the prior is %v, 0.999, %s", rec.NullSpaceScale, rec.NullSpaceKeep, rec.NullSpaceSHA256, r.null.Scale, r.null.Digest())
	}
	// a resume on images whose patches fit another prior is refused, naming both
	if _, err := Resume(dir, cfg.Steps+10, setupOf(waveImages(120, 10, 2))); err == nil || !strings.Contains(err.Error(), rec.NullSpaceSHA256) {
		t.Errorf("resume on other images: %v, want a refusal naming %s", err, rec.NullSpaceSHA256)
	}
	// the same images under a run that recorded another digest: refused,
	// naming both
	other := rec
	other.NullSpaceSHA256 = strings.Repeat("0", 64)
	if _, err := prepare(s, other); err == nil || !strings.Contains(err.Error(), other.NullSpaceSHA256) || !strings.Contains(err.Error(), rec.NullSpaceSHA256) {
		t.Errorf("a run that recorded another prior: %v, want a refusal naming %s and %s", err, other.NullSpaceSHA256, rec.NullSpaceSHA256)
	}
	// and a resume on the same images continues
	r2, err := Resume(dir, cfg.Steps+10, s)
	if err != nil {
		t.Fatalf("resume on the same images: %v", err)
	}
	r2.Close()
}

// A model whose first layer is neither dense nor a ConvNet's convolution
// (an imported network, say) is refused before the fit.
func TestNullSpacePriorNeedsADenseOrConvFirstLayer(t *testing.T) {
	data := waveImages(60, 10, 3)
	s := setupOf(data)
	s.Models = runspec.ModelRegistry{"opaque": func(p nn.PriorConfig) (nn.Model, error) {
		m, err := nn.LeNet(p).Model("opaque")
		m.Conv = nil // as an ONNX network's: no ConvNet to rebuild
		return m, err
	}}
	cfg := smallConfig()
	cfg.Model, cfg.Arch, cfg.NullSpaceScale = "opaque", "", 4
	cfg.Sampler, cfg.Replicas = "sgnht", 1
	if _, err := New(filepath.Join(t.TempDir(), "run"), cfg, false, s); err == nil || !strings.Contains(err.Error(), "neither a dense layer of 784 inputs nor the first convolution of a ConvNet") {
		t.Errorf("a null-space prior on a model that is not a ConvNet: %v", err)
	}
}

// lastSample returns the last sample written in run directory dir, which
// must be the sample of the run's last step, steps.
func lastSample(t *testing.T, dir string, steps int) []float64 {
	t.Helper()
	var last []float64
	var lastStep int
	if _, _, err := rundir.ReadSamples(filepath.Join(dir, rundir.SamplesFile), func(step int, theta []float64) error {
		last, lastStep = append(last[:0], theta...), step
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if lastStep != steps {
		t.Fatalf("last sample at step %d, run at %d", lastStep, steps)
	}
	return last
}

// TestNullSpaceFitIgnoresProcessArithmetic checks the null-space fit runs
// in the pinned arithmetic whatever the process ran before: a library
// user's native run must not change the next run's prior, whose digest the
// run records and a resume checks.
func TestNullSpaceFitIgnoresProcessArithmetic(t *testing.T) {
	// 100 pixels: below about 64 the two arithmetics' fits agree anyway
	data, err := datasets.SyntheticImages(300, 100, 3, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < data.N; i++ {
		clear(data.Row(i)[90:])
	}
	cfg := smallConfig()
	cfg.Sampler, cfg.Replicas, cfg.NullSpaceScale, cfg.Arch = "sgnht", 1, 8, "100-12-3"
	s := setupOf(data)
	pinned, err := prepare(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { autodiff.UseArithmetic(autodiff.ArithmeticPinned) })
	if err := autodiff.UseArithmetic(autodiff.ArithmeticNative); err != nil {
		t.Fatal(err)
	}
	after, err := prepare(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := pinned.null.Digest(), after.null.Digest(); a != b {
		t.Errorf("prior digest %s after a native run's arithmetic, %s in a fresh process", b, a)
	}
}
