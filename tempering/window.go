package tempering

import (
	"fmt"
	"math"
)

// WindowFigures are the swap statistics of a PT state's window (after
// burn-in; during burn-in, the current tuning round), the figures Pigeons.jl
// reports each round (Syed et al. 2021): the swap acceptance per adjacent
// pair, the Metropolis-equivalent rejection per pair, the global
// communication barrier Lambda and the local barrier along the ladder, and
// the round trips. A run's metrics line and diagnose's tempering report
// read them from here.
type WindowFigures struct {
	Temps []float64 // the ladder in use
	// SwapAcceptance is, per pair, the mean of the window's attempts' swap
	// probabilities (Rao-Blackwellised), or their 0/1 outcomes where
	// probabilities were not recorded (SwapFrom); 0 for a pair not tried.
	SwapAcceptance []float64
	SwapOutcomes   []float64 // per pair, the fraction of attempts that swapped (0 for a pair not tried)
	SwapsAccepted  []int     // per pair, swaps done
	SwapsProposed  []int     // per pair, swaps attempted
	// SwapFrom says what SwapAcceptance averages: "probabilities",
	// "outcomes" (a state without probability sums), or "outcomes before
	// step N" for a window that began before a resume from a checkpoint
	// written before probabilities were recorded.
	SwapFrom  string
	Rejection []float64 // per pair, the mean Metropolis-equivalent rejection 1 - min(1, exp(deltaE)) (0 for a pair not tried)
	Barrier   float64   // Lambda: the sum of the pairs' rejections
	// Complete is true when every pair was tried in the window; only then
	// are LocalBarrier (lambda(beta) at each rung, beta = 1/T) and
	// RecommendedRungs (about 2 Lambda) estimated.
	Complete         bool
	LocalBarrier     []float64
	RecommendedRungs int
	RoundTrips       int // in the window
	WindowSteps      int // steps in the window
}

// Window returns the figures of st's window, or nil for a single rung, for
// the first-rung scheme (whose pairs are not adjacent, so no barrier adds
// them up) or for window statistics that do not match the ladder.
func Window(st *PTState, scheme Scheme) *WindowFigures {
	r := len(st.Temps)
	s := &st.Stats
	if r < 2 || scheme == SchemeToFirst || len(s.WinProposed) != r-1 || len(s.WinAccepted) != r-1 || len(s.WinReject) != r-1 {
		return nil
	}
	w := &WindowFigures{Temps: append([]float64(nil), st.Temps...), RoundTrips: s.WinRoundTrips,
		WindowSteps: st.Steps - s.WinStart, Complete: true, SwapFrom: "probabilities"}
	probs := len(s.WinSwapProb) == r-1
	switch {
	case !probs:
		w.SwapFrom = "outcomes"
	case s.ProbSince > s.WinStart:
		w.SwapFrom = fmt.Sprintf("outcomes before step %d", s.ProbSince)
	}
	w.SwapsAccepted = append([]int(nil), s.WinAccepted...)
	w.SwapsProposed = append([]int(nil), s.WinProposed...)
	floored := make([]float64, r-1)
	for p := 0; p < r-1; p++ {
		if s.WinProposed[p] == 0 {
			w.Complete = false
			w.SwapAcceptance = append(w.SwapAcceptance, 0)
			w.SwapOutcomes = append(w.SwapOutcomes, 0)
			w.Rejection = append(w.Rejection, 0)
		} else {
			w.SwapOutcomes = append(w.SwapOutcomes, s.WindowAcceptance(p))
			if probs {
				w.SwapAcceptance = append(w.SwapAcceptance, s.WindowSwapProbability(p))
			} else {
				w.SwapAcceptance = append(w.SwapAcceptance, s.WindowAcceptance(p))
			}
			w.Rejection = append(w.Rejection, s.WindowRejection(p))
		}
		floored[p] = math.Min(math.Max(w.Rejection[p], 1e-6), 1)
		w.Barrier += w.Rejection[p]
	}
	if !w.Complete {
		return w
	}
	if b, err := NewBarrier(st.Temps, floored); err == nil {
		for _, temp := range st.Temps {
			w.LocalBarrier = append(w.LocalBarrier, b.Local(1/temp))
		}
	}
	w.RecommendedRungs = RecommendedRungs(w.Barrier)
	return w
}
