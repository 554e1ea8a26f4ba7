package train

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/predictive"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// skipSide is the side of the images of the skip branch's tests: a small
// CNN on 8x8 images keeps their runs short.
const skipSide = 8

// skipImages returns n smooth 8x8 images in [0, 1] (a wave down the rows
// whose frequency tells the class, plus one across the columns), whose
// span leaves image directions out.
func skipImages(n, classes int, seed uint64) *datasets.Dataset {
	rng := rand.New(rand.NewPCG(seed, 11))
	const d = skipSide * skipSide
	data := &datasets.Dataset{N: n, D: d, Classes: classes, X: make([]float32, n*d), Labels: make([]int, n)}
	for e := 0; e < n; e++ {
		c := e % classes
		a, b := 0.5+rng.Float64(), 2*rng.Float64()-1
		fr, fc := 0.3+0.25*float64(c), 0.2+0.3*rng.Float64()
		for r := 0; r < skipSide; r++ {
			for col := 0; col < skipSide; col++ {
				data.X[e*d+r*skipSide+col] = float32(0.5 + 0.25*(a*math.Sin(fr*float64(r))+0.5*b*math.Cos(fc*float64(col))))
			}
		}
		data.Labels[e] = c
	}
	return data
}

// skipSetup returns the setup of a run on data whose registry holds a
// small CNN for 8x8 images under name.
func skipSetup(data *datasets.Dataset, name string) runspec.Setup {
	return setupOf(data).WithModel(name, func(p nn.PriorConfig) (nn.Model, error) {
		return nn.ConvNet{Height: skipSide, Width: skipSide, Channels: 1, Conv: []int{3}, Kernel: 3, Dense: []int{6}, Classes: 3, Prior: p}.Model(name)
	})
}

// skipConfig returns a short SGNHT run of model name with the skip branch
// (scale 10, keep 0.999).
func skipConfig(name string) runspec.Config {
	cfg := smallConfig()
	cfg.Model, cfg.Arch = name, ""
	cfg.Sampler, cfg.Replicas = "sgnht", 1
	cfg.NullSpaceScale, cfg.NullSpaceSkip = 10, 0.999
	cfg.Steps, cfg.BurnIn, cfg.Thin, cfg.Batch, cfg.Validation = 30, 10, 10, 16, 30
	cfg.LogEvery, cfg.CkptEvery = 5, 5
	return cfg
}

