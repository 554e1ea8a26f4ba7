package driver

import "github.com/ptsghmc/ptsghmc/tempering"

// WindowRestart is the phase that restarts the window statistics (the
// swap figures of tempering.Window, the recorders' windows) at the end of
// burn-in, so that they describe the sampling phase.
type WindowRestart struct{ Base }

// End implements Phase.
func (WindowRestart) End(d *Driver, st *tempering.PTState, _ *StepInfo) error {
	if st.Steps == d.BurnIn {
		d.PT.ResetWindow(st, st.Steps)
	}
	return nil
}
