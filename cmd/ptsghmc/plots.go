package main

import (
	"bytes"
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

// figure is one rendered plot: its file name and PNG bytes.
type figure struct {
	Name, Title string
	PNG         []byte
}

// writePlots writes the evaluation's PNGs into dir: reliability.png,
// samples.png (ensemble accuracy and NLL against samples), traces.png
// (swap acceptance and validation log-likelihood against steps),
// heldout.png (each chain's held-out log-likelihood per kept sample) and,
// for PT runs, tempering.png (local barrier against beta, and the index
// process).
func writePlots(dir string, rep *evaluate.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	figs, err := renderPlots(rep)
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

// renderPlots draws the figures of writePlots in memory.
func renderPlots(rep *evaluate.Report) ([]figure, error) {
	var figs []figure
	// Reliability diagram.
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Reliability (ECE %.4f)", rep.Ensemble.ECE)
	p.X.Label.Text, p.Y.Label.Text = "confidence", "accuracy"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	var pts plotter.XYs
	for b, n := range rep.Reliab.Count {
		if n > 0 {
			pts = append(pts, plotter.XY{X: rep.Reliab.Conf[b], Y: rep.Reliab.Acc[b]})
		}
	}
	diag := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}
	if rep.BaselineReliab != nil {
		var bpts plotter.XYs
		for b, n := range rep.BaselineReliab.Count {
			if n > 0 {
				bpts = append(bpts, plotter.XY{X: rep.BaselineReliab.Conf[b], Y: rep.BaselineReliab.Acc[b]})
			}
		}
		p.Title.Text = fmt.Sprintf("Reliability (ECE: ensemble %.4f, baseline %.4f)", rep.Ensemble.ECE, rep.Baseline.ECE)
		if err := plotutil.AddLinePoints(p, "ensemble", pts, baselineLabel(rep), bpts, "perfect calibration", diag); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	} else if err := plotutil.AddLinePoints(p, "ensemble", pts, "perfect calibration", diag); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	c := vgimgCanvas(5*vg.Inch, 5*vg.Inch)
	p.Draw(draw.New(c))
	b, err := pngBytes(c)
	if err != nil {
		return nil, err
	}
	title := "Reliability diagram of the ensemble"
	if rep.BaselineReliab != nil {
		title = "Reliability diagram of the ensemble and the baseline"
	}
	figs = append(figs, figure{"reliability.png", title, b})

	// Accuracy and NLL against the number of samples.
	acc, nll := plot.New(), plot.New()
	acc.Title.Text, nll.Title.Text = "Ensemble accuracy", "Ensemble NLL"
	acc.X.Label.Text, nll.X.Label.Text = "samples", "samples"
	var a, l plotter.XYs
	for _, c := range rep.Curve {
		a = append(a, plotter.XY{X: float64(c.Samples), Y: c.Accuracy})
		l = append(l, plotter.XY{X: float64(c.Samples), Y: c.NLL})
	}
	if err := plotutil.AddLinePoints(acc, "test accuracy", a); err != nil {
		return nil, err
	}
	if err := plotutil.AddLinePoints(nll, "test NLL", l); err != nil {
		return nil, err
	}
	if b, err = rowPNG(acc, nll); err != nil {
		return nil, err
	}
	figs = append(figs, figure{"samples.png", "Ensemble accuracy and NLL against the number of samples", b})

	// Traces.
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
		if err := addLine(ll, filepath.Base(tr.Dir), v, nLL); err != nil {
			return nil, err
		}
		nLL++
		for p, xy := range s {
			if err := addLine(sw, fmt.Sprintf("%s pair %d", filepath.Base(tr.Dir), p+1), xy, nSw); err != nil {
				return nil, err
			}
			nSw++
		}
	}
	if b, err = rowPNG(sw, ll); err != nil {
		return nil, err
	}
	figs = append(figs, figure{"traces.png", "Traces: swap acceptance and rung-1 validation log-likelihood against steps", b})

	// Held-out log-likelihood of each kept sample, per chain: the trace
	// R-hat and ESS are computed from.
	ho := plot.New()
	ho.Title.Text = "Held-out log-likelihood of each kept sample"
	ho.X.Label.Text, ho.Y.Label.Text = "sample", "mean test log-likelihood"
	for c, tr := range rep.HeldOut {
		xy := make(plotter.XYs, len(tr))
		for s, v := range tr {
			xy[s] = plotter.XY{X: float64(s + 1), Y: v}
		}
		if err := addLine(ho, filepath.Base(rep.Runs[c]), xy, c); err != nil {
			return nil, err
		}
	}
	if b, err = rowPNG(ho); err != nil {
		return nil, err
	}
	figs = append(figs, figure{"heldout.png", "Per-chain held-out log-likelihood traces", b})
	if len(rep.Selective) > 0 {
		if b, err = plotRiskCoverage(rep); err != nil {
			return nil, err
		}
		figs = append(figs, figure{"risk-coverage.png", "Selective prediction: risk (error rate) against coverage, refusing the most uncertain test images first by each score", b})
	}
	for _, kind := range []string{evaluate.ShiftRotate, evaluate.ShiftNoise} {
		b, err := plotShift(rep, kind)
		if err != nil {
			return nil, err
		}
		if b != nil {
			figs = append(figs, figure{"shift-" + kind + ".png", "Dataset shift (" + kind + "): accuracy, NLL, ECE and Brier against the shift", b})
		}
	}
	if len(rep.Tempering) > 0 {
		if b, err = plotTempering(rep); err != nil {
			return nil, err
		}
		figs = append(figs, figure{"tempering.png", "Tempering: local barrier and index process", b})
	}
	return figs, nil
}