// TestSkipRunRecordsAndRebuilds trains a small CNN with the skip branch and
// checks that the chain samples the mapped branch W' while the samples
// written are the plain network's (W = s V V^T W'): eval's model of the run
// directory (evaluate.RunModel) and predict's and serve's
// (predictive.LoadWith) are the CNN with its branch learnable and
// unmapped, and predict the validation and noise images from the last
// sample as the chain's own weights do in the mapped graph; that
// config.json records the branch's keep and its prior's digest; and that a
// run that recorded another digest is refused, naming both.
func TestSkipRunRecordsAndRebuilds(t *testing.T) {
	t.Parallel()
	const name = "test-skip-run"
	data := skipImages(200, 3, 1)
	s := skipSetup(data, name)
	cfg := skipConfig(name)
	r, dir := trainRef(t, cfg, s)
	defer r.Close()
	if r.skip == nil || r.skip.Patch != nil || r.skip.D != 64 || r.skip.K >= 64 {
		t.Fatalf("skip prior %+v, want an image prior leaving some of 64 directions out", r.skip)
	}
	if c := r.Model.Conv; c == nil || !c.Skip || len(c.SkipBasis) != 64*(64-r.skip.K) || c.SkipScale != 10 {
		t.Fatal("the run's model does not map its skip branch")
	}
	noise, err := datasets.NoiseImages(20, 64, 3, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	last := lastSample(t, dir, r.state.Steps)
	own := r.state.Rungs[0].Theta
	r.Close()
	for _, set := range []struct {
		name string
		data *datasets.Dataset
	}{{"validation", r.Val}, {"noise", noise}} {
		want := mappedProbs(t, r, own, set.data)
		rcfg, m, err := evaluate.RunModel(s, dir, set.data)
		if err != nil {
			t.Fatal(err)
		}
		checkPlainSkip(t, "eval", m)
		ens, err := evaluate.NewModelEnsembleOn(rcfg.RunEngine(m), m, set.data)
		if err != nil {
			t.Fatal(err)
		}
		if err := ens.Add(last); err != nil {
			t.Fatal(err)
		}
		compareProbs(t, "eval, "+set.name, want, ens.Last)
		post, err := predictive.LoadWith(s, predictive.Options{Window: rundir.Window{From: r.state.Steps}}, dir)
		if err != nil {
			t.Fatal(err)
		}
		checkPlainSkip(t, "predict", post.Model)
		preds, err := post.PredictData(set.data)
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, p := range preds {
			got = append(got, p.Probabilities...)
		}
		compareProbs(t, "predict, "+set.name, want, got)
	}
	rec, err := rundir.ReadRunConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.NullSpaceSkip != 0.999 || rec.NullSpaceScale != 10 || rec.NullSpaceSkipSHA256 != r.skip.Digest() || !strings.HasSuffix(rec.Shapes, ",skip.W:64x6") {
		t.Fatalf("config.json records skip %v scale %v sha256 %q shapes %s; the prior is 0.999, 10, %s", rec.NullSpaceSkip, rec.NullSpaceScale, rec.NullSpaceSkipSHA256, rec.Shapes, r.skip.Digest())
	}
	other := rec
	other.NullSpaceSkipSHA256 = strings.Repeat("0", 64)
	// on the run's own data: the fit, not the data, differs
	if _, err := prepare(s, other); err == nil || !strings.Contains(err.Error(), other.NullSpaceSkipSHA256) || !strings.Contains(err.Error(), rec.NullSpaceSkipSHA256) || !strings.Contains(err.Error(), "unchanged") {
		t.Errorf("a run that recorded another skip prior: %v, want a refusal naming %s and %s, the data unchanged", err, other.NullSpaceSkipSHA256, rec.NullSpaceSkipSHA256)
	}
}

// mappedProbs returns the class probabilities of data under the run's own
// (mapped) model at the chain's weights theta.
func mappedProbs(t *testing.T, r *Run, theta []float64, data *datasets.Dataset) []float64 {
	t.Helper()
	var out []float64
	if err := r.val.Each(theta, data, func(_ int, z []float64) {
		lse := autodiff.LogSumExp(z)
		for _, v := range z {
			out = append(out, math.Exp(v-lse))
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkPlainSkip fails t unless m is a ConvNet with its skip branch
// learnable and unmapped: the network of the samples written.
func checkPlainSkip(t *testing.T, what string, m nn.Model) {
	t.Helper()
	if m.Conv == nil || !m.Conv.Skip || m.Conv.SkipBasis != nil || m.Conv.FirstMap != nil {
		t.Fatalf("%s's model is not the plain CNN with its skip branch: %+v", what, m.Conv)
	}
}

func compareProbs(t *testing.T, what string, want, got []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d probabilities, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-5 {
			t.Fatalf("%s: probability %d of the written sample %g, of the chain's W' in the mapped graph %g", what, i, got[i], want[i])
		}
	}
}

// TestSkipResumeEqualsUninterrupted checks that a run with the skip branch
// interrupted twice and resumed writes the same samples, metrics and final
// state as an uninterrupted run, bit for bit.
func TestSkipResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	const name = "test-skip-resume"
	s := skipSetup(skipImages(200, 3, 2), name)
	cfg := skipConfig(name)
	r, ref := trainRef(t, cfg, s)
	want := append([]float64(nil), r.State().Rungs[0].Theta...)
	r.Close()
	ws, wm := readAll(t, ref)
	dir := filepath.Join(t.TempDir(), "int")
	r, err := New(dir, cfg, true, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{7, 18} {
		interruptAt(t, r, stopAt)
		if r, err = Resume(dir, 0, s); err != nil {
			t.Fatal(err)
		}
		if r.skip == nil || r.Model.Conv.SkipBasis == nil {
			t.Fatal("the resumed run does not map its skip branch")
		}
	}
	if err := r.Train(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := r.State().Rungs[0].Theta
	r.Close()
	checkUninterrupted(t, dir, got, want, ws, wm)
}

// TestSkipRefusedByTheRun checks the refusals a run makes when it builds
// the branch: a model that is not a ConvNet, and images that span every
// direction at the keep asked for (the branch would be zero).
func TestSkipRefusedByTheRun(t *testing.T) {
	t.Parallel()
	noise, err := datasets.NoiseImages(200, 64, 3, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	opaque := setupOf(skipImages(200, 3, 3)).WithModel("opaque", func(p nn.PriorConfig) (nn.Model, error) {
		m, err := nn.ConvNet{Height: skipSide, Width: skipSide, Channels: 1, Conv: []int{3}, Kernel: 3, Dense: []int{6}, Classes: 3, Prior: p}.Model("opaque")
		m.Conv = nil // as an ONNX network's: no ConvNet to rebuild
		return m, err
	})
	for _, tc := range []struct {
		name  string
		s     runspec.Setup
		model string
		keep  float64
		want  string
	}{
		{"a model that is not a ConvNet", opaque, "opaque", 0.999, "is not a ConvNet"},
		{"noise images spanning every direction", skipSetup(noise, "test-skip-noise"), "test-skip-noise", 0.9999, "span all 64 directions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := skipConfig(tc.model)
			cfg.NullSpaceSkip = tc.keep
			if _, err := New(filepath.Join(t.TempDir(), "run"), cfg, false, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
