package driver

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// tuningRoundSteps returns the length in steps of tuning round k (1-based):
// 2^k exchange rounds, so every pair is tried at least 2^(k-1) times under
// the alternating scheme.
func tuningRoundSteps(k, every int) int { return (1 << k) * every }

func (lt *LadderTuning) validate(d *Driver) error {
	pt, a := d.PT, lt.Adapt
	if len(pt.Temps) < 3 {
		return errors.New("ladder adaptation needs at least 3 rungs (with 2, there is no interior rung to place)")
	}
	if d.PT.Every <= 0 {
		return errors.New("ladder adaptation needs exchanges (Every > 0)")
	}
	if pt.Scheme == tempering.SchemeToFirst {
		return errors.New("ladder adaptation needs the alternate exchange scheme: the barrier adds up adjacent pairs")
	}
	if first := tuningRoundSteps(1, d.PT.Every); d.BurnIn < first {
		return fmt.Errorf("ladder adaptation: burn-in of %d steps is shorter than the first tuning round (%d steps = 2 exchange rounds of %d); lengthen the burn-in or exchange more often", d.BurnIn, first, d.PT.Every)
	}
	if a.SwapTarget != 0 {
		if _, err := tempering.BarkerToMetropolisRejection(a.SwapTarget); err != nil {
			return err
		}
	}
	if a.MaxT < 0 || math.IsNaN(a.MaxT) {
		return fmt.Errorf("ladder adaptation: MaxT %v must be positive (0: 1e4)", a.MaxT)
	}
	return nil
}

func agreement(a *tempering.LadderAdaptation) float64 {
	if a.Agreement > 0 {
		return a.Agreement
	}
	return tempering.DefaultAgreement
}

func minTries(a *tempering.LadderAdaptation) int {
	if a.MinTries > 0 {
		return a.MinTries
	}
	return tempering.DefaultMinTries
}

// startTuning schedules the first tuning round of a new state.
func (lt *LadderTuning) Start(d *Driver, st *tempering.PTState) {
	end := tuningRoundSteps(1, d.PT.Every)
	st.Tuning.NextRound, st.Tuning.Exponent = end, 1
	st.Tuning.Trend = newRoundTrend(0, end, len(st.Temps))
}

// observeTuningStep adds the rungs' energies after a step to the current
// tuning round's trend statistics.
func (lt *LadderTuning) observeStep(st *tempering.PTState, t0 float64) {
	tr := &st.Tuning.Trend
	if st.Tuning.NextRound == 0 || !sized(tr, len(st.Temps)) {
		return
	}
	observeStep(tr, st.Steps, betas(st, t0), st.Rungs)
}

// observeTuningSwap adds an exchange attempt's estimated deltaE at pair p.
func (lt *LadderTuning) observeSwap(st *tempering.PTState, p int, deltaE float64) {
	tr := &st.Tuning.Trend
	if st.Tuning.NextRound == 0 || !sized(tr, len(st.Temps)) {
		return
	}
	observeSwap(tr, st.Steps, p, deltaE)
}

// betas returns the rungs' inverse temperatures (posterior temperature
// included).
func betas(st *tempering.PTState, t0 float64) []float64 {
	b := make([]float64, len(st.Temps))
	for j := range b {
		b[j] = 1 / tempering.TemperedRung(t0, st.Temps[j])
	}
	return b
}

