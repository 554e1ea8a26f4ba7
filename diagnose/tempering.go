package diagnose

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Tempering is what a PT run's ladder did in its window: after burn-in
// (during burn-in, in the current tuning round). Pigeons.jl reports the same
// figures (Syed et al. 2021): the global communication barrier Lambda, the
// local barrier along the ladder, the swap acceptance per pair and the round
// trips, and from them the number of rungs the target needs.
type Tempering struct {
	Run            string    `json:"run,omitempty"`   // the run directory, in eval reports
	Temps          []float64 `json:"temps"`           // the ladder in use
	SwapAcceptance []float64 `json:"swap_acceptance"` // per adjacent pair in the window, the mean of the attempts' swap probabilities (Rao-Blackwellised; see SwapFrom)
	SwapOutcomes   []float64 `json:"swap_outcomes"`   // per pair in the window, the fraction of attempts that swapped (0/1 outcomes)
	SwapsAccepted  []int     `json:"swaps_accepted"`  // per pair in the window, swaps done
	SwapsProposed  []int     `json:"swaps_proposed"`  // per pair in the window, swaps attempted
	// SwapFrom says what SwapAcceptance averages: "probabilities" (each
	// attempt's swap probability given its estimate of deltaE), or, for a
	// window that began before a resume from a checkpoint written before
	// probabilities were recorded, "outcomes before step N" (its attempts
	// up to step N count by their 0/1 outcome).
	SwapFrom         string    `json:"swap_acceptance_from"`
	Rejection        []float64 `json:"rejection"`                  // per pair, Metropolis-equivalent rejection 1 - min(1, exp(deltaE)) in the window
	Barrier          float64   `json:"barrier"`                    // Lambda: the sum of the pairs' rejections
	LocalBarrier     []float64 `json:"local_barrier"`              // lambda(beta) at each rung, beta = 1/T
	RecommendedRungs int       `json:"recommended_rungs"`          // about 2 Lambda (non-reversible PT)
	RoundTrips       int       `json:"round_trips"`                // in the window
	RoundTripsPer1k  float64   `json:"round_trips_per_1000_steps"` // in the window
	WindowSteps      int       `json:"window_steps"`               // steps in the window
	AfterBurnIn      bool      `json:"after_burnin"`               // the window is the sampling phase
	TuningRounds     int       `json:"tuning_rounds"`              // ladder tuning rounds done
	Complete         bool      `json:"complete"`                   // every pair was tried in the window (else no barrier estimate)
	Every            int       `json:"exchange_every"`             // steps between exchange rounds
	Communicates     bool      `json:"communicates"`               // swaps accepted at every pair, and 2 Lambda <= rungs
	// Ladder tuning's verdict, once it is over (adaptive ladders): whether
	// the last round verified the ladder (its pairs' rejection agreed with
	// the prediction), the rejection per pair the ladder was placed for,
	// the rounds restarted because the replicas were still moving, and the
	// burn-in an unverified ladder would at least have needed.
	TuningOver      bool      `json:"tuning_over,omitempty"`
	TuningConverged bool      `json:"tuning_converged,omitempty"`
	Predicted       []float64 `json:"predicted_rejection,omitempty"`
	TuningRestarts  int       `json:"tuning_restarts,omitempty"`
	NeededBurnIn    int       `json:"needed_burnin,omitempty"`
	Advice          string    `json:"advice,omitempty"` // what to do when it does not communicate
	// Verdict says, from the measured barrier per pair and the equal-cost
	// sweep of docs/tempering.md (MeasuredPTSweep), whether PT is the right
	// tool for this target and what to run instead when it is not; PTFits
	// is its yes (no: Advice ends with the verdict).
	Verdict string `json:"verdict,omitempty"`
	PTFits  bool   `json:"pt_fits,omitempty"`
}

// MinSwapAcceptance is the pair acceptance below which Advice suggests a
// narrower ladder.
const MinSwapAcceptance = 0.2

