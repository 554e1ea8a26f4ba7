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
// The rates and the ETA are those of the phase under way, the runs'
// samples or the baselines' (a CNN posterior's samples and an MLP
// baseline's differ a hundredfold in cost); the closing line's are the
// whole pass's. The tables and JSON on standard output do not change.
type Eval struct {
	w        io.Writer
	quiet    bool
	terminal bool
	bar      *progressbar.ProgressBar
	spinner  bool // bar has no estimate: a spinner, redrawn by its own ticker
	start    time.Time
	lastLine time.Time
	last     evaluate.EvalProgress
	lastAt   time.Time // when last was reported
	// The phase under way: whether it scores the baselines, when it began
	// (the previous phase's last report) and the samples done before it.
	phaseBaseline bool
	phaseStart    time.Time
	phaseDone     int
	// flop counts the floating-point operations of the samples scored in
	// the phases before this one, for the closing line.
	flop float64
	// clock tells the time (time.Now; a test's own).
	clock func() time.Time
}

// NewEval returns eval's progress on w (quiet: none is printed).
func NewEval(w io.Writer, quiet bool) *Eval {
	return newEval(w, quiet, isTerminal(w), time.Now)
}

// newEval returns eval's progress on w told the time by clock.
func newEval(w io.Writer, quiet, terminal bool, clock func() time.Time) *Eval {
	now := clock()
	return &Eval{w: w, quiet: quiet, terminal: terminal, clock: clock, start: now, lastLine: now, lastAt: now, phaseStart: now}
}

// scored is the samples of s scored in the phase under way, the next
// one's fraction scored included.
func (p *Eval) scored(s evaluate.EvalProgress) float64 {
	return float64(s.Done-p.phaseDone) + float64(s.PassImages)/float64(max(s.Images, 1))
}

// rates returns the samples and images the phase under way scores a
// second and the GFLOP/s of their forward passes (0 when the model's count
// is not known), as of now.
func (p *Eval) rates(s evaluate.EvalProgress, now time.Time) (samples, images, gflops float64) {
	elapsed := now.Sub(p.phaseStart).Seconds()
	if elapsed <= 0 || s.Images <= 0 {
		return 0, 0, 0
	}
	samples = p.scored(s) / elapsed
	images = samples * float64(s.Images)
	gflops = 2 * float64(s.MACs) * images / 1e9
	return samples, images, gflops
}

// describe is the rates and phase of s, for a line or the bar.
func (p *Eval) describe(s evaluate.EvalProgress, now time.Time) string {
	_, images, gflops := p.rates(s, now)
	return describeRates(images, gflops, s.Baseline)
}

// describeRates prints images a second, GFLOP/s (when known) and whether
// the baselines are being scored.
func describeRates(images, gflops float64, baseline bool) string {
	d := fmt.Sprintf("%.0f images/s", images)
	if gflops > 0 {
		d += fmt.Sprintf("  %.1f GFLOP/s", gflops)
	}
	if baseline {
		d += "  (baselines)"
	}
	return d
}

// enterPhase starts the baselines' phase (or the runs', for a first
// report) when s begins it: its rates are measured from the previous
// phase's last report.
func (p *Eval) enterPhase(s evaluate.EvalProgress) {
	if s.Baseline == p.phaseBaseline {
		return
	}
	p.flop += 2 * float64(p.last.MACs) * float64(p.last.Images) * float64(p.last.Done-p.phaseDone)
	p.phaseBaseline, p.phaseStart, p.phaseDone = s.Baseline, p.lastAt, p.last.Done
}

// Update reports one more sample scored, or images of the next one
// (evaluate.Options.Progress).
func (p *Eval) Update(s evaluate.EvalProgress) {
	now := p.clock()
	p.enterPhase(s)
	p.last, p.lastAt = s, now
	if p.quiet {
		return
	}
	if p.terminal {
		if p.bar == nil {
			total := max(s.Total, s.Done)
			if total <= 0 { // no estimate: a spinner (a bar of 0 takes no update)
				total, p.spinner = -1, true
			}
			p.bar = newBar(p.w, total, "samples")
		}
		// More than estimated (a run still writing) raises the bar's end; a
		// spinner's GetMax is its width, not an estimate, and stays one.
		if m := p.bar.GetMax(); !p.spinner && s.Done > m {
			p.bar.ChangeMax(s.Done)
		}
		setBar(p.bar, s.Done, p.describe(s, now))
		return
	}
	if now.Sub(p.lastLine) < evalLineEvery {
		return
	}
	rate, _, _ := p.rates(s, now)
	total, eta := "?", "?"
	if s.Total >= s.Done && s.Total > 0 && rate > 0 {
		total = fmt.Sprint(s.Total)
		left := float64(s.Total-s.Done) - float64(s.PassImages)/float64(max(s.Images, 1))
		eta = (time.Duration(max(left, 0)/rate*1e9) * time.Nanosecond).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "eval: sample %.1f/%s  %.2f samples/s  %s  eta %s\n", float64(s.Done)+float64(s.PassImages)/float64(max(s.Images, 1)), total, rate, p.describe(s, now), eta)
	p.lastLine = now
}

// Abort ends the bar's line after an error; a spinner's ticker stops
// (it went on redrawing over the lines printed after it).
func (p *Eval) Abort() {
	if p.bar == nil {
		return
	}
	if p.spinner {
		p.bar.Finish()
	}
	fmt.Fprintln(p.w)
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
	el := p.clock().Sub(p.start)
	s := p.last
	flop := p.flop + 2*float64(s.MACs)*float64(s.Images)*float64(s.Done-p.phaseDone)
	var images, gflops float64
	if secs := el.Seconds(); secs > 0 {
		images, gflops = float64(s.Done)*float64(s.Images)/secs, flop/secs/1e9
	}
	if s.MACs == 0 {
		gflops = 0 // a phase's count not known
	}
	fmt.Fprintf(p.w, "eval: %d samples scored on %d images each in %s: %s\n", s.Done, s.Images, el.Round(100*time.Millisecond), describeRates(images, gflops, false))
}
