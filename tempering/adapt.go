package tempering

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// LadderAdaptation tunes a PT ladder during burn-in in rounds of doubling
// length, as Pigeons.jl does (Syed et al. 2021): round k lasts 2^k exchange
// rounds; at its end the adjacent pairs' Metropolis-equivalent rejection
// rates of that round give the communication barrier Lambda, and the next
// ladder places the rungs at equal steps of Lambda.
//
// Three guards make the ladder after burn-in the one that was asked for:
//
//   - Stationarity: a round whose replicas were still moving (a drift
//     between its halves in a pair's rejection, or in a pair's log swap
//     ratio from the rungs' energies; RoundTrend.Stationary) is spoiled:
//     its ladder is kept and the round restarts on fresh statistics (at
//     the same length; every second spoiled round in a row doubles it).
//   - Agreement: a ladder is placed for a predicted rejection per pair
//     (with a free top, the rejection the swap target maps to; with fixed
//     ends, Lambda/(R-1)). A stationary round with at least MinTries
//     attempts per pair verifies it when every pair is within Agreement of
//     the swap target's rejection (fixed ends: when the pairs' rejections
//     spread over at most Agreement); a verified ladder is kept, and later
//     rounds only check it. Pairs that reject almost every swap are
//     measured by their mean deltaE (PairDistance), so that a ladder
//     widened on a transient narrows at once.
//   - Burn-in: rounds end by PT.BurnIn (the last one is cut to end
//     exactly there; cut below MinTries swaps per pair, it neither moves
//     nor judges the ladder), and the ladder after burn-in is fixed. A ladder that was not
//     verified by then is reported as such (TuningState.Converged false)
//     with the burn-in it would at least need.
type LadderAdaptation struct {
	// SwapTarget, when positive, frees the top temperature: the ladder
	// becomes the widest whose every adjacent pair reaches this Barker swap
	// acceptance (in (0, 0.5)). Zero keeps both ends fixed.
	SwapTarget float64
	// MaxT caps the top temperature of a free top (default 1e4).
	MaxT float64
	// Agreement is the largest difference between a pair's measured and
	// predicted Metropolis-equivalent rejection for a ladder to count as
	// verified (0: DefaultAgreement).
	Agreement float64
	// MinTries is the number of swap attempts per pair a round needs to
	// verify a ladder (0: DefaultMinTries).
	MinTries int
}

// Defaults of LadderAdaptation.
const (
	// DefaultAgreement: a rejection difference of 0.1 is a Barker
	// acceptance difference of about 0.06 near the usual targets, inside
	// the 0.1 a ladder promises.
	DefaultAgreement = 0.1
	DefaultMinTries  = 16
)

// TuningState is the progress of ladder tuning: the current round (its
// end, 0 once tuning is over, and its block statistics), the verdicts so
// far, and every finished round.
type TuningState struct {
	NextRound int
	Rounds    []TuningRound
	// Stationary counts the rounds that were not spoiled by a transient,
	// Restarts the spoiled ones, Spoils the spoiled ones in a row.
	Stationary, Restarts, Spoils int
	// Exponent is k of the current round, which lasts 2^k exchange rounds
	// (or to the end of burn-in): it grows after a stationary round (once
	// rounds hold 2 MinTries swaps per pair, only while the ladder is
	// within 2 Agreement of its target: a ladder far off moves sooner in
	// short rounds) and after every second spoiled round in a row, so that
	// a transient is waited out in short rounds while slow equilibrium
	// fluctuations are averaged over longer ones.
	Exponent int
	// Predicted is the rejection per pair the current ladder was placed for
	// (nil for the initial ladder).
	Predicted []float64
	// Converged reports that the last stationary round measured the
	// current ladder's pairs within Agreement of Predicted (and the round
	// after it, if any, was not spoiled): the ladder kept its promise.
	Converged bool
	// NeededBurnIn, once tuning is over without convergence, is the burn-in
	// the ladder would at least have needed: the end of a round that could
	// verify it (after a transient that lasted to the end of burn-in, one
	// round to measure and one to verify).
	NeededBurnIn int
	// Judged reports that tuning ended with the verdict above (runs tuned
	// before the verdict existed have none).
	Judged bool
	// Trend is the current round's block statistics.
	Trend RoundTrend
}

