package plots

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// WriteEvaluation writes the figures of an evaluation (Evaluation) into
// dir, one PNG file each: reliability.png, samples.png, traces.png,
// heldout.png, and when the report has them risk-coverage.png,
// shift-rotate.png, shift-noise.png and tempering.png.
func WriteEvaluation(dir string, rep *evaluate.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	figs, err := Evaluation(rep)
	if err != nil {
		return err
	}
	for _, f := range figs {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.PNG, 0o644); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

// Evaluation draws the figures of an evaluation in memory: the reliability
// diagram of the ensemble (and the baseline), the ensemble's accuracy and
// NLL against the number of samples, the traces of swap acceptance and
// validation log-likelihood against steps, each chain's held-out
// log-likelihood per kept sample and, when the report has them, selective
// prediction's risk against coverage, each dataset shift's figures against
// its level, and PT's local barrier and index process.
func Evaluation(rep *evaluate.Report) ([]Figure, error) {
	var figs []Figure
	for _, f := range []func(*evaluate.Report) (Figure, error){reliability, samplesCurve, traces, heldOut} {
		fig, err := f(rep)
		if err != nil {
			return nil, err
		}
		figs = append(figs, fig)
	}
	if len(rep.Selective) > 0 {
		b, err := riskCoverage(rep)
		if err != nil {
			return nil, err
		}
		figs = append(figs, Figure{"risk-coverage.png", "Selective prediction: risk (error rate) against coverage, refusing the most uncertain test images first by each score", b})
	}
	for _, kind := range []string{evaluate.ShiftRotate, evaluate.ShiftNoise} {
		b, err := shift(rep, kind)
		if err != nil {
			return nil, err
		}
		if b != nil {
			figs = append(figs, Figure{"shift-" + kind + ".png", "Dataset shift (" + kind + "): accuracy, NLL, ECE and Brier against the shift", b})
		}
	}
	if len(rep.Tempering) > 0 {
		b, err := temperingFigure(rep)
		if err != nil {
			return nil, err
		}
		figs = append(figs, Figure{"tempering.png", "Tempering: local barrier and index process", b})
	}
	return figs, nil
}

// reliabilityPoints returns a reliability diagram's non-empty bins as
// (confidence, accuracy) points.
func reliabilityPoints(r evaluate.Reliab) plotter.XYs {
	var pts plotter.XYs
	for b, n := range r.Count {
		if n > 0 {
			pts = append(pts, plotter.XY{X: r.Conf[b], Y: r.Acc[b]})
		}
	}
	return pts
}

// reliability draws the reliability diagram of the ensemble, and of the
// baseline when there is one, against perfect calibration.
func reliability(rep *evaluate.Report) (Figure, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Reliability (ECE %.4f)", rep.Ensemble.ECE)
	p.X.Label.Text, p.Y.Label.Text = "confidence", "accuracy"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	pts := reliabilityPoints(rep.Reliab)
	diag := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}
	title := "Reliability diagram of the ensemble"
	if rep.BaselineReliab != nil {
		title = "Reliability diagram of the ensemble and the baseline"
		p.Title.Text = fmt.Sprintf("Reliability (ECE: ensemble %.4f, baseline %.4f)", rep.Ensemble.ECE, rep.Baseline.ECE)
		if err := plotutil.AddLinePoints(p, "ensemble", pts, rep.BaselineLabel(), reliabilityPoints(*rep.BaselineReliab), "perfect calibration", diag); err != nil {
			return Figure{}, fmt.Errorf("plot: %w", err)
		}
	} else if err := plotutil.AddLinePoints(p, "ensemble", pts, "perfect calibration", diag); err != nil {
		return Figure{}, fmt.Errorf("plot: %w", err)
	}
	c := vgimg.New(5*vg.Inch, 5*vg.Inch)
	p.Draw(draw.New(c))
	b, err := pngBytes(c)
	if err != nil {
		return Figure{}, err
	}
	return Figure{"reliability.png", title, b}, nil
}

