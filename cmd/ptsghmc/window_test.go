package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/evaluate"
	"github.com/ptsghmc/ptsghmc/rundir"
)

// TestWindowNote checks the window line of eval's text report (printReport)
// and of export (windowNote without an aside): rundir.Window.Phrase and
// the flags that set the window, nothing for the zero Window.
func TestWindowNote(t *testing.T) {
	const aside = "the dynamics reports are the whole run's"
	for _, tc := range []struct {
		win          rundir.Window
		export, eval string
	}{
		{rundir.Window{}, "", ""},
		{rundir.Window{From: 500}, "the samples taken at step 500 or later (--from-step)",
			"only the samples taken at step 500 or later (--from-step; " + aside + ")\n"},
		{rundir.Window{To: 700}, "the samples taken at step 700 or earlier (--to-step)",
			"only the samples taken at step 700 or earlier (--to-step; " + aside + ")\n"},
		{rundir.Window{From: 4000, To: 8000}, "the samples taken from step 4000 to step 8000 (--from-step, --to-step)",
			"only the samples taken from step 4000 to step 8000 (--from-step, --to-step; " + aside + ")\n"},
		{rundir.Window{Thin: 7}, "the samples kept every 7th of each chain (--thin)",
			"only the samples kept every 7th of each chain (--thin; " + aside + ")\n"},
		{rundir.Window{From: 500, Thin: 2}, "the samples taken at step 500 or later, every 2nd of each chain (--from-step, --thin)",
			"only the samples taken at step 500 or later, every 2nd of each chain (--from-step, --thin; " + aside + ")\n"},
	} {
		if got := windowNote(tc.win, ""); got != tc.export {
			t.Errorf("windowNote(%+v) = %q, want %q", tc.win, got, tc.export)
		}
		var b bytes.Buffer
		printReport(&b, &evaluate.Report{Runs: []string{"runs/a"}, TestCount: 10, Window: tc.win})
		got := ""
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.Contains(line, "only the samples") {
				got += line + "\n"
			}
		}
		if got != tc.eval {
			t.Errorf("eval's report with window %+v: window line %q, want %q\n%s", tc.win, got, tc.eval, b.String())
		}
	}
}