// TuningRound records one finished tuning round: its last step, the ladder
// it ran, the pairs' rejection and acceptance rates there, the barrier
// estimate, and the ladder chosen for the next round.
type TuningRound struct {
	Step   int
	Temps  []float64
	Reject []float64 // Metropolis-equivalent, per pair
	// Acceptance is the test's own, per pair: the mean of the attempts'
	// swap probabilities given their estimates (Rao-Blackwellised; rounds
	// tuned before it was recorded hold the fraction of attempts that
	// swapped, the same expectation with more variance).
	Acceptance []float64
	Lambda     float64
	Next       []float64
	Err        string // why no new ladder could be placed (the round's ladder was kept)
	// Start is the step the round began after; Predicted the rejection
	// per pair its ladder was placed for (nil: the initial ladder).
	Start     int
	Predicted []float64
	// Spoiled says which trend showed the replicas still moving ("" when
	// the round was stationary); a spoiled round's ladder is kept.
	Spoiled string
	// Agrees reports that every pair's rejection was within the
	// adaptation's Agreement of Predicted: the ladder was verified and kept.
	Agrees bool
	// Tries is the number of swap attempts per pair. Scale is the
	// calibration of the rejections to the Barker acceptance of the
	// stationary stretch (barkerScale; 0 when none was applied), and Flat
	// reports that the pairs' barriers were consistent with a barrier
	// flat in log T and were placed as such (flatIfConsistent).
	Tries []int
	Scale float64
	Flat  bool
}

// tuningRoundSteps returns the length in steps of tuning round k (1-based):
// 2^k exchange rounds, so every pair is tried at least 2^(k-1) times under
// the alternating scheme.
func tuningRoundSteps(k, every int) int { return (1 << k) * every }

func (a *LadderAdaptation) validate(pt *PT) error {
	if len(pt.Temps) < 3 {
		return errors.New("ladder adaptation needs at least 3 rungs (with 2, there is no interior rung to place)")
	}
	if pt.Every <= 0 {
		return errors.New("ladder adaptation needs exchanges (Every > 0)")
	}
	if pt.Scheme == SchemeToFirst {
		return errors.New("ladder adaptation needs the alternate exchange scheme: the barrier adds up adjacent pairs")
	}
	if first := tuningRoundSteps(1, pt.Every); pt.BurnIn < first {
		return fmt.Errorf("ladder adaptation: burn-in of %d steps is shorter than the first tuning round (%d steps = 2 exchange rounds of %d); lengthen the burn-in or exchange more often", pt.BurnIn, first, pt.Every)
	}
	if a.SwapTarget != 0 {
		if _, err := BarkerToMetropolisRejection(a.SwapTarget); err != nil {
			return err
		}
	}
	if a.MaxT < 0 || math.IsNaN(a.MaxT) {
		return fmt.Errorf("ladder adaptation: MaxT %v must be positive (0: 1e4)", a.MaxT)
	}
	return nil
}

func (a *LadderAdaptation) agreement() float64 {
	if a.Agreement > 0 {
		return a.Agreement
	}
	return DefaultAgreement
}

func (a *LadderAdaptation) minTries() int {
	if a.MinTries > 0 {
		return a.MinTries
	}
	return DefaultMinTries
}

// startTuning schedules the first tuning round of a new state.
func (pt *PT) startTuning(st *PTState) {
	end := tuningRoundSteps(1, pt.Every)
	st.Tuning.NextRound, st.Tuning.Exponent = end, 1
	st.Tuning.Trend = newRoundTrend(0, end, len(st.Temps))
}

// observeTuningStep adds the rungs' energies after a step to the current
// tuning round's trend statistics.
func (pt *PT) observeTuningStep(st *PTState) {
	tr := &st.Tuning.Trend
	if pt.Adapt == nil || st.Tuning.NextRound == 0 || !tr.sized(len(st.Temps)) {
		return
	}
	tr.observeStep(st.Steps, pt.betas(st), st.Rungs)
}

// observeTuningSwap adds an exchange attempt's estimated deltaE at pair p.
func (pt *PT) observeTuningSwap(st *PTState, p int, deltaE float64) {
	tr := &st.Tuning.Trend
	if pt.Adapt == nil || st.Tuning.NextRound == 0 || !tr.sized(len(st.Temps)) {
		return
	}
	tr.observeSwap(st.Steps, p, deltaE)
}

// betas returns the rungs' inverse temperatures (posterior temperature
// included).
func (pt *PT) betas(st *PTState) []float64 {
	b := make([]float64, len(st.Temps))
	for j := range b {
		b[j] = 1 / pt.RungTemperature(st, j)
	}
	return b
}

