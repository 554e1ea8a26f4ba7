package driver

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// noisyTerms is exactTerms with independent N(0, sd^2) noise on every
// per-example energy term, of unbounded size: exchange tests see a noisy
// deltaE whose variance they must estimate.
type noisyTerms struct{ sd float64 }

func (e noisyTerms) Dim() int  { return 1 }
func (e noisyTerms) Size() int { return 0 }
func (e noisyTerms) Gradient(theta, grad []float64, _ sampler.Minibatch, rng *rand.Rand) (float64, error) {
	grad[0] = theta[0]
	return 0.5 * theta[0] * theta[0], nil
}
func (e noisyTerms) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	for t, th := range thetas {
		for i := 0; i < to-from; i++ {
			out[t][i] = 0.5*th[0]*th[0] + e.sd*rng.NormFloat64()
		}
	}
	return nil
}

// TestBiasCorrectedExchange runs the 2-rung system of TestExchangeSign (T = 1
// and 6, marginals set mostly by exchanges) with reSGHMC's swap test. With
// exact energies it is the Metropolis test and both marginals come out
// right. With noisy energies (deltaE noise sd about 1.5), F = 1 (the
// penalty method) keeps them within 6% (measured 1.011 and 6.178), while F = 1e9 (no correction, the
// "naive" swap) makes the cold rung's variance at least 10% too large (1.194).
func TestBiasCorrectedExchange(t *testing.T) {
	cases := []struct {
		name string
		pot  interface {
			sampler.Potential
			sampler.TermPotential
		}
		f       float64
		correct bool
	}{
		{"exact energies", exactTerms{}, 1, true},
		{"noisy, penalty F=1", noisyTerms{sd: 10}, 1, true},
		{"noisy, uncorrected", noisyTerms{sd: 10}, 1e9, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pt := testDriver(testPT{Record: tempering.StandardRecorders(), Kernel: sampler.SGLD{StepSize: 0.02}, Temps: []float64{1, 6}, Every: 1,
				Exchange: &tempering.BiasCorrectedExchange{Batch: 64, F: c.f}, Workers: 1})
			st, err := pt.Init([][]float64{{0}}, 9)
			if err != nil {
				t.Fatal(err)
			}
			vc, vh := twoRungVariances(t, pt, st, c.pot)
			t.Logf("variances %.3f (want 1), %.3f (want 6), acceptance %.3f", vc, vh, st.Stats.AcceptanceRate(0))
			ok := math.Abs(vc-1) < 0.06 && math.Abs(vh/6-1) < 0.06
			if c.correct && !ok {
				t.Errorf("marginals off by more than 6%%")
			}
			if !c.correct && vc < 1.1 {
				t.Errorf("uncorrected noisy swaps left the cold variance at %.3f: the test cannot tell the correction matters", vc)
			}
		})
	}
}
