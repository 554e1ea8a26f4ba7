package plots

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptsghmc/ptsghmc/bench"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/experiments"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// report returns an evaluation of two PT chains and a baseline built by
// hand, with every part Evaluation draws.
func report() *evaluate.Report {
	auc := 0.05
	rel := evaluate.Reliab{Count: []int{0, 3, 5}, Conf: []float64{0, 0.5, 0.9}, Acc: []float64{0, 0.4, 0.95}}
	rep := &evaluate.Report{Runs: []string{"runs/a/chain-1", "runs/a/chain-2"}, Reliab: rel, BaselineReliab: &rel,
		Ensemble: evaluate.Metrics{ECE: 0.02}, Baseline: &evaluate.Metrics{ECE: 0.04},
		BaselineInfo: &evaluate.PredictorInfo{Sampler: "sgd", Networks: 2},
		Curve:        []evaluate.CurvePt{{Samples: 1, Accuracy: 0.8, NLL: 0.6}, {Samples: 2, Accuracy: 0.85, NLL: 0.5}},
		HeldOut:      [][]float64{{-0.6, -0.5, -0.45}, {-0.7, -0.55, -0.5}}}
	for c, dir := range rep.Runs {
		tr := evaluate.RunTraces{Dir: dir}
		for s := 1; s <= 4; s++ {
			tr.Lines = append(tr.Lines, rundir.MetricsLine{Step: 100 * s, ValLogLik: -1 / float64(s+c), SwapRate: []float64{0.3, 0.2},
				Walker: []int{(s + c) % 3, (s + c + 1) % 3, (s + c + 2) % 3}})
		}
		rep.Traces = append(rep.Traces, tr)
		rep.Tempering = append(rep.Tempering, &diagnose.Tempering{Run: dir, Temps: []float64{1, 1.2, 1.5}, LocalBarrier: []float64{0.5, 0.6, 0.7}, Barrier: 1.1})
	}
	for _, sc := range evaluate.ScoreNames {
		for _, p := range []string{evaluate.PredEnsemble, evaluate.PredSingle, evaluate.PredBaseline} {
			rep.Selective = append(rep.Selective, evaluate.SelectiveResult{Score: sc, Predictor: p, AURC: &auc,
				Curve: evaluate.RiskCoverage{Coverage: []float64{0.5, 1}, Risk: []float64{0.02, 0.1}}})
		}
	}
	for _, level := range []float64{0, 30, 60} {
		for _, p := range []string{evaluate.PredEnsemble, evaluate.PredBaseline} {
			rep.Shift = append(rep.Shift, evaluate.ShiftResult{Kind: evaluate.ShiftRotate, Level: level, Predictor: p, Accuracy: 0.9 - level/100, NLL: 0.3 + level/50})
		}
	}
	return rep
}

// aspect decodes a PNG and returns its width over its height.
func aspect(t *testing.T, b []byte) float64 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	r := img.Bounds()
	return float64(r.Dx()) / float64(r.Dy())
}

// TestEvaluation checks the figures of an evaluation: each is there, in
// order, decodes as a PNG of its panels (5 by 4 inches each; the
// reliability diagram 5 by 5), and drawing twice gives the same bytes
// (the byte-compared outputs of eval --plot and --report rely on it). A
// report without selective prediction, shift or tempering has only the
// first four.
func TestEvaluation(t *testing.T) {
	figs, err := Evaluation(report())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name   string
		aspect float64
	}{{"reliability.png", 1}, {"samples.png", 2.5}, {"traces.png", 2.5}, {"heldout.png", 1.25},
		{"risk-coverage.png", 3 * 1.25}, {"shift-rotate.png", 4 * 1.25}, {"tempering.png", 2.5}}
	if len(figs) != len(want) {
		t.Fatalf("%d figures, want %d", len(figs), len(want))
	}
	for i, w := range want {
		if figs[i].Name != w.name || figs[i].Title == "" {
			t.Errorf("figure %d: %q (%q), want %s", i, figs[i].Name, figs[i].Title, w.name)
		}
		if a := aspect(t, figs[i].PNG); math.Abs(a-w.aspect) > 0.01 {
			t.Errorf("%s: aspect %.3f, want %.3f", w.name, a, w.aspect)
		}
	}
	again, err := Evaluation(report())
	if err != nil {
		t.Fatal(err)
	}
	for i := range figs {
		if !bytes.Equal(figs[i].PNG, again[i].PNG) {
			t.Errorf("%s: drawn twice, different bytes", figs[i].Name)
		}
	}
	bare := report()
	bare.Selective, bare.Shift, bare.Tempering, bare.BaselineReliab = nil, nil, nil, nil
	if figs, err := Evaluation(bare); err != nil || len(figs) != 4 {
		t.Errorf("a bare report: %d figures, %v; want 4", len(figs), err)
	}
}