// predictedRejection returns the rejection per pair that a ladder placed by
// NextLadder from a barrier of global value lambda is expected to show.
func (a *LadderAdaptation) predictedRejection(pairs int, lambda float64) []float64 {
	v := lambda / float64(pairs)
	if a.SwapTarget > 0 {
		v, _ = BarkerToMetropolisRejection(a.SwapTarget)
	}
	pred := make([]float64, pairs)
	for p := range pred {
		pred[p] = v
	}
	return pred
}

// tune ends a tuning round: it tests the round for a transient (a spoiled
// round keeps its ladder and restarts), otherwise checks the measured
// rejections against the ladder's prediction (a ladder that agrees is kept)
// or places the next ladder from the round's barrier; then it restarts the
// window and schedules the next round (cut to end at burn-in; tuning is
// over at burn-in).
func (pt *PT) tune(st *PTState) error {
	s := &st.Stats
	tu := &st.Tuning
	r := len(st.Temps)
	pairs := len(s.WinProposed)
	reject, acc, err := roundRejections(st)
	if err != nil {
		return err
	}
	round := TuningRound{Step: st.Steps, Start: s.WinStart, Temps: append([]float64(nil), st.Temps...), Reject: reject,
		Acceptance: acc, Predicted: tu.Predicted}
	trended := tu.Trend.sized(r)
	if trended {
		round.Start = tu.Trend.Start
		round.Spoiled = tu.Trend.Stationary(pt.betas(st))
	}
	// A round too short to verify a ladder re-spaces the rungs between fixed
	// ends: its few swaps are not evidence enough to move a free top.
	place := pt.Adapt
	few := slices.Min(s.WinProposed) < pt.Adapt.minTries()
	if few && place.SwapTarget > 0 {
		place = &LadderAdaptation{MaxT: place.MaxT}
	}
	inc := append([]float64(nil), reject...)
	if trended {
		for p := range inc {
			inc[p] = PairDistance(reject[p], tu.Trend.meanDeltaE(p))
		}
	}
	round.Tries = append([]int(nil), s.WinProposed...)
	// measured is what the ladder's promise is checked against: the
	// rejections, calibrated to the swaps' own Barker acceptance once the
	// replicas are stationary (calibrate.go)
	measured := reject
	if round.Spoiled == "" && !few {
		round.Scale = barkerScale(append(tu.Rounds, round))
		measured = make([]float64, pairs)
		for p := range inc {
			measured[p] = reject[p]
			if reject[p] <= SaturatedRejection {
				inc[p] *= round.Scale
				measured[p] *= round.Scale
			}
		}
		inc, round.Flat = flatIfConsistent(st.Temps, inc, reject, s.WinProposed)
	}
	next, lambda, err := place.NextLadder(st.Temps, inc)
	round.Lambda = lambda
	switch {
	case few && st.Steps >= pt.BurnIn && tu.Stationary > 0:
		// a short last round: too few swaps to move or judge the ladder
		next, round.Err = append([]float64(nil), st.Temps...), fmt.Sprintf("a last round of %d swaps per pair is too short to judge the ladder", slices.Min(s.WinProposed))
	case round.Spoiled != "":
		next = append([]float64(nil), st.Temps...)
		tu.Restarts++
		tu.Spoils++
		tu.Converged = false
		if tu.Spoils%2 == 0 { // a second spoiled round in a row: try longer ones
			tu.Exponent++
		}
	case err != nil: // keep the ladder for the next round
		next, round.Err = append([]float64(nil), st.Temps...), err.Error()
		tu.Stationary++
		tu.Spoils = 0
		tu.Exponent++
		tu.Converged = false
	default:
		next = pt.judgeRound(st, &round, place, measured, lambda, next)
	}
	round.Next = next
	pt.endRound(st, round)
	return nil
}

// roundRejections returns each pair's Metropolis-equivalent rejection
// and Rao-Blackwellised swap acceptance in st's window: an error for a
// pair that tried no swap.
func roundRejections(st *PTState) (reject, acc []float64, err error) {
	s := &st.Stats
	pairs := len(s.WinProposed)
	reject = make([]float64, pairs)
	acc = make([]float64, pairs)
	for p := range reject {
		if s.WinProposed[p] == 0 {
			return nil, nil, fmt.Errorf("tuning round ending at step %d tried no swap of pair %d", st.Steps, p)
		}
		reject[p] = s.WindowRejection(p)
		acc[p] = s.WindowSwapProbability(p)
	}
	return reject, acc, nil
}

