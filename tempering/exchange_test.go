package tempering

import (
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestExchangeNoAllocs: an exchange test runs on the step path, so once its
// buffers are grown it allocates nothing (each test allocated the pair's
// slices on every look at the data).
func TestExchangeNoAllocs(t *testing.T) {
	corr, err := NewCorrection(1, CorrectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		x    ExchangeTest
	}{
		{"barker", &Exchanger{Batch: 2, Correction: corr}},
		{"resghmc", &BiasCorrectedExchange{Batch: 2, F: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := []float64{0.3, -1, 2}, []float64{1, 0.5, -0.2}
			rng := rand.New(rand.NewPCG(1, 2))
			pot := sampler.StdGaussian{D: 3}
			if _, err := tc.x.Test(pot, a, b, 1, 2, rng); err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(100, func() {
				if _, err := tc.x.Test(pot, a, b, 1, 2, rng); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%v allocations an exchange test", n)
			}
		})
	}
}