// TemperingOf computes the tempering figures of a PT state (nil for a
// single chain, or for the first-rung exchange scheme, whose pairs are not
// adjacent): its window's figures (tempering.Window) and, from them and
// from cfg's burn-in and exchange interval, the verdict and the advice.
func TemperingOf(st *tempering.PTState, cfg runspec.Config) *Tempering {
	w := tempering.Window(st, tempering.Scheme(cfg.Scheme))
	if w == nil {
		return nil
	}
	t := &Tempering{Temps: w.Temps, SwapAcceptance: w.SwapAcceptance, SwapOutcomes: w.SwapOutcomes,
		SwapsAccepted: w.SwapsAccepted, SwapsProposed: w.SwapsProposed, SwapFrom: w.SwapFrom, Rejection: w.Rejection,
		Barrier: w.Barrier, LocalBarrier: w.LocalBarrier, RecommendedRungs: w.RecommendedRungs, RoundTrips: w.RoundTrips,
		WindowSteps: w.WindowSteps, AfterBurnIn: st.Steps > cfg.BurnIn, TuningRounds: len(st.Tuning.Rounds),
		Complete: w.Complete, Every: cfg.Exchange}
	if tu := st.Tuning; len(tu.Rounds) > 0 && tu.NextRound == 0 && tu.Judged {
		t.TuningOver, t.TuningConverged, t.TuningRestarts, t.NeededBurnIn = true, tu.Converged, tu.Restarts, tu.NeededBurnIn
		t.Predicted = append([]float64(nil), tu.Predicted...)
	}
	if !t.Complete && cfg.Exchange <= 0 {
		t.Advice = "exchange 0: the rungs never exchange (the swaps-off ablation): no barrier estimate, and rung 1 is a plain chain at T = 1; --exchange N > 0 exchanges every N steps"
		return t
	}
	if !t.Complete {
		t.Advice = "not every pair has been tried since the window began (the end of burn-in or of a tuning round): no barrier estimate yet"
		return t
	}
	r := len(t.Temps)
	if t.WindowSteps > 0 {
		t.RoundTripsPer1k = 1000 * float64(t.RoundTrips) / float64(t.WindowSteps)
	}
	t.Communicates = t.RecommendedRungs <= r
	for p := range t.SwapAcceptance {
		t.Communicates = t.Communicates && !t.neverSwapped(p)
	}
	if sw, err := MeasuredPTSweep(); err == nil {
		t.PTFits, t.Verdict = sw.PTVerdict(t.Barrier, r, t.Temps[r-1])
		if bnn, err := MeasuredBNNSweep(); err == nil && t.PTFits {
			t.Verdict += " " + bnn.NetworkNote(t.Barrier, r)
		}
		if t.PTFits && t.RoundTrips == 0 && t.AfterBurnIn {
			t.Verdict += fmt.Sprintf(" This run made no round trip in %d steps after burn-in, though: until it does, rung 1 has seen nothing from the top rung.", t.WindowSteps)
		}
		for p := range t.SwapAcceptance {
			if t.neverSwapped(p) && t.PTFits {
				t.Verdict = "A pair never swapped, so its share of Lambda is a floor and the verdict may be too kind: re-measure on an adaptive ladder (--ladder adaptive). " + t.Verdict
				break
			}
		}
	}
	t.Advice = t.advice()
	return t
}

// roundTripBound returns the round trips per 1,000 steps that
// non-reversible PT makes at best with this barrier and exchange interval:
// 1/(2 + 2 Lambda) per exchange round (Syed et al. 2021).
func (t *Tempering) roundTripBound() float64 {
	if t.Every <= 0 {
		return 0
	}
	return 1000 / float64(t.Every) / (2 + 2*t.Barrier)
}

