package tempering

import "math"

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
//     measured by their mean deltaE (driver.PairDistance), so that a ladder
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

// NextLadder returns the ladder that equalises the barrier estimated from
// rejection rates reject (Metropolis-equivalent, per adjacent pair; or
// driver.PairDistance's desaturated increments, which may exceed 1) on ladder
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

// TrendBlocks is the number of equal blocks of steps a tuning round is cut
// into to test it for a trend: the first half of the blocks against the
// second.
const TrendBlocks = 8

// RoundTrend holds a tuning round's block statistics, from which
// Stationary decides whether the replicas were in equilibrium during the
// round. Index [p*TrendBlocks + b] is pair p (or rung p), block b.
type RoundTrend struct {
	Start, End int // the round's first step (exclusive) and last step
	// DSum, DCount: per pair, the log swap ratio (1/T_p - 1/T_{p+1})
	// (U_p - U_{p+1}) of the rungs' energy estimates after every step.
	DSum   []float64
	DCount []int
	DSq    []float64 // per pair
	// RSum, RCount: per pair, the exchange attempts' Metropolis-equivalent
	// rejection; RSq sums their squares (per pair, not per block).
	RSum   []float64
	RCount []int
	RSq    []float64
	// XSum: per pair, the sum of the attempts' estimated deltaE.
	XSum []float64
}
