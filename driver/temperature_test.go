package driver

import (
	"fmt"
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/gonum/mat"
)

// TestTemperedPosterior checks that a chain at posterior temperature T
// samples exp(-U/T), the prior tempered with the likelihood: on a Bayesian
// linear regression whose prior (precision 200 on every weight) is as
// strong as its data (50 examples, data precision about 200 a weight),
// the tempered posterior is N(mean, T Cov), while tempering the likelihood
// alone would give precision 200 + 200/T against 400/T, sds about 24%
// wider at T = 0.3 and 29% narrower at T = 3 than sqrt(T) times the Bayes
// posterior's (checked below from the exact covariances). Every kernel
// runs through PT.Temperature, as train runs it (SGNHT, SGHMC and SGLD as
// one rung; PT-SGHMC's rung 1 and its rung 2 at twice the temperature),
// full batch, both temperings; means within 0.15 sd and sds within 5% of
// sqrt(T) times the exact ones.
func TestTemperedPosterior(t *testing.T) {
	lr, err := newLinRegPrior(50, 5, 3, 200)
	if err != nil {
		t.Fatal(err)
	}
	// The problem discriminates: tempering the likelihood alone
	// (precision P + D/T instead of (P + D)/T) misses every sd by over 10%.
	for _, temp := range []float64{0.3, 3} {
		if r := likelihoodOnlySDRatio(lr, 200, temp); r > 0.9 && r < 1.1 {
			t.Fatalf("T=%g: likelihood-only tempering's sds are %.3f of the tempered posterior's: the test would not tell them apart", temp, r)
		}
	}
	const h, a = 5e-3, 20.0 // h sqrt(400) = 0.1, friction 0.1 per step
	type tcase struct {
		name   string
		kernel sampler.Kernel
		temp   float64
		ladder []float64
		// the gradient-tempered chain is the noise-tempered chain at step
		// sqrt(T) h: each gets a step that suits the tempered target
	}
	var cases []tcase
	for _, temp := range []float64{0.3, 3} {
		gh := h * math.Sqrt(temp) // TemperGradient at the equivalent step
		cases = append(cases,
			tcase{"sgnht noise", sampler.SGNHT{StepSize: h, Diffusion: a}, temp, nil},
			tcase{"sgnht gradient", sampler.SGNHT{StepSize: gh, Diffusion: 0.1 / gh, Tempering: sampler.TemperGradient}, temp, nil},
			tcase{"sghmc noise", sampler.SGHMC{StepSize: h, Friction: a}, temp, nil},
			tcase{"sgld noise", sampler.SGLD{StepSize: 2.5e-4}, temp, nil},
			tcase{"sgld gradient", sampler.SGLD{StepSize: 2.5e-4 * temp, Tempering: sampler.TemperGradient}, temp, nil},
			tcase{"pt", sampler.SGNHT{StepSize: h, Diffusion: a}, temp, []float64{1, 2}},
		)
	}
	for _, c := range cases {
		t.Run(c.name+" T="+ftoa(c.temp), func(t *testing.T) {
			ladder := c.ladder
			if ladder == nil {
				ladder = []float64{1}
			}
			pt := testDriver(testPT{Kernel: c.kernel, Temperature: c.temp, Temps: ladder, Workers: 1, BurnIn: 5000})
			pots := make([]sampler.Potential, len(ladder))
			for j := range pots {
				p, err := lr.potential(50, uint64(10+j))
				if err != nil {
					t.Fatal(err)
				}
				pots[j] = p
			}
			var tp sampler.TermPotential = pots[0].(sampler.TermPotential)
			if len(ladder) > 1 {
				corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pt.PT.Every, pt.PT.Exchange = 25, &tempering.Exchanger{Batch: 50, Correction: corr}
			}
			st, err := pt.Init([][]float64{lr.init(1)}, 7)
			if err != nil {
				t.Fatal(err)
			}
			xs := make([][][]float64, len(ladder))
			err = pt.Run(pots, tp, st, 80000, func(s *tempering.PTState) error {
				if s.Steps > 5000 && s.Steps%5 == 0 {
					for j, r := range s.Rungs {
						xs[j] = append(xs[j], append([]float64(nil), r.Theta...))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for j := range ladder {
				rt := tempering.TemperedRung(pt.Schedule.(Constant).Hyper.Temp, st.Temps[j])
				chk := lr.check(xs[j], rt)
				t.Logf("rung %d (T=%g): %v", j+1, rt, chk)
				if !chk.within(0.15, 0.05) {
					t.Errorf("rung %d at T=%g: %v; want means within 0.15 sd and sds within 5%% of sqrt(T) times the exact ones", j+1, rt, chk)
				}
			}
		})
	}
}

func ftoa(x float64) string { return fmt.Sprintf("%g", x) }

// likelihoodOnlySDRatio returns the largest-deviating ratio, over
// coordinates, of the sd of the likelihood-only tempered posterior
// (precision P + D/T, P = prior I) to that of exp(-U/T) (precision
// (P + D)/T).
func likelihoodOnlySDRatio(lr *linReg, prior, temp float64) float64 {
	p := len(lr.Mean)
	var prec mat.SymDense
	if err := prec.PowPSD(lr.Cov, -1); err != nil {
		panic(err)
	}
	alt := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			v := prec.At(i, j) / temp // D/T, plus P/T on the diagonal
			if i == j {
				v += prior - prior/temp
			}
			alt.SetSym(i, j, v)
		}
	}
	var cov mat.SymDense
	if err := cov.PowPSD(alt, -1); err != nil {
		panic(err)
	}
	worst := 1.0
	for i := 0; i < p; i++ {
		r := math.Sqrt(cov.At(i, i)) / (lr.SD[i] * math.Sqrt(temp))
		if math.Abs(r-1) > math.Abs(worst-1) {
			worst = r
		}
	}
	return worst
}

// BenchmarkTemperingESS compares the two temperings of SGNHT on the
// strong-prior regression of TestTemperedPosterior at T = 0.1 with
// minibatches of 25 of its 50 examples: noise tempering at the step h that
// suits T = 1 (h sqrt(lambda) = 0.1, friction 0.1 per step), gradient
// tempering at the same h (what a user's unchanged --lr gives), and
// gradient tempering at sqrt(T) h (the same chain as noise tempering).
// It reports the smallest bulk ESS over coordinates per 1,000 gradient
// evaluations, the worst sd error against sqrt(T) times the exact sds, and
// the gradient noise's share of the momentum's diffusion that the health
// check measures. Run: go test -run XXX -bench TemperingESS -benchtime 1x ./sampler/
func BenchmarkTemperingESS(b *testing.B) {
	lr, err := newLinRegPrior(50, 5, 3, 200)
	if err != nil {
		b.Fatal(err)
	}
	const temp, h, steps, burn = 0.1, 5e-3, 200000, 10000
	for _, c := range []struct {
		name string
		k    sampler.Kernel
	}{
		{"noise_h", sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}},
		{"gradient_h", sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h, Tempering: sampler.TemperGradient}},
		{"gradient_sqrtT_h", sampler.SGNHT{StepSize: h * math.Sqrt(temp), Diffusion: 0.1 / (h * math.Sqrt(temp)), Tempering: sampler.TemperGradient}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				pot, err := lr.potential(25, 5)
				if err != nil {
					b.Fatal(err)
				}
				xs, _, hl := runSingle(b, lr, c.k, pot, 25, temp, steps, burn, 1, 10000, 11)
				chk := lr.check(xs, temp)
				minESS := math.Inf(1)
				for j := range lr.Mean {
					tr := make([]float64, len(xs))
					for s, x := range xs {
						tr[s] = x[j]
					}
					minESS = math.Min(minESS, diagnose.BulkESS([][]float64{tr}))
				}
				b.ReportMetric(1000*minESS/steps, "ESS/1000grad")
				b.ReportMetric(math.Max(1-chk.SDMin, chk.SDMax-1), "sd-error")
				b.ReportMetric(hl.Last.Share, "noise-share")
			}
		})
	}
}
