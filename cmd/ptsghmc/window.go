package main

import (
	"flag"
	"fmt"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// windowFlags are --from-step and --to-step, the steps whose samples eval,
// predict, serve and export read (rundir.Window).
type windowFlags struct{ from, to int }

// register defines the two flags on fs.
func (w *windowFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&w.from, "from-step", 0, "use only the samples taken at this step or later (a longer burn-in chosen after the run; 0: all samples)")
	fs.IntVar(&w.to, "to-step", 0, "use only the samples taken at this step or earlier: the run read as if it had stopped there, so one long run gives every shorter budget's figures (0: all samples)")
}

// window returns the flags' window, or an error naming command cmd when
// no step is in it.
func (w windowFlags) window(cmd string) (rundir.Window, error) {
	win := rundir.Window{From: w.from, To: w.to}
	if win.Check() != nil {
		return win, fmt.Errorf("%s: --from-step %d --to-step %d: want --from-step >= 0 and --to-step 0 (all samples) or a step >= --from-step", cmd, w.from, w.to)
	}
	return win, nil
}
