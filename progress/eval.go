package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/schollz/progressbar/v3"
)

// evalLineEvery is how often eval prints a progress line when its
// standard error is not a terminal.
const evalLineEvery = 5 * time.Second

// Eval prints ptsghmc eval's progress on standard error, as Train prints
// train's: a progress bar on a terminal; otherwise a line every 5 s
// (samples scored of the total, samples and images a second, GFLOP/s of
// forward passes, ETA), then a closing line with the time and the rates.
// The tables and JSON on standard output do not change.
type Eval struct {
	w        io.Writer
	quiet    bool
	terminal bool
	bar      *progressbar.ProgressBar
	start    time.Time
	lastLine time.Time
	last     evaluate.EvalProgress
}

// NewEval returns eval's progress on w (quiet: none is printed).
func NewEval(w io.Writer, quiet bool) *Eval {
	return &Eval{w: w, quiet: quiet, start: time.Now(), lastLine: time.Now(), terminal: isTerminal(w)}
}

// rates returns samples and images scored a second and the GFLOP/s of
// their forward passes (0 when the model's count is not known), over
// elapsed seconds.
func (p *Eval) rates(s evaluate.EvalProgress, elapsed float64) (samples, images, gflops float64) {
	if elapsed <= 0 || s.Images <= 0 {
		return 0, 0, 0
	}
	samples = (float64(s.Done) + float64(s.PassImages)/float64(s.Images)) / elapsed
	images = samples * float64(s.Images)
	gflops = 2 * float64(s.MACs) * images / 1e9
	return samples, images, gflops
}

// describe is the rates and phase of s, for a line or the bar.
func (p *Eval) describe(s evaluate.EvalProgress, elapsed float64) string {
	_, images, gflops := p.rates(s, elapsed)
	d := fmt.Sprintf("%.0f images/s", images)
	if gflops > 0 {
		d += fmt.Sprintf("  %.1f GFLOP/s", gflops)
	}
	if s.Baseline {
		d += "  (baselines)"
	}
	return d
}

// Update reports one more sample scored, or images of the next one
// (evaluate.Options.Progress).
func (p *Eval) Update(s evaluate.EvalProgress) {
	p.last = s
	if p.quiet {
		return
	}
	el := time.Since(p.start).Seconds()
	if p.terminal {
		if p.bar == nil {
			total := max(s.Total, s.Done)
			if total <= 0 { // no estimate: a spinner (a bar of 0 takes no update)
				total = -1
			}
			p.bar = newBar(p.w, total, "samples")
		}
		if m := p.bar.GetMax(); m > 0 && s.Done > m { // more than estimated (a run still writing)
			p.bar.ChangeMax(s.Done)
		}
		p.bar.Describe(p.describe(s, el))
		p.bar.Set(s.Done)
		return
	}
	if time.Since(p.lastLine) < evalLineEvery {
		return
	}
	rate, _, _ := p.rates(s, el)
	total, eta := "?", "?"
	if s.Total >= s.Done && s.Total > 0 && rate > 0 {
		total = fmt.Sprint(s.Total)
		left := float64(s.Total-s.Done) - float64(s.PassImages)/float64(s.Images)
		eta = (time.Duration(max(left, 0)/rate*1e9) * time.Nanosecond).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "eval: sample %.1f/%s  %.2f samples/s  %s  eta %s\n", float64(s.Done)+float64(s.PassImages)/float64(max(s.Images, 1)), total, rate, p.describe(s, el), eta)
	p.lastLine = time.Now()
}

// Abort ends the bar's line after an error.
func (p *Eval) Abort() {
	if p.bar != nil {
		fmt.Fprintln(p.w)
	}
}

// Finish closes the bar and prints the closing line.
func (p *Eval) Finish() {
	if p.quiet || p.last.Done == 0 {
		return
	}
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
	el := time.Since(p.start)
	s := p.last
	s.Baseline = false
	fmt.Fprintf(p.w, "eval: %d samples scored on %d images each in %s: %s\n", s.Done, s.Images, el.Round(100*time.Millisecond), p.describe(s, el.Seconds()))
}
