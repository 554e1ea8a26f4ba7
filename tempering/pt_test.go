package tempering

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestCorrectionAccuracy checks the largest CDF error between N(0,1)+C and
// the logistic, computed here by numerical convolution of the table's cell
// masses with the Gaussian (cell midpoints, x on a grid unrelated to the
// construction's).
func TestCorrectionAccuracy(t *testing.T) {
	cases := []struct {
		opt  CorrectionOptions
		want float64
	}{
		{CorrectionOptions{Method: CorrectionHermite, Gamma: 0.05, Terms: 6}, 3.9e-4},
		{CorrectionOptions{Method: CorrectionHermite, Gamma: 0.05, Terms: 7}, 3.5e-4},
		{CorrectionOptions{Method: CorrectionHermite, Gamma: 0.05, Terms: 8}, 3.5e-4},
		{CorrectionOptions{Method: CorrectionNNLS}, 1e-4},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%d", c.opt.Method, c.opt.Terms)
		t.Run(name, func(t *testing.T) {
			corr, err := NewCorrection(1, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for x := -14.0; x <= 14; x += 0.0137 {
				f := 0.0
				for j := 0; j+1 < len(corr.X); j++ {
					m := corr.CDF[j+1] - corr.CDF[j]
					if m == 0 {
						continue
					}
					// finer split of each cell into 4 sub-cells
					for q := 0; q < 4; q++ {
						mid := corr.X[j] + (float64(q)+0.5)/4*(corr.X[j+1]-corr.X[j])
						f += m / 4 * 0.5 * math.Erfc(-(x-mid)/math.Sqrt2)
					}
				}
				worst = math.Max(worst, math.Abs(f-1/(1+math.Exp(-x))))
			}
			t.Logf("largest CDF error %.3g", worst)
			if worst > c.want {
				t.Fatalf("largest CDF error %.3g > %.3g", worst, c.want)
			}
		})
	}
}

// TestBarkerAcceptance checks that Exchanger.Test, given energy terms whose
// deltaE estimate has Gaussian noise (sd 0.6, under the table's 1), accepts
// with the logistic probability 1/(1+e^-deltaE), and that the estimate's
// sign alone (an uncorrected test) would not.
func TestBarkerAcceptance(t *testing.T) {
	corr, _ := NewCorrection(1, CorrectionOptions{})
	rng := rand.New(rand.NewPCG(1, 2))
	// Temperatures 1 and 2: d_i = (1 - 1/2)(a_i - b_i) = (mu + sd z_i)/2,
	// so deltaE = mu/2 and, on a batch of 16, its sd is sd/8.
	const batch, sigma = 16, 0.6
	for _, de := range []float64{-2, 0.7, 3} {
		const trials = 200000
		x := Exchanger{Batch: batch, Correction: corr}
		tp := noisyPair{n: 0, mu: 2 * de, sd: 2 * sigma * math.Sqrt(batch)}
		acc, sign := 0, 0
		for i := 0; i < trials; i++ {
			res, err := x.Test(tp, nil, nil, 1, 2, rng)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted {
				acc++
			}
			if res.DeltaE > 0 { // uncorrected: the noisy estimate alone as the test
				sign++
			}
		}
		want := Logistic(de)
		got := float64(acc) / trials
		t.Logf("deltaE %v: acceptance %.4f, logistic %.4f, sign of the estimate %.4f", de, got, want, float64(sign)/trials)
		if math.Abs(got-want) > 0.005 {
			t.Errorf("deltaE %v: acceptance %.4f, want %.4f", de, got, want)
		}
		if math.Abs(float64(sign)/trials-want) < 0.02 {
			t.Errorf("deltaE %v: uncorrected test also matched; the check is too weak", de)
		}
	}
}

// noisyPair gives two thetas energy terms with mean difference mu and
// per-term noise sd, from a data set of size n.
type noisyPair struct {
	n      int
	mu, sd float64
}

func (p noisyPair) Size() int { return p.n }
func (p noisyPair) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	for i := 0; i < to-from; i++ {
		out[0][i] = p.mu + p.sd*rng.NormFloat64()
		out[1][i] = 0
	}
	return nil
}

func TestExchangerGrowth(t *testing.T) {
	corr, _ := NewCorrection(1, CorrectionOptions{})
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name         string
		tp           noisyPair
		margin       float64
		grown, exact bool
		early        bool
		accept       int // 1: must accept, -1: must reject, 0: either
	}{
		{"small noise", noisyPair{n: 1000, mu: 1, sd: 2}, 0, false, false, false, 0},
		{"grows", noisyPair{n: 100000, mu: 1, sd: 20}, 0, true, false, false, 0},
		{"grows to exact", noisyPair{n: 300, mu: 1, sd: 200}, 0, true, true, false, 0},
		{"decided early, rejected", noisyPair{n: 100000, mu: -2000, sd: 200}, 50, false, false, true, -1},
		{"decided early, accepted", noisyPair{n: 100000, mu: 2000, sd: 200}, 50, false, false, true, 1},
	}
	for _, c := range cases {
		x := Exchanger{Batch: 16, Correction: corr, Margin: c.margin}
		res, err := x.Test(c.tp, nil, nil, 1, 2, rng)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Grown != c.grown || res.Exact != c.exact || res.Early != c.early {
			t.Errorf("%s: %+v", c.name, res)
		}
		if c.accept != 0 && res.Accepted != (c.accept > 0) {
			t.Errorf("%s: accepted %v", c.name, res.Accepted)
		}
		if !res.Exact && !res.Early && res.Sigma > 1 {
			t.Errorf("%s: accepted with sigma %v above the table's", c.name, res.Sigma)
		}
	}
	// An unbounded potential whose noise cannot be brought under the table's.
	x := Exchanger{Batch: 16, Correction: corr, MaxBatch: 64}
	if _, err := x.Test(noisyPair{n: 0, mu: 0, sd: 1000}, nil, nil, 1, 2, rng); err == nil {
		t.Error("no error when the noise stays too large")
	}
}

