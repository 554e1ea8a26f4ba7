package sampler

import (
	"errors"
	"fmt"
	"math"
)

// LadderAdaptation tunes a PT ladder during burn-in in rounds of doubling
// length, as Pigeons.jl does (Syed et al. 2021): round k lasts 2^k exchange
// rounds; at its end the adjacent pairs' Metropolis-equivalent rejection
// rates of that round give the communication barrier Lambda, and the next
// ladder places the rungs at equal steps of Lambda. Rounds continue while the
// next one ends by PT.BurnIn; samples kept after burn-in therefore all come
// from the final ladder.
type LadderAdaptation struct {
	// SwapTarget, when positive, frees the top temperature: the ladder
	// becomes the widest whose every adjacent pair reaches this Barker swap
	// acceptance (in (0, 0.5)). Zero keeps both ends fixed.
	SwapTarget float64
	// MaxT caps the top temperature of a free top (default 1e4).
	MaxT float64
}

// TuningState is the progress of ladder tuning: the end of the current
// round (0 once tuning is over) and every finished round.
type TuningState struct {
	NextRound int
	Rounds    []TuningRound
}

// TuningRound records one finished tuning round: its last step, the ladder
// it ran, the pairs' rejection and acceptance rates there, the barrier
// estimate, and the ladder chosen for the next round.
type TuningRound struct {
	Step       int
	Temps      []float64
	Reject     []float64 // Metropolis-equivalent, per pair
	Acceptance []float64 // the test's own, per pair
	Lambda     float64
	Next       []float64
	Err        string // why no new ladder could be placed (the round's ladder was kept)
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

// tune ends a tuning round: it estimates the barrier from the round's
// window statistics, sets the next ladder, restarts the window and
// schedules the next round (or ends tuning when it would overrun burn-in).
func (pt *PT) tune(st *PTState) error {
	s := &st.Stats
	pairs := len(s.WinProposed)
	reject := make([]float64, pairs)
	acc := make([]float64, pairs)
	for p := range reject {
		if s.WinProposed[p] == 0 {
			return fmt.Errorf("tuning round ending at step %d tried no swap of pair %d", st.Steps, p)
		}
		reject[p] = s.WindowRejection(p)
		acc[p] = s.WindowAcceptance(p)
	}
	round := TuningRound{Step: st.Steps, Temps: append([]float64(nil), st.Temps...), Reject: reject, Acceptance: acc}
	next, lambda, err := pt.Adapt.NextLadder(st.Temps, reject)
	if err != nil { // keep the ladder for the next round
		next, round.Err = append([]float64(nil), st.Temps...), err.Error()
	}
	round.Next, round.Lambda = next, lambda
	st.Tuning.Rounds = append(st.Tuning.Rounds, round)
	copy(st.Temps, next)
	s.resetWindow(st.Steps)
	k := len(st.Tuning.Rounds) + 1
	if end := st.Steps + tuningRoundSteps(k, pt.Every); end <= pt.BurnIn {
		st.Tuning.NextRound = end
	} else {
		st.Tuning.NextRound = 0
	}
	return nil
}

// NextLadder returns the ladder that equalises the barrier estimated from
// rejection rates reject (Metropolis-equivalent, per adjacent pair) on
// ladder temps, with the barrier's global value. A tiny floor on every rate
// (as in Pigeons.jl) keeps a pair that never rejected from collapsing two
// rungs onto one temperature.
func (a *LadderAdaptation) NextLadder(temps, reject []float64) ([]float64, float64, error) {
	floored := make([]float64, len(reject))
	for p, r := range reject {
		floored[p] = math.Min(math.Max(r, 1e-6), 1)
	}
	b, err := NewBarrier(temps, floored)
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
