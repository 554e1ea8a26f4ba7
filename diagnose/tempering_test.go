package diagnose

import (
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestTemperingOf checks the tempering figures and the advice on states
// built by hand: a healthy ladder gets no advice; a pair that never swapped,
// a barrier that needs more rungs than the ladder has, and round trips far
// below what the barrier allows each get a warning with what to do; a window
// in which a pair was not yet tried gives no barrier; the first-rung scheme
// gives no figures; exchange 0 says that the rungs never exchange.
func TestTemperingOf(t *testing.T) {
	cfg := runspec.DefaultConfig()
	cfg.Exchange, cfg.BurnIn = 10, 1000
	state := func(proposed, accepted []int, reject []float64, trips int) *tempering.PTState {
		st := &tempering.PTState{Temps: []float64{1, 1.2, 1.5, 2}, Steps: 11000}
		st.Stats.WinStart, st.Stats.WinRoundTrips = 1000, trips
		st.Stats.WinProposed, st.Stats.WinAccepted = proposed, accepted
		for p := range reject {
			st.Stats.WinReject = append(st.Stats.WinReject, reject[p]*float64(proposed[p]))
		}
		return st
	}
	cases := []struct {
		name        string
		st          *tempering.PTState
		scheme      string
		lambda      float64
		rungs       int
		communicate bool
		advice      []string // substrings; none: no advice
	}{
		{"healthy", state([]int{500, 500, 500}, []int{200, 180, 190}, []float64{0.3, 0.35, 0.3}, 150), "", 0.95, 2, true, nil},
		{"no swap", state([]int{500, 500, 500}, []int{200, 0, 190}, []float64{0.3, 1, 0.3}, 0), "", 1.6, 4, false,
			[]string{"does not communicate", "0.40/0.00/0.38", "--chains 4"}},
		{"too few rungs", state([]int{500, 500, 500}, []int{40, 30, 35}, []float64{0.9, 0.95, 0.9}, 2), "", 2.75, 6, false,
			[]string{"barely communicates", "--replicas 6", "--tmax"}},
		{"slow round trips", state([]int{500, 500, 500}, []int{200, 180, 190}, []float64{0.3, 0.35, 0.3}, 5), "", 0.95, 2, true,
			[]string{"communicates slowly", "5 round trips in 10000 steps", "Instead: independent chains"}},
		{"untried pair", state([]int{500, 0, 500}, []int{200, 0, 190}, []float64{0.3, 0, 0.3}, 0), "", 0.6, 0, false,
			[]string{"not every pair has been tried"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := TemperingOf(c.st, cfg)
			if tp == nil {
				t.Fatal("no tempering figures")
			}
			if d := tp.Barrier - c.lambda; d > 1e-9 || d < -1e-9 || tp.RecommendedRungs != c.rungs || tp.Communicates != c.communicate {
				t.Errorf("Lambda %.3f, recommended %d, communicates %v; want %.3f, %d, %v", tp.Barrier, tp.RecommendedRungs, tp.Communicates, c.lambda, c.rungs, c.communicate)
			}
			if len(c.advice) == 0 && tp.Advice != "" {
				t.Errorf("advice for a healthy ladder: %s", tp.Advice)
			}
			for _, w := range c.advice {
				if !strings.Contains(tp.Advice, w) {
					t.Errorf("advice lacks %q: %s", w, tp.Advice)
				}
			}
		})
	}
	// --exchange 0: no pair is ever tried, and the advice says why rather
	// than that the window is young
	off := cfg
	off.Exchange = 0
	tp := TemperingOf(state([]int{0, 0, 0}, []int{0, 0, 0}, []float64{0, 0, 0}, 0), off)
	if tp == nil || tp.Complete || !strings.Contains(tp.Advice, "exchange 0: the rungs never exchange") {
		t.Errorf("exchange 0: figures %+v", tp)
	}
	cfg.Scheme = "first"
	if tp := TemperingOf(cases[0].st, cfg); tp != nil {
		t.Errorf("figures for the first-rung scheme: %+v", tp)
	}
}