// samplesCurve draws the ensemble's accuracy and NLL against the number of
// samples averaged.
func samplesCurve(rep *evaluate.Report) (Figure, error) {
	acc, nll := plot.New(), plot.New()
	acc.Title.Text, nll.Title.Text = "Ensemble accuracy", "Ensemble NLL"
	acc.X.Label.Text, nll.X.Label.Text = "samples", "samples"
	var a, l plotter.XYs
	for _, c := range rep.Curve {
		a = append(a, plotter.XY{X: float64(c.Samples), Y: c.Accuracy})
		l = append(l, plotter.XY{X: float64(c.Samples), Y: c.NLL})
	}
	if err := plotutil.AddLinePoints(acc, "test accuracy", a); err != nil {
		return Figure{}, err
	}
	if err := plotutil.AddLinePoints(nll, "test NLL", l); err != nil {
		return Figure{}, err
	}
	b, err := RowPNG(acc, nll)
	return Figure{"samples.png", "Ensemble accuracy and NLL against the number of samples", b}, err
}

// traces draws each run's cumulative swap acceptance per pair and rung-1
// validation log-likelihood against steps, from its metrics lines.
func traces(rep *evaluate.Report) (Figure, error) {
	sw, ll := plot.New(), plot.New()
	sw.Title.Text, ll.Title.Text = "Swap acceptance (cumulative)", "Rung-1 validation log-likelihood"
	sw.X.Label.Text, ll.X.Label.Text = "step", "step"
	nLL, nSw := 0, 0
	for _, tr := range rep.Traces {
		var v plotter.XYs
		var s []plotter.XYs
		for _, m := range tr.Lines {
			v = append(v, plotter.XY{X: float64(m.Step), Y: m.ValLogLik})
			for p, r := range m.SwapRate {
				for len(s) <= p {
					s = append(s, nil)
				}
				s[p] = append(s[p], plotter.XY{X: float64(m.Step), Y: r})
			}
		}
		if err := AddLine(ll, filepath.Base(tr.Dir), v, nLL); err != nil {
			return Figure{}, err
		}
		nLL++
		for p, xy := range s {
			if err := AddLine(sw, fmt.Sprintf("%s pair %d", filepath.Base(tr.Dir), p+1), xy, nSw); err != nil {
				return Figure{}, err
			}
			nSw++
		}
	}
	b, err := RowPNG(sw, ll)
	return Figure{"traces.png", "Traces: swap acceptance and rung-1 validation log-likelihood against steps", b}, err
}

// heldOut draws the held-out log-likelihood of each kept sample, per
// chain: the trace R-hat and ESS are computed from.
func heldOut(rep *evaluate.Report) (Figure, error) {
	ho := plot.New()
	ho.Title.Text = "Held-out log-likelihood of each kept sample"
	ho.X.Label.Text, ho.Y.Label.Text = "sample", "mean test log-likelihood"
	for c, tr := range rep.HeldOut {
		xy := make(plotter.XYs, len(tr))
		for s, v := range tr {
			xy[s] = plotter.XY{X: float64(s + 1), Y: v}
		}
		if err := AddLine(ho, filepath.Base(rep.Runs[c]), xy, c); err != nil {
			return Figure{}, err
		}
	}
	b, err := RowPNG(ho)
	return Figure{"heldout.png", "Per-chain held-out log-likelihood traces", b}, err
}

// riskCoverage draws one panel per uncertainty score: each predictor's
// risk against coverage.
func riskCoverage(rep *evaluate.Report) ([]byte, error) {
	var ps []*plot.Plot
	for _, sc := range evaluate.ScoreNames {
		p := plot.New()
		p.Title.Text = "refused by " + sc
		p.X.Label.Text, p.Y.Label.Text = "coverage", "risk (error rate)"
		p.X.Min, p.X.Max = 0, 1
		for _, r := range rep.Selective {
			if r.Score != sc || r.AURC == nil {
				continue
			}
			i := map[string]int{evaluate.PredEnsemble: 0, evaluate.PredSingle: 1, evaluate.PredBaseline: 2}[r.Predictor] // a predictor's colour in every panel
			xy := make(plotter.XYs, len(r.Curve.Risk))
			for j := range xy {
				xy[j] = plotter.XY{X: r.Curve.Coverage[j], Y: r.Curve.Risk[j]}
			}
			if err := AddLine(p, fmt.Sprintf("%s (AURC %.4f)", r.Predictor, *r.AURC), xy, i); err != nil {
				return nil, err
			}
		}
		p.Legend.Top = true
		p.Legend.Left = true
		ps = append(ps, p)
	}
	return RowPNG(ps...)
}