// advice says in words what is wrong with a ladder that does not
// communicate, with the numbers, and what to do instead; "" when it does.
func (t *Tempering) advice() string {
	r := len(t.Temps)
	lowAcc, noSwap := false, false
	for p, a := range t.SwapAcceptance {
		lowAcc = lowAcc || a < MinSwapAcceptance
		noSwap = noSwap || t.neverSwapped(p)
	}
	tooFew := t.RecommendedRungs > r
	slow := t.RoundTripsPer1k < 0.5*t.roundTripBound()
	if !noSwap && !tooFew && !lowAcc && !slow {
		if t.Verdict != "" && !t.PTFits {
			return t.Verdict
		}
		return ""
	}
	acc := make([]string, len(t.SwapAcceptance))
	for p, a := range t.SwapAcceptance {
		acc[p] = fmt.Sprintf("%.2f", a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the ladder T = %.4g..%.4g (%d rungs) ", t.Temps[0], t.Temps[r-1], r)
	switch {
	case noSwap:
		b.WriteString("does not communicate: ")
	case tooFew:
		b.WriteString("barely communicates: ")
	default:
		b.WriteString("communicates slowly: ")
	}
	fmt.Fprintf(&b, "swap acceptance per pair %s (swaps done %s), communication barrier Lambda = %.3g, %d round trips in %d steps (%.2f per 1,000; at best %.2f with this barrier and --exchange %d). ",
		strings.Join(acc, "/"), t.outcomesText(), t.Barrier, t.RoundTrips, t.WindowSteps, t.RoundTripsPer1k, t.roundTripBound(), t.Every)
	if noSwap || tooFew {
		fmt.Fprintf(&b, "Rung 1 is then close to an independent chain that costs %d times the gradients. ", r)
	}
	fmt.Fprintf(&b, "This target needs about 2 Lambda = %d rungs for this temperature range.", t.RecommendedRungs)
	var opts []string
	if t.RecommendedRungs > r {
		opts = append(opts, fmt.Sprintf("--replicas %d", t.RecommendedRungs))
	}
	if top, ok := t.narrowerTop(); ok {
		how := fmt.Sprintf("--ladder adaptive --swap-target %.2g finds it during burn-in", 0.3)
		switch {
		case t.TuningOver && !t.TuningConverged && t.NeededBurnIn > 0:
			how = fmt.Sprintf("the ladder tuned in %d rounds during burn-in (%d restarted: the chains were still moving) was not verified by its end; it needs --burnin %d at least, and on a network whose pairs wander between rounds may not converge with more", t.TuningRounds, t.TuningRestarts, t.NeededBurnIn)
		case t.TuningRounds > 0:
			how = fmt.Sprintf("the ladder was tuned in %d rounds during burn-in, but the barrier measured since is different: the chains were still moving, so a longer --burnin tunes on a later stretch", t.TuningRounds)
		}
		opts = append(opts, fmt.Sprintf("a lower top temperature (--tmax %.4g or lower, where the measured barrier puts %d rungs near %.0f%% acceptance per pair; %s)", top, r, 100*0.3, how))
	}
	if t.Verdict != "" && !t.PTFits { // the verdict says what to run instead
		if len(opts) > 0 {
			fmt.Fprintf(&b, " To keep PT: %s.", strings.Join(opts, "; "))
		}
		b.WriteString(" " + t.Verdict)
		return b.String()
	}
	b.WriteString(" Instead: ")
	chains := fmt.Sprintf("independent chains for the same cost (--sampler sgnht --chains %d)", r)
	if len(opts) > 0 {
		chains = "or " + chains
	}
	opts = append(opts, chains)
	b.WriteString(strings.Join(opts, "; "))
	return b.String()
}

// neverSwapped reports whether pair p made no swap in the window (by its
// count; by a zero acceptance when no counts are given).
func (t *Tempering) neverSwapped(p int) bool {
	if p < len(t.SwapsAccepted) {
		return t.SwapsAccepted[p] == 0
	}
	return t.SwapAcceptance[p] == 0
}

// outcomesText returns the window's swaps done per pair as
// "accepted of proposed", separated by slashes.
func (t *Tempering) outcomesText() string {
	parts := make([]string, len(t.SwapsAccepted))
	for p, n := range t.SwapsAccepted {
		parts[p] = fmt.Sprintf("%d of %d", n, t.SwapsProposed[p])
	}
	return strings.Join(parts, "/")
}

// narrowerTop returns the top temperature at which this ladder's rungs would
// each reach a Barker acceptance of about 0.3, from the measured barrier.
func (t *Tempering) narrowerTop() (float64, bool) {
	floored := make([]float64, len(t.Rejection))
	for p, v := range t.Rejection {
		floored[p] = math.Min(math.Max(v, 1e-6), 1)
	}
	b, err := tempering.NewBarrier(t.Temps, floored)
	if err != nil {
		return 0, false
	}
	rej, _ := tempering.BarkerToMetropolisRejection(0.3)
	want := float64(len(t.Temps)-1) * rej
	if want >= b.Global() {
		return 0, false
	}
	return 1 / b.Inverse(b.Global()-want), true
}