func TestLadders(t *testing.T) {
	g, _ := GeometricLadder(10, 10)
	if g[0] != 1 || math.Abs(g[9]-10) > 1e-12 || math.Abs(g[1]/g[0]-g[5]/g[4]) > 1e-12 {
		t.Errorf("geometric %v", g)
	}
	l, _ := LinearLadder(4, 4)
	if l[1] != 2 || l[3] != 4 {
		t.Errorf("linear %v", l)
	}
	if e, err := Ladder("1, 2,5", 0, 0); err != nil || e[2] != 5 {
		t.Errorf("explicit %v %v", e, err)
	}
	for _, bad := range []string{"2,3", "1,1", "1,x"} {
		if _, err := Ladder(bad, 0, 0); err == nil {
			t.Errorf("ladder %q accepted", bad)
		}
	}
	if _, err := GeometricLadder(3, 0.5); err == nil {
		t.Error("tmax < 1 accepted")
	}
}

// TestExchangerTolerance checks the Tolerance rule's error bound: on a pair
// whose per-example differences are Gaussian with mean deltaE, the test's
// swap frequency stays within looks*Tolerance of the exact Barker test's
// Logistic(deltaE), while the rule decides most tests early when |deltaE|
// is large. A rule that ignores sigma (deciding on the estimate alone
// against log Tolerance) is off by 0.06 to 0.14 and fails.
func TestExchangerTolerance(t *testing.T) {
	corr, _ := NewCorrection(1, CorrectionOptions{})
	const trials, tol = 20000, 1e-3
	for _, c := range []struct {
		name   string
		deltaE float64
	}{{"reject side", -1.5}, {"accept side", 1.5}, {"far reject", -9}, {"far accept", 9}} {
		rng := rand.New(rand.NewPCG(11, 12))
		tp := noisyPair{n: 1 << 30, mu: c.deltaE, sd: 40} // sigma 10 at the first batch, 1 at 1,600 examples
		x := Exchanger{Batch: 16, Correction: corr, Tolerance: tol}
		accepted, early := 0, 0
		for i := 0; i < trials; i++ {
			res, err := x.Test(tp, nil, nil, 1, math.Inf(1), rng) // 1/tj - 1/tk = 1
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted {
				accepted++
			}
			if res.Early {
				early++
			}
		}
		p, want := float64(accepted)/trials, Logistic(c.deltaE)
		looks := 9.0 // batches 16, 32, ..., 2048 at most
		se := math.Sqrt(want * (1 - want) / trials)
		if math.Abs(p-want) > looks*tol+4*se {
			t.Errorf("%s: swap frequency %.4f, exact test %.4f (bound %.4f + 4 se %.4f)", c.name, p, want, looks*tol, 4*se)
		}
		if math.Abs(c.deltaE) > 5 && early < trials/2 {
			t.Errorf("%s: only %d of %d tests decided early", c.name, early, trials)
		}
		t.Logf("%s: swap frequency %.4f, exact %.4f, %d decided early", c.name, p, want, early)
	}
}

// TestExchangeDiverged: when a replica's energy terms are not finite (its
// chain diverged), both exchange tests return an error that wraps
// sampler.ErrDiverged and names the rungs, instead of a noise sd of NaN
// (the small-BNN sweep at too large a step stopped with "noise sd NaN of
// deltaE still above the correction's 1").
func TestExchangeDiverged(t *testing.T) {
	corr, _ := NewCorrection(1, CorrectionOptions{})
	for _, c := range []struct {
		name string
		tp   noisyPair
	}{
		{"NaN", noisyPair{n: 1000, mu: math.NaN(), sd: 1}},
		{"+Inf", noisyPair{n: 1000, mu: math.Inf(1), sd: 1}},
		{"exact, -Inf", noisyPair{n: 8, mu: math.Inf(-1), sd: 1}},
	} {
		for _, x := range []interface {
			Test(sampler.TermPotential, []float64, []float64, float64, float64, *rand.Rand) (ExchangeResult, error)
		}{&Exchanger{Batch: 16, Correction: corr}, &BiasCorrectedExchange{Batch: 16, F: 1}} {
			_, err := x.Test(c.tp, nil, nil, 1, 2, rand.New(rand.NewPCG(1, 2)))
			if !errors.Is(err, sampler.ErrDiverged) || !strings.Contains(err.Error(), "T=1 and T=2") {
				t.Errorf("%s, %T: error %v, want one naming the rungs and wrapping ErrDiverged", c.name, x, err)
			}
		}
	}
}