// judgeRound judges a stationary round whose next ladder, next, could be
// placed (by place, at barrier lambda): whether its measured rejections
// agree with what the ladder promised (round.Agrees; the ladder is then
// kept and tuning has converged), whether the next round is longer, and
// the rejections the next ladder promises. It returns the next ladder.
func (pt *PT) judgeRound(st *PTState, round *TuningRound, place *LadderAdaptation, measured []float64, lambda float64, next []float64) []float64 {
	s := &st.Stats
	tu := &st.Tuning
	pairs := len(s.WinProposed)
	tu.Stationary++
	tu.Spoils = 0
	want := pt.Adapt.predictedRejection(pairs, lambda)
	round.Agrees = pt.Adapt.agrees(measured, want, s.WinProposed)
	// Rounds grow once the ladder is near its target, for precision;
	// while it is far off, rounds of 2 MinTries swaps per pair (the
	// shortest whose rejections are good to about 0.06) move it sooner.
	if slices.Min(s.WinProposed) < 2*pt.Adapt.minTries() || round.Agrees || maxDeviation(measured, want) <= 2*pt.Adapt.agreement() {
		tu.Exponent++
	}
	if round.Agrees {
		tu.Converged = true
		return append([]float64(nil), st.Temps...)
	}
	tu.Converged = false
	tu.Predicted = place.predictedRejection(pairs, lambda)
	return next
}

// endRound records the tuning round that just ended (round.Next: the
// ladder of the next), moves to that ladder, restarts the window and
// schedules the next round, cut to end at burn-in; at burn-in tuning is
// over, judged, with the burn-in it would have needed to converge.
func (pt *PT) endRound(st *PTState, round TuningRound) {
	tu := &st.Tuning
	r := len(st.Temps)
	tu.Rounds = append(tu.Rounds, round)
	copy(st.Temps, round.Next)
	pt.resetWindow(st, st.Steps)
	length := tuningRoundSteps(tu.Exponent, pt.Every)
	end := min(st.Steps+length, pt.BurnIn) // the last round ends at burn-in
	if end <= st.Steps {
		end = 0
	}
	tu.NextRound = end
	if end == 0 {
		tu.Trend, tu.Judged = RoundTrend{}, true
		tu.NeededBurnIn = 0
		if !tu.Converged {
			tu.NeededBurnIn = st.Steps + length
			if round.Spoiled != "" {
				tu.NeededBurnIn = st.Steps + 2*length
			}
		}
		return
	}
	tu.Trend = newRoundTrend(st.Steps, end, r)
}

// agrees reports whether a stationary round's measured rejections verify
// its ladder: every pair tried at least MinTries times, and within
// Agreement of what the ladder promises, want, with a free top (the swap
// target's rejection); with fixed ends, whose promise is pairs alike, the
// rejections spread over at most Agreement.
func (a *LadderAdaptation) agrees(reject, want []float64, tries []int) bool {
	for p := range reject {
		if tries[p] < a.minTries() {
			return false
		}
	}
	if a.SwapTarget > 0 {
		return maxDeviation(reject, want) <= a.agreement()
	}
	return slices.Max(reject)-slices.Min(reject) <= a.agreement()
}

// maxDeviation returns the largest |reject[p] - want[p]|.
func maxDeviation(reject, want []float64) float64 {
	d := 0.0
	for p := range reject {
		d = math.Max(d, math.Abs(reject[p]-want[p]))
	}
	return d
}

// NextLadder returns the ladder that equalises the barrier estimated from
// rejection rates reject (Metropolis-equivalent, per adjacent pair; or
// PairDistance's desaturated increments, which may exceed 1) on ladder
// temps, with the barrier's global value. A tiny floor on every rate (as in
// Pigeons.jl) keeps a pair that never rejected from collapsing two rungs
// onto one temperature.
func (a *LadderAdaptation) NextLadder(temps, reject []float64) ([]float64, float64, error) {
	floored := make([]float64, len(reject))
	for p, r := range reject {
		floored[p] = math.Max(r, 1e-6)
	}
	b, err := newBarrier(temps, floored, math.Inf(1))
	if err != nil {
		return nil, 0, err
	}
	var next []float64
	if a.SwapTarget > 0 {
		rej, err := BarkerToMetropolisRejection(a.SwapTarget)
		if err != nil {
			return nil, 0, err
		}
		maxT := a.MaxT
		if maxT == 0 {
			maxT = 1e4
		}
		next, err = b.FreeTopLadder(len(temps), rej, maxT)
		if err != nil {
			return nil, 0, err
		}
	} else if next, err = b.EqualBarrierLadder(len(temps)); err != nil {
		return nil, 0, err
	}
	return next, b.Global(), nil
}