// plotRiskCoverage draws one panel per uncertainty score: each
// predictor's risk against coverage.
func plotRiskCoverage(rep *evaluate.Report) ([]byte, error) {
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
			if err := addLine(p, fmt.Sprintf("%s (AURC %.4f)", r.Predictor, *r.AURC), xy, i); err != nil {
				return nil, err
			}
		}
		p.Legend.Top = true
		p.Legend.Left = true
		ps = append(ps, p)
	}
	return rowPNG(ps...)
}

// plotShift draws accuracy, NLL, ECE and Brier against the level of one
// kind of shift, a line per predictor (Ovadia et al.'s rotated-MNIST
// figure); nil when the report has no such shift.
func plotShift(rep *evaluate.Report, kind string) ([]byte, error) {
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
	figs := []struct {
		name string
		get  func(evaluate.ShiftResult) float64
	}{
		{"accuracy", func(r evaluate.ShiftResult) float64 { return r.Accuracy }},
		{"NLL", func(r evaluate.ShiftResult) float64 { return r.NLL }},
		{"ECE", func(r evaluate.ShiftResult) float64 { return r.ECE }},
		{"Brier", func(r evaluate.ShiftResult) float64 { return r.Brier }},
	}
	var ps []*plot.Plot
	for _, f := range figs {
		p := plot.New()
		p.Title.Text = f.name + " under " + kind
		p.X.Label.Text, p.Y.Label.Text = xlabel, f.name
		for i, pr := range preds {
			var xy plotter.XYs
			for _, r := range byPred[pr] {
				xy = append(xy, plotter.XY{X: r.Level, Y: f.get(r)})
			}
			if err := addLine(p, pr, xy, i); err != nil {
				return nil, err
			}
		}
		ps = append(ps, p)
	}
	return rowPNG(ps...)
}

// plotTempering draws each PT chain's local communication barrier lambda
// at its rungs against beta = 1/T, and the first PT chain's index process:
// the rung each replica occupies over the steps, from the metrics lines
// (every exchange round when --log-every divides --exchange).
func plotTempering(rep *evaluate.Report) ([]byte, error) {
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
		if err := addLine(lb, fmt.Sprintf("%s (Lambda %.3g)", filepath.Base(tp.Run), tp.Barrier), xy, i); err != nil {
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
			if err := addLine(ix, fmt.Sprintf("replica %d", w+1), xy, w); err != nil {
				return nil, err
			}
		}
	}
	return rowPNG(lb, ix)
}

// addLine adds a line in the i-th colour and dash pattern of plotutil's
// palettes (separate plotutil.AddLines calls would all get the first).
func addLine(p *plot.Plot, name string, xy plotter.XYs, i int) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// rowPNG draws plots side by side in one PNG.
func rowPNG(ps ...*plot.Plot) ([]byte, error) {
	const w, h = 5 * vg.Inch, 4 * vg.Inch
	img := vgimgCanvas(w*vg.Length(len(ps)), h)
	for i, p := range ps {
		p.Draw(subCanvas(img, vg.Length(i)*w, w, h))
	}
	return pngBytes(img)
}

func vgimgCanvas(w, h vg.Length) *vgimg.Canvas { return vgimg.New(w, h) }

func subCanvas(c *vgimg.Canvas, x0, w, h vg.Length) draw.Canvas {
	return draw.Canvas{Canvas: c, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: 0}, Max: vg.Point{X: x0 + w, Y: h}}}
}

// pngBytes encodes a canvas as PNG.
func pngBytes(c *vgimg.Canvas) ([]byte, error) {
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	return b.Bytes(), nil
}

// saveRow saves plots side by side in one PNG file.
func saveRow(path string, ps ...*plot.Plot) error {
	b, err := rowPNG(ps...)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
