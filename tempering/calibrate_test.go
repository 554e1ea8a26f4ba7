package tempering

import (
	"math"
	"testing"
)

// TestBarkerScale checks the calibration of measured rejections to the
// swaps' Barker acceptance over the stationary stretch.
func TestBarkerScale(t *testing.T) {
	mu := 1.19 // a pair at the Gaussian model's equilibrium: rejection 0.56, Barker 0.30
	modelRej, modelAcc := 1-metropolisAcceptance(mu), barkerAcceptance(mu)
	round := func(rej, acc float64, spoiled string) TuningRound {
		return TuningRound{Reject: []float64{rej, rej, rej}, Acceptance: []float64{acc, acc, acc}, Tries: []int{25, 25, 25}, Spoiled: spoiled}
	}
	noisy := barkerToMetropolisRejection(0.43) / 0.43
	for _, c := range []struct {
		name   string
		rounds []TuningRound
		want   float64
	}{
		{"the model's own pairs", []TuningRound{round(modelRej, modelAcc, "")}, 1},
		// issue 32's pairs after burn-in: rejection 0.43 measured, Barker 0.43
		{"minibatch noise inflates the rejections", []TuningRound{round(0.43, 0.43, "")}, noisy},
		{"rounds before a transient are left out", []TuningRound{round(0.43, 0.43, ""), round(0.9, 0.2, "moved"), round(modelRej, modelAcc, "")}, 1},
		{"saturated pairs are left out", []TuningRound{{Reject: []float64{0.97, modelRej}, Acceptance: []float64{0.4, modelAcc}, Tries: []int{25, 25}}}, 1},
		{"acceptance near 1/2 is ill-conditioned", []TuningRound{round(0.2, 0.47, "")}, 1},
		{"rounds without attempts recorded", []TuningRound{{Reject: []float64{0.43}, Acceptance: []float64{0.43}}}, 1},
		{"clamped", []TuningRound{round(0.05, 0.1, "")}, scaleMax},
	} {
		got := barkerScale(c.rounds)
		t.Logf("%s: %.4f", c.name, got)
		if math.Abs(got-c.want) > 1e-3 {
			t.Errorf("%s: scale %.4f, want %.4f", c.name, got, c.want)
		}
	}
	if !(noisy < 0.8) {
		t.Errorf("rejection 0.43 with Barker acceptance 0.43 scales by %.3f: the calibration should shrink it", noisy)
	}
}

// TestFlatIfConsistent checks that pairs consistent with one barrier per
// log T are placed by it, and that a barrier that is not flat is kept.
func TestFlatIfConsistent(t *testing.T) {
	temps := []float64{1, 1.01, 1.02, 1.03}
	width := math.Log(1.03)
	for _, c := range []struct {
		name   string
		inc    []float64
		reject []float64
		tries  []int
		flat   bool
	}{
		{"noise about a flat barrier", []float64{0.50, 0.62, 0.55}, []float64{0.50, 0.62, 0.55}, []int{25, 25, 25}, true},
		{"a barrier peaked in the middle", []float64{0.10, 0.90, 0.10}, []float64{0.10, 0.90, 0.10}, []int{100, 100, 100}, false},
		{"a saturated pair", []float64{0.50, 1.4, 0.55}, []float64{0.50, 0.95, 0.55}, []int{25, 25, 25}, false},
	} {
		got, flat := flatIfConsistent(temps, c.inc, c.reject, c.tries)
		if flat != c.flat {
			t.Errorf("%s: flat %v, want %v (%.3f)", c.name, flat, c.flat, got)
			continue
		}
		sum := 0.0
		for p := range got {
			sum += got[p]
			want := c.inc[p]
			if flat {
				want = (c.inc[0] + c.inc[1] + c.inc[2]) * math.Log(temps[p+1]/temps[p]) / width
			}
			if math.Abs(got[p]-want) > 1e-12 {
				t.Errorf("%s: pair %d increment %.4f, want %.4f", c.name, p+1, got[p], want)
			}
		}
	}
}
