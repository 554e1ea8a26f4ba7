package diagnose

import (
	"fmt"
	"strings"
)

// String describes what the ladder did, as train and eval print it: the
// ladder, the swap acceptance per pair, the barrier and the round trips;
// the tuning's verdict (TuningVerdict) once it is over; and in words what
// to change when PT does not pay for itself. Each line is indented by two
// spaces and ends in a newline.
func (tp *Tempering) String() string {
	var b strings.Builder
	when := "after burn-in"
	if !tp.AfterBurnIn {
		when = "in the last tuning round (burn-in not over)"
	}
	tuned := ""
	if tp.TuningRounds > 0 {
		tuned = fmt.Sprintf(", adapted in %d tuning rounds", tp.TuningRounds)
	}
	fmt.Fprintf(&b, "  tempering %s: ladder T = %s%s\n", when, formatFloats("%.4g", ", ", tp.Temps), tuned)
	from := "mean swap probability"
	if tp.SwapFrom != "probabilities" {
		from = "0/1 " + tp.SwapFrom
	}
	fmt.Fprintf(&b, "  swap acceptance per pair %s (%s; fraction swapped %s); barrier Lambda %.3g (local %s); recommended rungs %d; round trips %d in %d steps (%.2f per 1,000)\n",
		formatFloats("%.2f", "/", tp.SwapAcceptance), from, formatFloats("%.2f", "/", tp.SwapOutcomes), tp.Barrier, formatFloats("%.3g", "/", tp.LocalBarrier), tp.RecommendedRungs, tp.RoundTrips, tp.WindowSteps, tp.RoundTripsPer1k)
	if tp.TuningOver {
		fmt.Fprintf(&b, "  %s\n", tp.TuningVerdict())
	}
	if tp.Verdict != "" && tp.PTFits {
		fmt.Fprintf(&b, "  is PT the right tool? %s\n", tp.Verdict)
	}
	if tp.Advice != "" {
		fmt.Fprintf(&b, "  WARNING: %s\n", tp.Advice)
	}
	return b.String()
}

// TuningVerdict says whether the adaptive ladder's tuning converged by the
// end of burn-in: the rejection per pair it was placed for against the one
// measured since.
func (tp *Tempering) TuningVerdict() string {
	pred, meas := formatFloats("%.2f", "/", tp.Predicted), formatFloats("%.2f", "/", tp.Rejection)
	restarts := ""
	if tp.TuningRestarts > 0 {
		restarts = fmt.Sprintf(" (%d rounds restarted: the replicas were still moving)", tp.TuningRestarts)
	}
	if tp.TuningConverged {
		return fmt.Sprintf("ladder tuning converged by burn-in%s: rejection per pair placed for %s, measured since %s", restarts, pred, meas)
	}
	return fmt.Sprintf("ladder tuning did NOT converge by burn-in%s: its last round did not verify the ladder (placed for rejection %s per pair; measured since %s); it would need --burnin %d at least", restarts, pred, meas, tp.NeededBurnIn)
}

// formatFloats formats each of xs with format and joins them with sep.
func formatFloats(format, sep string, xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, sep)
}
