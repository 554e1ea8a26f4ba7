package tempering

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// DeltaE returns the log of the detailed-balance ratio of swapping the
// configurations of rungs j and k (temperatures tj, tk, energies uj = U(theta_j),
// uk = U(theta_k)), with pi_T(theta) proportional to exp(-U(theta)/T):
//
//	deltaE = log [pi_j(theta_k) pi_k(theta_j) / (pi_j(theta_j) pi_k(theta_k))]
//	       = (1/tj - 1/tk) (uj - uk).
//
// The Barker test swaps with probability 1/(1+exp(-deltaE)): a colder rung
// holding the higher energy favours the swap. (The paper prints the opposite
// sign; TestExchangeSign shows that sign samples the wrong marginals.)
func DeltaE(uj, uk, tj, tk float64) float64 {
	return (1/tj - 1/tk) * (uj - uk)
}

// SampleLogistic draws from the standard logistic distribution.
func SampleLogistic(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return math.Log(u / (1 - u))
}

// Exchanger runs the corrected minibatch Barker test (Seita et al. 2017) on
// an exchange between two rungs: it estimates deltaE and its standard error
// sigma from paired per-example terms on one shared batch, grows the batch
// (doubling, up to the whole data set, where the test is exact) until sigma
// is at most the correction table's, pads sigma up to the table's with
// Gaussian noise, and swaps when deltaE + N(0, table^2 - sigma^2) + C > 0.
type Exchanger struct {
	Batch      int         // first batch size
	Correction *Correction // correction table; its Sigma bounds the usable sigma
	// MaxBatch caps the batch for potentials of unbounded size (default 2^20);
	// an exchange that still cannot reach the table's sigma is an error.
	MaxBatch int
	// Margin enables decisive early decisions: when deltaE + 6 sigma < -Margin
	// the swap probability is below exp(-Margin) at 6 standard errors, and the
	// swap is rejected without growing the batch (and symmetrically accepted
	// when deltaE - 6 sigma > Margin). Zero disables it.
	Margin float64
	// Tolerance enables early decisions with a bounded error: the test stops
	// as soon as the probability that the full-data Barker test would decide
	// the other way is at most Tolerance, under the normal approximation of
	// the estimate that the corrected test itself makes. It rejects when
	// deltaE + sigma^2/2 < log(Tolerance) and accepts when -deltaE +
	// sigma^2/2 < log(Tolerance) (as Logistic(x) <= exp(x)), which usually
	// happens long before sigma reaches the table's when |deltaE| is a few
	// tens. Each look at the data can err by at most Tolerance, so a
	// test errs by at most Tolerance times its number of looks (at most
	// log2(N/Batch)+2); train uses 1e-8, below the correction table's own
	// error (MaxError: 7e-7 for the default nnls table at sigma 1). Zero
	// disables it.
	Tolerance float64

	buf    [2][]float64
	thetas [2][]float64 // the pair a test evaluates: held here, so no test allocates
	outs   [2][]float64
}

// ExchangeResult describes one exchange test.
type ExchangeResult struct {
	Accepted bool
	DeltaE   float64 // estimate of deltaE
	Sigma    float64 // its standard error
	N        int     // examples used
	Grown    bool    // the batch had to grow beyond Batch
	Exact    bool    // the whole data set was used: the exact Barker test
	Early    bool    // decided by the Margin or Tolerance rule
	// Prob is the probability that the test swaps given its estimate of
	// deltaE (its own test noise integrated out), when ProbKnown: the
	// Rao-Blackwellised acceptance whose mean over attempts estimates a
	// pair's swap rate with less variance than the 0/1 outcomes. A test
	// that does not set ProbKnown is counted by its outcome.
	Prob      float64
	ProbKnown bool
}

// Outcome returns the probability of the swap given the test's estimate
// (Prob) when the test reported it, and otherwise the outcome itself, 1 or
// 0: what a pair's Rao-Blackwellised swap acceptance adds up.
func (r ExchangeResult) Outcome() float64 {
	if r.ProbKnown {
		return r.Prob
	}
	if r.Accepted {
		return 1
	}
	return 0
}