// predictedRejection returns the rejection per pair that a ladder placed by
// NextLadder from a barrier of global value lambda is expected to show.
func predictedRejection(a *tempering.LadderAdaptation, pairs int, lambda float64) []float64 {
	v := lambda / float64(pairs)
	if a.SwapTarget > 0 {
		v, _ = tempering.BarkerToMetropolisRejection(a.SwapTarget)
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
func (lt *LadderTuning) tune(d *Driver, st *tempering.PTState, t0 float64) error {
	s := &st.Stats
	tu := &st.Tuning
	r := len(st.Temps)
	pairs := len(s.WinProposed)
	reject, acc, err := roundRejections(st)
	if err != nil {
		return err
	}
	round := tempering.TuningRound{Step: st.Steps, Start: s.WinStart, Temps: append([]float64(nil), st.Temps...), Reject: reject,
		Acceptance: acc, Predicted: tu.Predicted}
	trended := sized(&tu.Trend, r)
	if trended {
		round.Start = tu.Trend.Start
		round.Spoiled = stationary(&tu.Trend, betas(st, t0))
	}
	// A round too short to verify a ladder re-spaces the rungs between fixed
	// ends: its few swaps are not evidence enough to move a free top.
	place := lt.Adapt
	few := slices.Min(s.WinProposed) < minTries(lt.Adapt)
	if few && place.SwapTarget > 0 {
		place = &tempering.LadderAdaptation{MaxT: place.MaxT}
	}
	inc := append([]float64(nil), reject...)
	if trended {
		for p := range inc {
			inc[p] = PairDistance(reject[p], meanDeltaE(&tu.Trend, p))
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
	case few && st.Steps >= d.BurnIn && tu.Stationary > 0:
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
		next = lt.judgeRound(st, &round, place, measured, lambda, next)
	}
	round.Next = next
	lt.endRound(d, st, round)
	return nil
}

// roundRejections returns each pair's Metropolis-equivalent rejection
// and Rao-Blackwellised swap acceptance in st's window: an error for a
// pair that tried no swap.
func roundRejections(st *tempering.PTState) (reject, acc []float64, err error) {
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
func (lt *LadderTuning) judgeRound(st *tempering.PTState, round *tempering.TuningRound, place *tempering.LadderAdaptation, measured []float64, lambda float64, next []float64) []float64 {
	s := &st.Stats
	tu := &st.Tuning
	pairs := len(s.WinProposed)
	tu.Stationary++
	tu.Spoils = 0
	want := predictedRejection(lt.Adapt, pairs, lambda)
	round.Agrees = agrees(lt.Adapt, measured, want, s.WinProposed)
	// Rounds grow once the ladder is near its target, for precision;
	// while it is far off, rounds of 2 MinTries swaps per pair (the
	// shortest whose rejections are good to about 0.06) move it sooner.
	if slices.Min(s.WinProposed) < 2*minTries(lt.Adapt) || round.Agrees || maxDeviation(measured, want) <= 2*agreement(lt.Adapt) {
		tu.Exponent++
	}
	if round.Agrees {
		tu.Converged = true
		return append([]float64(nil), st.Temps...)
	}
	tu.Converged = false
	tu.Predicted = predictedRejection(place, pairs, lambda)
	return next
}

// endRound records the tuning round that just ended (round.Next: the
// ladder of the next), moves to that ladder, restarts the window and
// schedules the next round, cut to end at burn-in; at burn-in tuning is
// over, judged, with the burn-in it would have needed to converge.
func (lt *LadderTuning) endRound(d *Driver, st *tempering.PTState, round tempering.TuningRound) {
	tu := &st.Tuning
	r := len(st.Temps)
	tu.Rounds = append(tu.Rounds, round)
	copy(st.Temps, round.Next)
	d.PT.ResetWindow(st, st.Steps)
	length := tuningRoundSteps(tu.Exponent, d.PT.Every)
	end := min(st.Steps+length, d.BurnIn) // the last round ends at burn-in
	if end <= st.Steps {
		end = 0
	}
	tu.NextRound = end
	if end == 0 {
		tu.Trend, tu.Judged = tempering.RoundTrend{}, true
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
func agrees(a *tempering.LadderAdaptation, reject, want []float64, tries []int) bool {
	for p := range reject {
		if tries[p] < minTries(a) {
			return false
		}
	}
	if a.SwapTarget > 0 {
		return maxDeviation(reject, want) <= agreement(a)
	}
	return slices.Max(reject)-slices.Min(reject) <= agreement(a)
}

// maxDeviation returns the largest |reject[p] - want[p]|.
func maxDeviation(reject, want []float64) float64 {
	d := 0.0
	for p := range reject {
		d = math.Max(d, math.Abs(reject[p]-want[p]))
	}
	return d
}