// TestWriteEvaluation checks that the figures are written as files into a
// directory it makes.
func TestWriteEvaluation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots", "new")
	if err := WriteEvaluation(dir, report()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"reliability.png", "samples.png", "traces.png", "heldout.png", "risk-coverage.png", "shift-rotate.png", "tempering.png"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		aspect(t, b)
	}
}

// TestMixture draws the mixture experiment's figure for a 1-d target (a
// histogram) and a 2-d one (a heat map): two panels each.
func TestMixture(t *testing.T) {
	for _, target := range []string{"gauss1d4", "gauss2d5"} {
		m, err := sampler.Target(target)
		if err != nil {
			t.Fatal(err)
		}
		xs := [][]float64{{-1, 1}, {0.5, 2}, {3, -4}, {1, 1}}
		for i := range xs {
			xs[i] = xs[i][:m.Dim()]
		}
		path := filepath.Join(t.TempDir(), "mix.png")
		sum := experiments.MixtureSummary{Target: target, Sampler: "sgnht"}
		if err := Mixture(path, m, xs, []float64{-1, 0.5, 3, 1}, 5, sum); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if a := aspect(t, b); math.Abs(a-2.5) > 0.01 {
			t.Errorf("%s: aspect %.3f, want 2.5", target, a)
		}
	}
}

// TestSweepAndScaling draws a tempering sweep's and a bench sweep's
// figures (two panels each), and refuses a scaling plot with no results.
func TestSweepAndScaling(t *testing.T) {
	sw := &diagnose.PTSweep{Target: "gauss1d4", Budget: 1000, Replicas: 4, TMax: 10}
	for _, d := range []int{10, 100} {
		row := diagnose.PTSweepRow{Dim: d, Lambda: []float64{1.5}, LambdaTuned: []float64{1.2}, Error: map[string][][]float64{}}
		for _, m := range diagnose.PTSweepMethods {
			row.Error[m] = [][]float64{{0.1, 0.05}}
		}
		sw.Rows = append(sw.Rows, row)
	}
	sw.Fractions = []float64{0.5, 1}
	dir := t.TempDir()
	if err := Sweep(filepath.Join(dir, "sweep.png"), sw); err != nil {
		t.Fatal(err)
	}
	rs := []bench.Result{{Replicas: 1, Batch: 128, StepsPerSec: 10}, {Replicas: 2, Batch: 128, StepsPerSec: 6}}
	bs := []bench.Result{{Replicas: 10, Batch: 32, StepsPerSec: 3}, {Replicas: 10, Batch: 128, StepsPerSec: 2}}
	if err := Scaling(filepath.Join(dir, "scaling.png"), rs, bs); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sweep.png", "scaling.png"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if a := aspect(t, b); math.Abs(a-2.5) > 0.01 {
			t.Errorf("%s: aspect %.3f, want 2.5", n, a)
		}
	}
	if err := Scaling(filepath.Join(dir, "none.png"), nil, bs); err == nil {
		t.Error("a scaling plot of no results by replicas: no error")
	}
}
