package tempering

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// BiasCorrectedExchange is the APPROXIMATE swap test of reSGHMC (Deng, Feng,
// Gao, Liang and Lin, ICML 2020): a Metropolis test on one minibatch
// estimate of deltaE, lowered by its estimated variance over 2F:
//
//	swap if log u < deltaE^ - Var(deltaE^)/(2F),  u ~ U(0, 1).
//
// deltaE^ = (1/tj - 1/tk) mean_i (u_i(theta_j) - u_i(theta_k)) on a batch of
// Batch examples shared by both configurations, and Var(deltaE^) is its
// paired sample variance over the batch (reSGHMC estimates the two
// energies' variances separately, every few epochs; here both come from the
// batch at hand). With F = 1 and Gaussian noise of known variance this is
// the penalty method of Ceperley and Dewing (1999), which is exact; the
// variance is estimated, and reSGHMC takes F in the hundreds of thousands
// so that swaps happen at all, which makes it a biased test: it gives up
// the detailed balance of the exchange (and so the guarantee that rung 1
// samples the posterior) in exchange for swaps on models whose exact test
// never accepts. It never grows the batch.
type BiasCorrectedExchange struct {
	Batch int     // examples per test
	F     float64 // correction divisor: 1 is the penalty method; larger swaps more, with more bias

	buf    [2][]float64
	thetas [2][]float64 // the pair a test evaluates: held here, so no test allocates
	outs   [2][]float64
}

// Test decides the exchange of thetaJ (at temperature tj) and thetaK (at tk).
func (x *BiasCorrectedExchange) Test(tp sampler.TermPotential, thetaJ, thetaK []float64, tj, tk float64, rng *rand.Rand) (ExchangeResult, error) {
	if !(x.F > 0) || x.Batch < 2 {
		return ExchangeResult{}, fmt.Errorf("bias-corrected exchange: F %v must be positive and batch %d at least 2", x.F, x.Batch)
	}
	n := x.Batch
	size := tp.Size()
	if size > 0 {
		n = min(n, size)
	}
	for t := range x.buf {
		if len(x.buf[t]) < n {
			x.buf[t] = make([]float64, n)
		}
	}
	x.thetas, x.outs = [2][]float64{thetaJ, thetaK}, [2][]float64{x.buf[0][:n], x.buf[1][:n]}
	err := tp.Terms(x.thetas[:], 0, n, rng, x.outs[:])
	x.thetas, x.outs = [2][]float64{}, [2][]float64{} // hold no caller's memory
	if err != nil {
		return ExchangeResult{}, fmt.Errorf("exchange: %w", err)
	}
	c := 1/tj - 1/tk
	mean, m2 := pairedDifferences(c, x.buf[0][:n], x.buf[1][:n])
	if err := finiteDeltaE(mean, m2, tj, tk); err != nil {
		return ExchangeResult{}, err
	}
	res := ExchangeResult{DeltaE: mean, N: n}
	variance := 0.0
	if size > 0 && n >= size {
		res.Exact = true
	} else if n > 1 {
		variance = m2 / float64(n-1) / float64(n)
		if size > 0 {
			variance *= 1 - float64(n)/float64(size)
		}
	}
	res.Sigma = math.Sqrt(variance)
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	res.Accepted = math.Log(u) < mean-variance/(2*x.F)
	res.Prob, res.ProbKnown = math.Min(1, math.Exp(mean-variance/(2*x.F))), true
	return res, nil
}
