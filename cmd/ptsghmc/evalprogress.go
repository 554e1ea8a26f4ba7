package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// evalLineEvery is how often eval prints a progress line when its
// standard error is not a terminal.
const evalLineEvery = 5 * time.Second

// evalProgress prints eval's progress on standard error, as train prints
// its own: a progress bar on a terminal; otherwise a line every
// evalLineEvery (samples scored of the total, samples and images a
// second, GFLOP/s of forward passes, ETA), then a closing line with the
// time and the rates. The tables and JSON on standard output do not
// change.
type evalProgress struct {
	w        io.Writer
	quiet    bool
	terminal bool
	bar      *progressbar.ProgressBar
	start    time.Time
	lastLine time.Time
	last     evaluate.EvalProgress
}

func newEvalProgress(w io.Writer, quiet bool) *evalProgress {
	p := &evalProgress{w: w, quiet: quiet, start: time.Now(), lastLine: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.terminal = true
	}
	return p
}

// rates returns samples and images scored a second and the GFLOP/s of
// their forward passes (0 when the model's count is not known), over
// elapsed seconds.
func (p *evalProgress) rates(s evaluate.EvalProgress, elapsed float64) (samples, images, gflops float64) {
	if elapsed <= 0 || s.Images <= 0 {
		return 0, 0, 0
	}
	samples = (float64(s.Done) + float64(s.PassImages)/float64(s.Images)) / elapsed
	images = samples * float64(s.Images)
	gflops = 2 * float64(s.MACs) * images / 1e9
	return samples, images, gflops
}

// describe is the rates and phase of s, for a line or the bar.
func (p *evalProgress) describe(s evaluate.EvalProgress, elapsed float64) string {
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

// update reports one more sample scored, or images of the next one.
func (p *evalProgress) update(s evaluate.EvalProgress) {
	p.last = s
	if p.quiet {
		return
	}
	el := time.Since(p.start).Seconds()
	if p.terminal {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(max(s.Total, s.Done),
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("samples"),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(200*time.Millisecond),
				progressbar.OptionSetWidth(30))
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

// finish closes the bar and prints the closing line.
func (p *evalProgress) finish() {
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
