package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// windowFlags are --from-step, --to-step and --thin, which of a run's
// samples eval, predict, serve and export read: win's From, To and Thin.
type windowFlags struct{ win rundir.Window }

// register defines the three flags on fs.
func (w *windowFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&w.win.From, "from-step", 0, "use only the samples taken at this step or later (a longer burn-in chosen after the run; 0: all samples)")
	fs.IntVar(&w.win.To, "to-step", 0, "use only the samples taken at this step or earlier: the run read as if it had stopped there, so one long run gives every shorter budget's figures (0: all samples)")
	fs.IntVar(&w.win.Thin, "thin", 0, "use every k-th of each chain's samples (in the --from-step/--to-step window, starting with its first): a posterior of k times fewer samples, scored k times faster (0 or 1: every sample)")
}

// window returns the flags' window, or an error naming command cmd when
// no step is in it.
func (w windowFlags) window(cmd string) (rundir.Window, error) {
	if w.win.Thin < 0 {
		return w.win, fmt.Errorf("%s: --thin %d: want 0 or 1 (every sample) or k > 1 (every k-th sample of each chain)", cmd, w.win.Thin)
	}
	if w.win.Check() != nil {
		return w.win, fmt.Errorf("%s: --from-step %d --to-step %d: want --from-step >= 0 and --to-step 0 (all samples) or a step >= --from-step", cmd, w.win.From, w.win.To)
	}
	return w.win, nil
}

// windowNote is the line eval and export print about the samples win
// keeps: "the samples " + win.Phrase() and, in parentheses, the flags that
// set it followed by aside (when not empty); "" for the zero Window.
func windowNote(win rundir.Window, aside string) string {
	phrase := win.Phrase()
	if phrase == "" {
		return ""
	}
	var flags []string
	if win.From > 0 {
		flags = append(flags, "--from-step")
	}
	if win.To > 0 {
		flags = append(flags, "--to-step")
	}
	if win.Thin > 1 {
		flags = append(flags, "--thin")
	}
	if aside != "" {
		aside = "; " + aside
	}
	return fmt.Sprintf("the samples %s (%s%s)", phrase, strings.Join(flags, ", "), aside)
}
