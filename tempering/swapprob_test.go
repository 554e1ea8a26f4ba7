package tempering

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSwapProbability checks each exchange test's Prob, the probability of
// the swap given the test's estimate of deltaE: over many exchanges of one
// pair its mean must match the fraction of attempts that swapped (the same
// expectation) and, for the Barker tests, the logistic of the true deltaE;
// and its variance must be below the 0/1 outcomes' (what
// Rao-Blackwellisation buys). A probability that leaves out the Gaussian pad
// of the corrected test, ignores the estimate's noise, or takes the wrong
// tail misses by several standard errors on at least one case.
func TestSwapProbability(t *testing.T) {
	corr, err := NewCorrection(1, CorrectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 16
	// temperatures 1 and 2: deltaE = mu/2, its estimate's sd is sd/(2 sqrt(batch))
	pair := func(de, sigma float64, n int) noisyPair {
		return noisyPair{n: n, mu: 2 * de, sd: 2 * sigma * math.Sqrt(batch)}
	}
	cases := []struct {
		name    string
		test    ExchangeTest
		tp      noisyPair
		barker  float64 // the Barker probability the mean must match (NaN: none)
		exact   bool    // every test is exact
		varLess bool    // the probabilities vary less than the outcomes
	}{
		{"corrected, estimate sd 0.95 (pad 0.31)", &Exchanger{Batch: batch, Correction: corr}, pair(0.7, 0.95, 0), Logistic(0.7), false, true},
		{"corrected, estimate sd 0.3 (pad 0.95)", &Exchanger{Batch: batch, Correction: corr}, pair(-1.5, 0.3, 0), Logistic(-1.5), false, true},
		{"corrected, estimate sd 0.6, deltaE 2.5", &Exchanger{Batch: batch, Correction: corr}, pair(2.5, 0.6, 0), Logistic(2.5), false, true},
		{"exact (whole data set)", &Exchanger{Batch: batch, Correction: corr}, noisyPair{n: 8, mu: 1.2, sd: 1}, math.NaN(), true, true},
		{"bias-corrected (approximate)", &BiasCorrectedExchange{Batch: batch, F: 1}, pair(-0.5, 0.5, 0), math.NaN(), false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 11))
			const trials = 100000
			acc, sum, sum2 := 0.0, 0.0, 0.0
			for i := 0; i < trials; i++ {
				res, err := c.test.Test(c.tp, nil, nil, 1, 2, rng)
				if err != nil {
					t.Fatal(err)
				}
				if !res.ProbKnown || res.Prob < 0 || res.Prob > 1 {
					t.Fatalf("probability %v (known %v)", res.Prob, res.ProbKnown)
				}
				if res.Exact != c.exact {
					t.Fatalf("exact %v, want %v", res.Exact, c.exact)
				}
				if res.Accepted {
					acc++
				}
				sum += res.Prob
				sum2 += res.Prob * res.Prob
			}
			frac, mean := acc/trials, sum/trials
			varProb := sum2/trials - mean*mean
			varOut := frac * (1 - frac)
			// the difference of the two means has sd at most the outcomes'
			se := math.Sqrt(varOut / trials)
			t.Logf("fraction swapped %.4f, mean probability %.4f (Barker %.4f); variance %.4f against the outcomes' %.4f",
				frac, mean, c.barker, varProb, varOut)
			if math.Abs(mean-frac) > 4*se {
				t.Errorf("mean probability %.4f, fraction swapped %.4f: more than 4 standard errors (%.4f) apart", mean, frac, se)
			}
			if !math.IsNaN(c.barker) && math.Abs(mean-c.barker) > 0.005 {
				t.Errorf("mean probability %.4f, Barker's %.4f", mean, c.barker)
			}
			if c.varLess && !(varProb < 0.9*varOut) {
				t.Errorf("variance of the probabilities %.4f is not below the outcomes' %.4f", varProb, varOut)
			}
		})
	}
	// A decision by the Tolerance rule is deterministic given its estimate.
	x := Exchanger{Batch: batch, Correction: corr, Tolerance: 1e-8}
	for _, mu := range []float64{-200, 200} {
		res, err := x.Test(noisyPair{n: 0, mu: mu, sd: 1}, nil, nil, 1, 2, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Early || !res.ProbKnown || res.Prob != res.Outcome() || (res.Prob == 1) != res.Accepted {
			t.Errorf("deltaE %v decided early: %+v", mu/2, res)
		}
	}
}

// TestSwapProbabilityStats checks that a PT run's Rao-Blackwellised
// acceptance (PTStats.SwapProbability) is the mean of its attempts'
// probabilities, tracks the 0/1 acceptance, and restarts with the window;
// and that a state without probability sums (an old checkpoint's) is seeded
// from its counts.
func TestSwapProbabilityStats(t *testing.T) {
	s := PTStats{Proposed: []int{10, 4}, Accepted: []int{3, 0}, WinProposed: []int{5, 2}, WinAccepted: []int{1, 0}, WinReject: []float64{1, 1}}
	s.SeedSwapProb(700)
	if s.ProbSince != 700 || s.SwapProbability(0) != 0.3 || s.WindowSwapProbability(0) != 0.2 || s.SwapProbability(1) != 0 {
		t.Errorf("seeded from counts: %+v", s)
	}
	s.SeedSwapProb(900) // already seeded: unchanged
	if s.ProbSince != 700 {
		t.Errorf("seeded twice: since %d", s.ProbSince)
	}
	st := &PTState{Stats: s}
	(&PT{Record: StandardRecorders()}).ResetWindow(st, 1000)
	if s := st.Stats; s.WinSwapProb[0] != 0 || s.SwapProb[0] != 3 || s.WinStart != 1000 {
		t.Errorf("window reset: %+v", s)
	}
}