// shiftFigures are the panels of a dataset-shift figure: a metric each.
var shiftFigures = []struct {
	name string
	get  func(evaluate.ShiftResult) float64
}{
	{"accuracy", func(r evaluate.ShiftResult) float64 { return r.Accuracy }},
	{"NLL", func(r evaluate.ShiftResult) float64 { return r.NLL }},
	{"ECE", func(r evaluate.ShiftResult) float64 { return r.ECE }},
	{"Brier", func(r evaluate.ShiftResult) float64 { return r.Brier }},
}

// shift draws accuracy, NLL, ECE and Brier against the level of one kind
// of shift, a line per predictor (Ovadia et al.'s rotated-MNIST figure);
// nil when the report has no such shift.
func shift(rep *evaluate.Report, kind string) ([]byte, error) {
	byPred := map[string][]evaluate.ShiftResult{}
	var preds []string
	for _, r := range rep.Shift {
		if r.Kind != kind {
			continue
		}
		if _, ok := byPred[r.Predictor]; !ok {
			preds = append(preds, r.Predictor)
		}
		byPred[r.Predictor] = append(byPred[r.Predictor], r)
	}
	if len(preds) == 0 {
		return nil, nil
	}
	xlabel := "rotation (degrees)"
	if kind == evaluate.ShiftNoise {
		xlabel = "noise sd"
	}
	var ps []*plot.Plot
	for _, f := range shiftFigures {
		p := plot.New()
		p.Title.Text = f.name + " under " + kind
		p.X.Label.Text, p.Y.Label.Text = xlabel, f.name
		for i, pr := range preds {
			var xy plotter.XYs
			for _, r := range byPred[pr] {
				xy = append(xy, plotter.XY{X: r.Level, Y: f.get(r)})
			}
			if err := AddLine(p, pr, xy, i); err != nil {
				return nil, err
			}
		}
		ps = append(ps, p)
	}
	return RowPNG(ps...)
}

// temperingFigure draws each PT chain's local communication barrier lambda
// at its rungs against beta = 1/T, and the first PT chain's index process:
// the rung each replica occupies over the steps, from the metrics lines
// (every exchange round when --log-every divides --exchange).
func temperingFigure(rep *evaluate.Report) ([]byte, error) {
	lb, ix := plot.New(), plot.New()
	lb.Title.Text, ix.Title.Text = "Local communication barrier", "Index process (rung of each replica)"
	lb.X.Label.Text, lb.Y.Label.Text = "beta = 1/T", "lambda(beta)"
	ix.X.Label.Text, ix.Y.Label.Text = "step", "rung"
	for i, tp := range rep.Tempering {
		var xy plotter.XYs
		for j, t := range tp.Temps {
			if j < len(tp.LocalBarrier) {
				xy = append(xy, plotter.XY{X: 1 / t, Y: tp.LocalBarrier[j]})
			}
		}
		if err := AddLine(lb, fmt.Sprintf("%s (Lambda %.3g)", filepath.Base(tp.Run), tp.Barrier), xy, i); err != nil {
			return nil, err
		}
	}
	for _, tr := range rep.Traces {
		if tr.Dir != rep.Tempering[0].Run {
			continue
		}
		var paths []plotter.XYs
		for _, m := range tr.Lines {
			for rung, w := range m.Walker {
				for len(paths) <= w {
					paths = append(paths, nil)
				}
				paths[w] = append(paths[w], plotter.XY{X: float64(m.Step), Y: float64(rung + 1)})
			}
		}
		for w, xy := range paths {
			if len(xy) == 0 {
				continue
			}
			if err := AddLine(ix, fmt.Sprintf("replica %d", w+1), xy, w); err != nil {
				return nil, err
			}
		}
	}
	return RowPNG(lb, ix)
}
