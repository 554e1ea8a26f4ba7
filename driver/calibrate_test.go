package driver

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// TestBarkerScale checks the calibration of measured rejections to the
// swaps' Barker acceptance over the stationary stretch.
func TestBarkerScale(t *testing.T) {
	mu := 1.19 // a pair at the Gaussian model's equilibrium: rejection 0.56, Barker 0.30
	modelRej := 1 - tempering.MetropolisAcceptance(mu)
	modelAcc := barkerAcceptance(mu)
	round := func(rej, acc float64, spoiled string) tempering.TuningRound {
		return tempering.TuningRound{Reject: []float64{rej, rej, rej}, Acceptance: []float64{acc, acc, acc}, Tries: []int{25, 25, 25}, Spoiled: spoiled}
	}
	r43, _ := tempering.BarkerToMetropolisRejection(0.43)
	noisy := r43 / 0.43
	for _, c := range []struct {
		name   string
		rounds []tempering.TuningRound
		want   float64
	}{
		{"the model's own pairs", []tempering.TuningRound{round(modelRej, modelAcc, "")}, 1},
		// issue 32's pairs after burn-in: rejection 0.43 measured, Barker 0.43
		{"minibatch noise inflates the rejections", []tempering.TuningRound{round(0.43, 0.43, "")}, noisy},
		{"rounds before a transient are left out", []tempering.TuningRound{round(0.43, 0.43, ""), round(0.9, 0.2, "moved"), round(modelRej, modelAcc, "")}, 1},
		{"saturated pairs are left out", []tempering.TuningRound{{Reject: []float64{0.97, modelRej}, Acceptance: []float64{0.4, modelAcc}, Tries: []int{25, 25}}}, 1},
		{"acceptance near 1/2 is ill-conditioned", []tempering.TuningRound{round(0.2, 0.47, "")}, 1},
		{"rounds without attempts recorded", []tempering.TuningRound{{Reject: []float64{0.43}, Acceptance: []float64{0.43}}}, 1},
		{"clamped", []tempering.TuningRound{round(0.05, 0.1, "")}, scaleMax},
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

// barkerAcceptance returns E[1/(1+exp(-X))] for X ~ N(-mu, 2 mu), by the
// midpoint rule over +-10 standard deviations (tempering's own, for the
// model's pairs).
func barkerAcceptance(mu float64) float64 {
	sd := math.Sqrt(2 * mu)
	const n = 4000
	s := 0.0
	for i := 0; i < n; i++ {
		z := -10 + 20*(float64(i)+0.5)/n
		s += tempering.Logistic(-mu+sd*z) * math.Exp(-0.5*z*z)
	}
	return s * (20.0 / n) / math.Sqrt(2*math.Pi)
}
