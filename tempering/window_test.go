package tempering

import (
	"math"
	"testing"
)

// TestWindow checks a PT state's window figures on states built by hand:
// the swap acceptance averages the recorded swap probabilities (the 0/1
// outcomes without them, and the source says which), the barrier adds the
// pairs' mean rejections, the local barrier and the rungs wanted come only
// once every pair was tried, and a single rung, the first-rung scheme and
// statistics of another ladder give none.
func TestWindow(t *testing.T) {
	state := func(proposed, accepted []int, prob, reject []float64, probSince int) *PTState {
		st := &PTState{Temps: []float64{1, 1.3, 1.7}, Steps: 3000}
		st.Stats.WinStart, st.Stats.WinRoundTrips, st.Stats.ProbSince = 1000, 4, probSince
		st.Stats.WinProposed, st.Stats.WinAccepted, st.Stats.WinSwapProb = proposed, accepted, prob
		for p, r := range reject {
			st.Stats.WinReject = append(st.Stats.WinReject, r*float64(proposed[p]))
		}
		return st
	}
	cases := []struct {
		name       string
		st         *PTState
		from       string
		acceptance []float64
		barrier    float64
		complete   bool
	}{
		{"probabilities", state([]int{100, 200}, []int{30, 50}, []float64{40, 60}, []float64{0.5, 0.7}, 0),
			"probabilities", []float64{0.4, 0.3}, 1.2, true},
		{"outcomes", state([]int{100, 200}, []int{30, 50}, nil, []float64{0.5, 0.7}, 0),
			"outcomes", []float64{0.3, 0.25}, 1.2, true},
		{"outcomes before a resume", state([]int{100, 200}, []int{30, 50}, []float64{40, 60}, []float64{0.5, 0.7}, 2000),
			"outcomes before step 2000", []float64{0.4, 0.3}, 1.2, true},
		{"untried pair", state([]int{100, 0}, []int{30, 0}, []float64{40, 0}, []float64{0.5, 0}, 0),
			"probabilities", []float64{0.4, 0}, 0.5, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := Window(c.st, SchemeAlternate)
			if w == nil {
				t.Fatal("no window figures")
			}
			if w.SwapFrom != c.from || w.Complete != c.complete || math.Abs(w.Barrier-c.barrier) > 1e-12 || w.RoundTrips != 4 || w.WindowSteps != 2000 {
				t.Errorf("from %q, complete %v, Lambda %g, trips %d in %d steps; want %q, %v, %g, 4 in 2000", w.SwapFrom, w.Complete, w.Barrier, w.RoundTrips, w.WindowSteps, c.from, c.complete, c.barrier)
			}
			for p, a := range c.acceptance {
				if math.Abs(w.SwapAcceptance[p]-a) > 1e-12 {
					t.Errorf("pair %d: acceptance %g, want %g", p+1, w.SwapAcceptance[p], a)
				}
			}
			if got := len(w.LocalBarrier) == len(c.st.Temps) && w.RecommendedRungs > 0; got != c.complete {
				t.Errorf("local barrier %v, recommended rungs %d: want them exactly when every pair was tried", w.LocalBarrier, w.RecommendedRungs)
			}
			if c.complete && w.RecommendedRungs != RecommendedRungs(c.barrier) {
				t.Errorf("recommended rungs %d, want RecommendedRungs(%g) = %d", w.RecommendedRungs, c.barrier, RecommendedRungs(c.barrier))
			}
		})
	}
	ok := cases[0].st
	if w := Window(ok, SchemeToFirst); w != nil {
		t.Errorf("figures for the first-rung scheme: %+v", w)
	}
	one := &PTState{Temps: []float64{1}}
	if w := Window(one, SchemeAlternate); w != nil {
		t.Errorf("figures for one rung: %+v", w)
	}
	other := state([]int{100, 200, 300}, []int{30, 50, 60}, nil, []float64{0.5, 0.7, 0.1}, 0)
	if w := Window(other, SchemeAlternate); w != nil {
		t.Errorf("figures for statistics of a 4-rung ladder on 3 rungs: %+v", w)
	}
}
