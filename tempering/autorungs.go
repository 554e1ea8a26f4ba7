package tempering

import (
	"fmt"
	"math"
)

// MinAutoRungs is the fewest rungs RungsFor chooses: ladder adaptation needs
// an interior rung.
const MinAutoRungs = 3

// RungsFor returns the number of rungs a ladder needs for a measured global
// communication barrier lambda, with the reason in words. With a swap
// target A (a free top) every pair is to reject about r(A) =
// BarkerToMetropolisRejection(A), so lambda/r(A) pairs and one more rung;
// without one (fixed ends) about 2 Lambda rungs, the optimum of
// non-reversible PT (Syed et al. 2021; RecommendedRungs). The count is
// clamped to [MinAutoRungs, maxR].
func RungsFor(lambda, swapTarget float64, maxR int) (int, string, error) {
	if !(lambda >= 0) || math.IsInf(lambda, 0) {
		return 0, "", fmt.Errorf("rungs for a barrier of %v: the barrier must be finite and non-negative", lambda)
	}
	if maxR < MinAutoRungs {
		return 0, "", fmt.Errorf("rungs: a cap of %d is below the %d rungs an adaptive ladder needs", maxR, MinAutoRungs)
	}
	var r int
	var why string
	if swapTarget > 0 {
		rej, err := BarkerToMetropolisRejection(swapTarget)
		if err != nil {
			return 0, "", err
		}
		r = int(math.Ceil(lambda/rej)) + 1
		why = fmt.Sprintf("Lambda / r(A) + 1 = %.3g / %.3g + 1 (r(A): the rejection per pair that swap target %.2g maps to)", lambda, rej, swapTarget)
	} else {
		r = RecommendedRungs(lambda)
		why = fmt.Sprintf("about 2 Lambda = %.3g (the non-reversible optimum)", 2*lambda)
	}
	switch {
	case r > maxR:
		why += fmt.Sprintf(", capped at %d", maxR)
		r = maxR
	case r < MinAutoRungs:
		why += fmt.Sprintf(", raised to %d", MinAutoRungs)
		r = MinAutoRungs
	}
	return r, fmt.Sprintf("%d rungs for a measured barrier Lambda = %.3g: %s", r, lambda, why), nil
}

// TunedBarrier returns the global barrier measured by the last tuning round
// of st that was not spoiled by a transient (with saturated pairs measured
// by driver.PairDistance), and whether there was one: what a pilot run's tuning
// tells about the target.
func (st *PTState) TunedBarrier() (float64, bool) {
	for k := len(st.Tuning.Rounds) - 1; k >= 0; k-- {
		if r := st.Tuning.Rounds[k]; r.Spoiled == "" && r.Err == "" {
			return r.Lambda, true
		}
	}
	return 0, false
}
