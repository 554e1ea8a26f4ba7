package progress

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ptsghmc/ptsghmc/train"
	"github.com/schollz/progressbar/v3"
)

// joinFloats formats each of xs with format and joins them with sep.
func joinFloats(format, sep string, xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, sep)
}

// Train prints ptsghmc train's progress on standard error: a progress
// bar on a terminal, and a plain line every 5% of the run (and at least
// every 30 s) otherwise, with rung 1's minibatch log-likelihood, the swap
// rates and the samples kept; and the health warnings, at once.
type Train struct {
	w          io.Writer
	bar        *progressbar.ProgressBar
	start      time.Time
	first      int
	target     int
	lastLine   time.Time
	lastStep   int
	quiet      bool
	lastStatus train.Status
}

// NewTrain returns train's progress on w from done steps of target
// (quiet: the warnings alone).
func NewTrain(w io.Writer, done, target int, quiet bool) *Train {
	p := &Train{w: w, start: time.Now(), first: done, target: target, lastLine: time.Now(), quiet: quiet}
	if !quiet && isTerminal(w) {
		p.bar = newBar(w, target, "steps")
		p.bar.Set(done)
	}
	return p
}

// Last returns the status last reported.
func (p *Train) Last() train.Status { return p.lastStatus }

// describe is s's figures, for a line or the bar.
func (p *Train) describe(s train.Status) string {
	swap := ""
	if len(s.SwapRate) > 0 {
		swap = " swap " + joinFloats("%.2f", "/", s.SwapRate)
	}
	return fmt.Sprintf("loglik %.4f%s samples %d", s.LogLik, swap, s.Samples)
}

// Update reports the status after a step.
func (p *Train) Update(s train.Status) {
	p.lastStatus = s
	if s.Warning != "" {
		if p.bar != nil {
			p.bar.Clear()
		}
		fmt.Fprintf(p.w, "WARNING: %s\n", s.Warning)
	}
	if p.quiet {
		return
	}
	if p.bar != nil {
		setBar(p.bar, s.Step, p.describe(s))
		return
	}
	every := max(1, p.target/20)
	if s.Step%every == 0 || time.Since(p.lastLine) > 30*time.Second || s.Step == p.target {
		el := time.Since(p.start).Seconds()
		rate := float64(s.Step-p.first) / el
		eta := time.Duration(float64(p.target-s.Step)/rate) * time.Second
		fmt.Fprintf(p.w, "step %d/%d  %.1f steps/s  eta %s  %s\n", s.Step, p.target, rate, eta.Round(time.Second), p.describe(s))
		p.lastLine = time.Now()
	}
}

// Finish closes the bar.
func (p *Train) Finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