// Test decides the exchange of thetaJ (rung at temperature tj) and thetaK
// (at tk) on potential tp, using rng for batches and test noise.
func (x *Exchanger) Test(tp sampler.TermPotential, thetaJ, thetaK []float64, tj, tk float64, rng *rand.Rand) (ExchangeResult, error) {
	if x.Correction == nil {
		return ExchangeResult{}, fmt.Errorf("exchange: no correction table")
	}
	size := tp.Size()
	n := max(x.Batch, 2)
	maxN := x.MaxBatch
	if maxN <= 0 {
		maxN = 1 << 20
	}
	if size > 0 {
		maxN = size
	}
	c := 1/tj - 1/tk
	var res ExchangeResult
	have := 0 // terms evaluated so far: a grown batch extends the same order
	for {
		n = min(n, maxN)
		for t := range x.buf {
			if len(x.buf[t]) < n {
				x.buf[t] = append(x.buf[t][:have], make([]float64, n-have)...)
			}
		}
		x.thetas = [2][]float64{thetaJ, thetaK}
		x.outs = [2][]float64{x.buf[0][have:], x.buf[1][have:]}
		err := tp.Terms(x.thetas[:], have, n, rng, x.outs[:])
		x.thetas, x.outs = [2][]float64{}, [2][]float64{} // hold no caller's memory
		if err != nil {
			return res, fmt.Errorf("exchange: %w", err)
		}
		have = n
		// d_i = c (u_i(theta_j) - u_i(theta_k)); deltaE = mean, sigma = sd/sqrt(n)
		mean, m2 := pairedDifferences(c, x.buf[0][:n], x.buf[1][:n])
		if err := finiteDeltaE(mean, m2, tj, tk); err != nil {
			return res, err
		}
		res.DeltaE, res.N = mean, n
		exact := size > 0 && n >= size
		if exact {
			res.Exact, res.Sigma = true, 0
			res.Accepted = mean+SampleLogistic(rng) > 0
			res.Prob, res.ProbKnown = Logistic(mean), true
			return res, nil
		}
		variance := m2 / float64(n-1) / float64(n)
		if size > 0 {
			variance *= 1 - float64(n)/float64(size) // finite-population correction
		}
		res.Sigma = math.Sqrt(variance)
		if decided, accept := x.earlyDecision(mean, res.Sigma); decided {
			// deterministic given the estimate: its probability is its outcome
			res.Early, res.Accepted, res.ProbKnown = true, accept, true
			if accept {
				res.Prob = 1
			}
			return res, nil
		}
		if res.Sigma <= x.Correction.Sigma {
			pad := math.Sqrt(x.Correction.Sigma*x.Correction.Sigma - variance)
			res.Accepted = mean+pad*rng.NormFloat64()+x.Correction.Sample(rng) > 0
			res.Prob, res.ProbKnown = x.Correction.SwapProbability(mean, pad), true
			return res, nil
		}
		if n >= maxN {
			return res, fmt.Errorf("exchange: noise sd %.3g of deltaE still above the correction's %.3g with %d examples", res.Sigma, x.Correction.Sigma, n)
		}
		res.Grown = true
		n *= 2
	}
}

// finiteDeltaE returns an error wrapping sampler.ErrDiverged when an
// exchange's deltaE estimate (its mean and sum of squared deviations) is not
// finite: the energy of a rung at tj or tk is, so a chain diverged, and
// without the check the test would report a noise sd of NaN instead.
func finiteDeltaE(mean, m2, tj, tk float64) error {
	if math.IsNaN(mean) || math.IsInf(mean, 0) || math.IsNaN(m2) || math.IsInf(m2, 0) {
		return fmt.Errorf("exchange between the rungs at T=%g and T=%g: deltaE estimate %v: the energy of a replica is not finite: %w", tj, tk, mean, sampler.ErrDiverged)
	}
	return nil
}

// pairedDifferences returns the mean of d_i = c (a_i - b_i) and the sum of
// squared deviations from it (Welford's algorithm): an exchange test's
// estimate of deltaE from paired per-example energy terms, and what its
// variance is computed from.
func pairedDifferences(c float64, a, b []float64) (mean, m2 float64) {
	for i := range a {
		d := c * (a[i] - b[i])
		delta := d - mean
		mean += delta / float64(i+1)
		m2 += delta * (d - mean)
	}
	return mean, m2
}

// earlyDecision reports whether an exchange whose deltaE is estimated as mean
// with standard error sigma can be decided without more data, and how.
//
// The Margin rule rejects when mean + 6 sigma < -Margin: at 6 standard errors
// the swap probability is below exp(-Margin) (and symmetrically accepts).
//
// The Tolerance rule bounds the error directly. With deltaE's estimate
// normal about the true value (the approximation the corrected test itself
// makes), the full-data test's swap probability averaged over that
// uncertainty is E[Logistic(mean + sigma Z)] <= E[exp(mean + sigma Z)] =
// exp(mean + sigma^2/2), since Logistic(x) <= exp(x). So rejecting when
//
//	mean + sigma^2/2 < log(Tolerance)
//
// gives up a swap that would happen with probability at most Tolerance
// (and, from the other side, when the true deltaE is d the chance of such an
// estimate times Logistic(d) is at most Tolerance too); accepting when
// -mean + sigma^2/2 < log(Tolerance) is the mirror image, as
// 1 - Logistic(x) = Logistic(-x) <= exp(-x).
func (x *Exchanger) earlyDecision(mean, sigma float64) (decided, accept bool) {
	if x.Margin > 0 {
		if mean+6*sigma < -x.Margin {
			return true, false
		}
		if mean-6*sigma > x.Margin {
			return true, true
		}
	}
	if x.Tolerance > 0 {
		logTol := math.Log(x.Tolerance)
		if mean+sigma*sigma/2 < logTol {
			return true, false
		}
		if -mean+sigma*sigma/2 < logTol {
			return true, true
		}
	}
	return false, false
}
