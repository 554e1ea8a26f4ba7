package driver

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/gonum/mat"
)

// badScale is issue 29's badly scaled posterior: a Bayesian linear
// regression with an unknown noise level, y = X beta + N(0, sigma^2), 100
// examples, 5 predictors of sd badScaleSD with pairwise correlations -0.14 to
// -0.36, beta ~ N(0, 10^2 I), sigma ~ half-N(0, 10). It is sampled as
// theta = (beta, s) with s = log sigma, so
//
//	U(theta) = sum_i [r_i^2 exp(-2s)/2 + s] + beta'beta/200 + exp(2s)/200 - s
//
// with r_i = y_i - x_i'beta (the last two terms are the half-normal prior of
// sigma and the Jacobian of s). Its posterior sds are about 0.001 for each
// coefficient and 0.071 for sigma: curvatures a million times apart.
//
// It is a sampler.Potential: Gradient estimates U and grad U on a minibatch
// of Batch examples drawn in epochs (without replacement, as
// autodiff.Potential does) from its own seeded order, scaled by N/Batch;
// with Batch >= N it is exact.
type badScale struct {
	N, P  int
	X     []float64 // N x P, row major
	Y     []float64
	Batch int

	order []int
	pos   int
	rng   *rand.Rand
}

// badScaleSD is the predictors' sd of most bad-scale tests: 100 rather than
// the "about 200", so that the case reproduces the table
// (coefficient sds about 0.001, and the full-batch chain at lr 3e-5 within
// 1.00-1.05 of them). At 200 the stiffest direction has omega h = 1.29 at
// lr 3e-5, not by this draw's chance but in expectation (X'X is about
// 100 * 200^2 times the correlation matrix, whose largest eigenvalue is
// 1.38), and the full-batch chain's coefficient sds are 13-20% wide:
// TestBadScaleHealth and TestBadScalePreconditioned run there too.
const badScaleSD = 100.0

// badScaleCorr are the predictors' pairwise correlations, row by row of the
// upper triangle.
var badScaleCorr = []float64{-0.14, -0.36, -0.18, -0.22, -0.16, -0.20, -0.15, -0.25, -0.17, -0.19}

// newBadScale draws the data set from a seeded stream: x = badScaleSD L z with L
// the Cholesky factor of the correlation matrix, beta = (1, 0.9, 1.1, 0.95,
// 1.05), sigma = 1.
func newBadScale(seed uint64) (*badScale, error) { return newBadScaleSD(seed, badScaleSD) }

// newBadScaleSD is newBadScale with predictors of sd sd.
func newBadScaleSD(seed uint64, sd float64) (*badScale, error) {
	const n, p = 100, 5
	corr := mat.NewSymDense(p, nil)
	k := 0
	for a := 0; a < p; a++ {
		corr.SetSym(a, a, 1)
		for b := a + 1; b < p; b++ {
			corr.SetSym(a, b, badScaleCorr[k])
			k++
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(corr) {
		return nil, errors.New("bad-scale case: correlation matrix not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	beta := []float64{1, 0.9, 1.1, 0.95, 1.05}
	rng := sampler.NewStream(seed, 29)
	bs := &badScale{N: n, P: p, X: make([]float64, n*p), Y: make([]float64, n), Batch: n}
	z := make([]float64, p)
	for i := 0; i < n; i++ {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		y := 0.0
		for a := 0; a < p; a++ {
			x := 0.0
			for b := 0; b <= a; b++ {
				x += l.At(a, b) * z[b]
			}
			bs.X[i*p+a] = sd * x
			y += sd * x * beta[a]
		}
		bs.Y[i] = y + rng.NormFloat64()
	}
	return bs, nil
}

// start returns the least-squares fit of beta, with s = 0.
func (bs *badScale) start() []float64 {
	x := mat.NewDense(bs.N, bs.P, bs.X)
	y := mat.NewVecDense(bs.N, bs.Y)
	var b mat.VecDense
	if err := b.SolveVec(x, y); err != nil {
		return make([]float64, bs.P+1)
	}
	return append(append([]float64(nil), b.RawVector().Data...), 0)
}

// withBatch returns a copy of the problem (sharing its data) drawing
// minibatches of size batch from an order seeded by seed.
func (bs *badScale) withBatch(batch int, seed uint64) *badScale {
	c := &badScale{N: bs.N, P: bs.P, X: bs.X, Y: bs.Y, Batch: batch}
	c.rng = rand.New(rand.NewPCG(seed, 0x29))
	return c
}

// Dim returns P + 1.
func (bs *badScale) Dim() int { return bs.P + 1 }

// Gradient writes the minibatch estimate of grad U into grad and returns
// the estimate of U.
func (bs *badScale) Gradient(theta, grad []float64, _ sampler.Minibatch, _ *rand.Rand) (float64, error) {
	if len(theta) != bs.P+1 || len(grad) != bs.P+1 {
		return 0, fmt.Errorf("bad-scale potential: theta %d and grad %d, want %d", len(theta), len(grad), bs.P+1)
	}
	p := bs.P
	s := theta[p]
	w := math.Exp(-2 * s)
	clear(grad)
	u := 0.0
	take := func(i int) {
		r := bs.Y[i]
		for a := 0; a < p; a++ {
			r -= bs.X[i*p+a] * theta[a]
		}
		u += r*r*w/2 + s
		for a := 0; a < p; a++ {
			grad[a] -= bs.X[i*p+a] * r * w
		}
		grad[p] += 1 - r*r*w
	}
	scale := 1.0
	if bs.Batch >= bs.N {
		for i := 0; i < bs.N; i++ {
			take(i)
		}
	} else {
		if bs.order == nil {
			bs.order = make([]int, bs.N)
			for i := range bs.order {
				bs.order[i] = i
			}
			bs.pos = bs.N
		}
		for b := 0; b < bs.Batch; b++ {
			if bs.pos == bs.N {
				bs.rng.Shuffle(bs.N, func(i, j int) { bs.order[i], bs.order[j] = bs.order[j], bs.order[i] })
				bs.pos = 0
			}
			take(bs.order[bs.pos])
			bs.pos++
		}
		scale = float64(bs.N) / float64(bs.Batch)
	}
	u *= scale
	for a := range grad {
		grad[a] *= scale
	}
	for a := 0; a < p; a++ {
		u += theta[a] * theta[a] / 200
		grad[a] += theta[a] / 100
	}
	sig2 := math.Exp(2 * s)
	u += sig2/200 - s
	grad[p] += sig2/100 - 1
	if math.IsNaN(u) || math.IsInf(u, 0) {
		return u, sampler.ErrDiverged
	}
	return u, nil
}

// badScaleMoments are the posterior means and sds of beta (P values), s =
// log sigma and sigma.
type badScaleMoments struct {
	BetaMean, BetaSD         []float64
	SMean, SSD               float64
	SigmaMean, SigmaSD       float64
	GridPoints               int
	GridLo, GridHi, GridMass float64 // s range and the posterior mass at its ends
}

// exact returns the posterior moments: beta given sigma is Gaussian,
// N(m, V) with V = (X'X/sigma^2 + I/100)^-1 and m = V X'y/sigma^2, and
// sigma's marginal, p(y | sigma) p(sigma) (times sigma for s = log sigma),
// is integrated over a grid of s.
func (bs *badScale) exact() (badScaleMoments, error) {
	p, n := bs.P, bs.N
	xtx := mat.NewSymDense(p, nil)
	xty := mat.NewVecDense(p, nil)
	yty := 0.0
	for i := 0; i < n; i++ {
		yty += bs.Y[i] * bs.Y[i]
		for a := 0; a < p; a++ {
			xty.SetVec(a, xty.AtVec(a)+bs.X[i*p+a]*bs.Y[i])
			for b := a; b < p; b++ {
				xtx.SetSym(a, b, xtx.At(a, b)+bs.X[i*p+a]*bs.X[i*p+b])
			}
		}
	}
	const pts, lo, hi = 8001, -1.0, 1.0
	logw := make([]float64, pts)
	ms := make([][]float64, pts)
	vs := make([][]float64, pts)
	prec := mat.NewSymDense(p, nil)
	var ch mat.Cholesky
	var m mat.VecDense
	best := math.Inf(-1)
	for g := 0; g < pts; g++ {
		s := lo + (hi-lo)*float64(g)/float64(pts-1)
		s2 := math.Exp(2 * s)
		for a := 0; a < p; a++ {
			for b := a; b < p; b++ {
				v := xtx.At(a, b) / s2
				if a == b {
					v += 1.0 / 100
				}
				prec.SetSym(a, b, v)
			}
		}
		if !ch.Factorize(prec) {
			return badScaleMoments{}, fmt.Errorf("exact posterior: precision at s = %g not positive definite", s)
		}
		var rhs mat.VecDense
		rhs.ScaleVec(1/s2, xty)
		if err := ch.SolveVecTo(&m, &rhs); err != nil {
			return badScaleMoments{}, fmt.Errorf("exact posterior at s = %g: %w", s, err)
		}
		var cov mat.SymDense
		if err := ch.InverseTo(&cov); err != nil {
			return badScaleMoments{}, fmt.Errorf("exact posterior at s = %g: %w", s, err)
		}
		// log p(y|sigma) up to a constant: -n s - y'y/(2 sigma^2) +
		// m'Pm/2 - log det P/2; the prior of sigma -sigma^2/200; + s for
		// the Jacobian of s = log sigma.
		lw := -float64(n)*s - yty/(2*s2) + 0.5*mat.Dot(&m, &rhs) - 0.5*ch.LogDet() - s2/200 + s
		logw[g] = lw
		best = math.Max(best, lw)
		ms[g] = append([]float64(nil), m.RawVector().Data...)
		vs[g] = make([]float64, p)
		for a := 0; a < p; a++ {
			vs[g][a] = cov.At(a, a)
		}
	}
	var mo badScaleMoments
	mo.BetaMean, mo.BetaSD = make([]float64, p), make([]float64, p)
	beta2 := make([]float64, p)
	total, s1, s2m, g1, g2 := 0.0, 0.0, 0.0, 0.0, 0.0
	for g := range logw {
		w := math.Exp(logw[g] - best)
		total += w
	}
	for g := range logw {
		w := math.Exp(logw[g]-best) / total
		s := lo + (hi-lo)*float64(g)/float64(pts-1)
		s1 += w * s
		s2m += w * s * s
		g1 += w * math.Exp(s)
		g2 += w * math.Exp(2*s)
		for a := 0; a < p; a++ {
			mo.BetaMean[a] += w * ms[g][a]
			beta2[a] += w * (vs[g][a] + ms[g][a]*ms[g][a])
		}
	}
	for a := 0; a < p; a++ {
		mo.BetaSD[a] = math.Sqrt(beta2[a] - mo.BetaMean[a]*mo.BetaMean[a])
	}
	mo.SMean, mo.SSD = s1, math.Sqrt(s2m-s1*s1)
	mo.SigmaMean, mo.SigmaSD = g1, math.Sqrt(g2-g1*g1)
	mo.GridPoints, mo.GridLo, mo.GridHi = pts, lo, hi
	mo.GridMass = (math.Exp(logw[0]-best) + math.Exp(logw[pts-1]-best)) / total
	return mo, nil
}

// badScaleCheck compares samples of theta = (beta, s) with the exact
// moments: each coefficient's and sigma's sd as a ratio to the exact one,
// and their mean errors in posterior sds.
type badScaleCheck struct {
	BetaSDRatio, BetaMeanErr []float64
	SigmaMean, SigmaSD       float64
	SigmaSDRatio, SigmaErr   float64
}

func (mo badScaleMoments) check(xs [][]float64) badScaleCheck {
	p := len(mo.BetaMean)
	var c badScaleCheck
	col := func(f func(x []float64) float64) (mean, sd float64) {
		for _, x := range xs {
			mean += f(x)
		}
		mean /= float64(len(xs))
		for _, x := range xs {
			d := f(x) - mean
			sd += d * d
		}
		return mean, math.Sqrt(sd / float64(len(xs)-1))
	}
	for a := 0; a < p; a++ {
		m, sd := col(func(x []float64) float64 { return x[a] })
		c.BetaSDRatio = append(c.BetaSDRatio, sd/mo.BetaSD[a])
		c.BetaMeanErr = append(c.BetaMeanErr, (m-mo.BetaMean[a])/mo.BetaSD[a])
	}
	c.SigmaMean, c.SigmaSD = col(func(x []float64) float64 { return math.Exp(x[p]) })
	c.SigmaSDRatio, c.SigmaErr = c.SigmaSD/mo.SigmaSD, (c.SigmaMean-mo.SigmaMean)/mo.SigmaSD
	return c
}

// within reports whether every sd is within sdTol (relative) of the exact
// one and every mean within meanTol posterior sds.
func (c badScaleCheck) within(sdTol, meanTol float64) bool {
	ok := math.Abs(c.SigmaSDRatio-1) <= sdTol && math.Abs(c.SigmaErr) <= meanTol
	for a := range c.BetaSDRatio {
		ok = ok && math.Abs(c.BetaSDRatio[a]-1) <= sdTol && math.Abs(c.BetaMeanErr[a]) <= meanTol
	}
	return ok
}

func (c badScaleCheck) String() string {
	lo, hi, worst := math.Inf(1), math.Inf(-1), 0.0
	for a := range c.BetaSDRatio {
		lo, hi = math.Min(lo, c.BetaSDRatio[a]), math.Max(hi, c.BetaSDRatio[a])
		worst = math.Max(worst, math.Abs(c.BetaMeanErr[a]))
	}
	return fmt.Sprintf("coefficient sds / exact %.3f-%.3f (mean errors up to %.2f sd); sigma mean %.4f (%+.2f sd), sd / exact %.3f",
		lo, hi, worst, c.SigmaMean, c.SigmaErr, c.SigmaSDRatio)
}

// badScaleRun is one chain on the bad-scale case as the issue ran it:
// kernel SGNHT with train's step h = sqrt(lr/N) and diffusion A =
// friction/h, from the least-squares fit of beta and s = 0 (from beta = 0
// the first gradients, about 4e6, heat the momentum a millionfold and the
// thermostat's overshoot takes most of the run to relax: another failure).
type badScaleRun struct {
	LR, Friction float64
	Batch        int
	Steps, Burn  int
	Thin         int
	Window       int // health window (0: 5,000 steps)
	Seed         uint64
	Precond      adapt.Preconditioner
}

// run returns every Thin-th position after burn-in and the rung's health.
func (r badScaleRun) run(t testing.TB, bs *badScale) ([][]float64, health.Health) {
	t.Helper()
	h := math.Sqrt(r.LR / float64(bs.N))
	k := sampler.SGNHT{StepSize: h, Diffusion: r.Friction / h}
	win := r.Window
	if win == 0 {
		win = 5000
	}
	pt := testDriver(testPT{Kernel: k, Temps: []float64{1}, Workers: 1, BurnIn: r.Burn, HealthWindow: win, Precondition: r.Precond})
	st, err := pt.Init([][]float64{bs.start()}, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	pot := bs.withBatch(r.Batch, r.Seed)
	thin := max(r.Thin, 1)
	var xs [][]float64
	err = pt.Run([]sampler.Potential{pot}, nil, st, r.Steps, func(s *tempering.PTState) error {
		if s.Steps > r.Burn && s.Steps%thin == 0 {
			xs = append(xs, append([]float64(nil), s.Rungs[0].Theta...))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return xs, st.Stats.Health[0]
}

// TestBadScaleExact checks the exact posterior of the bad-scale case
// against the figures (coefficient sds about 0.001, sigma's about
// 0.077 around 1.04) and that the grid holds all of sigma's mass.
func TestBadScaleExact(t *testing.T) {
	bs, err := newBadScale(1)
	if err != nil {
		t.Fatal(err)
	}
	mo, err := bs.exact()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("beta mean %.5f sd %.5f; s mean %.4f sd %.4f; sigma mean %.4f sd %.4f; mass at the grid's ends %.2g",
		mo.BetaMean, mo.BetaSD, mo.SMean, mo.SSD, mo.SigmaMean, mo.SigmaSD, mo.GridMass)
	for a, sd := range mo.BetaSD {
		if sd < 3e-4 || sd > 3e-3 {
			t.Errorf("beta %d: sd %.3g, want about 0.001", a, sd)
		}
		if math.Abs(mo.BetaMean[a]-[]float64{1, 0.9, 1.1, 0.95, 1.05}[a]) > 0.02 {
			t.Errorf("beta %d: mean %.4f, far from the truth", a, mo.BetaMean[a])
		}
	}
	if mo.SigmaSD < 0.05 || mo.SigmaSD > 0.1 || math.Abs(mo.SigmaMean-1) > 0.2 {
		t.Errorf("sigma mean %.4f sd %.4f, want about 1 and 0.077", mo.SigmaMean, mo.SigmaSD)
	}
	if mo.GridMass > 1e-20 {
		t.Errorf("posterior mass %.3g at the grid's ends: widen it", mo.GridMass)
	}
}

// TestBadScaleIdentityFails shows today's failure on the bad-scale case
// (issue 29): SGNHT with unit mass at minibatch 20, lr 3e-5, friction 0.1
// per step samples sigma's sd far off (the issue: 0.21 against 0.077; here,
// from the least-squares start, a quarter of the exact sd: the thermostat
// rises to absorb the coefficients' gradient noise, about 50 times the
// injected noise, and its friction, hundreds per step, freezes sigma).
func TestBadScaleIdentityFails(t *testing.T) {
	bs, err := newBadScale(1)
	if err != nil {
		t.Fatal(err)
	}
	mo, err := bs.exact()
	if err != nil {
		t.Fatal(err)
	}
	xs, hl := badScaleRun{LR: 3e-5, Friction: 0.1, Batch: 20, Steps: 200000, Burn: 50000, Thin: 10, Seed: 1}.run(t, bs)
	c := mo.check(xs)
	t.Logf("identity mass, batch 20: %v; health %d/%d windows failed, worst %v", c, hl.Bad, hl.After, hl.WorstWindow)
	if math.Abs(c.SigmaSDRatio-1) < 0.5 {
		t.Errorf("sigma's sd / exact %.3f: today's failure (far off) not reproduced", c.SigmaSDRatio)
	}
	if c.within(0.1, 0.3) {
		t.Error("identity mass at batch 20 sampled the posterior: the case does not show the failure")
	}
}

// badScaleHealthDraws are the data sets (seeds of newBadScaleSD) on which
// TestBadScaleHealth checks its verdicts: the first alone, all three with
// -tags=long (badscale_long_test.go).
var badScaleHealthDraws = []uint64{1}

// TestBadScaleHealth checks the health check's verdicts on issue 29's case
// at the scale, predictors of sd 200 (issue 29's bars). There the
// stiffest direction has omega h = 1.29 at lr 3e-5 (100 * 200^2 times the
// correlation matrix's largest eigenvalue, 1.38, for X'X; sigma 1): it is
// the population's figure, not this draw's, so any data set the issue
// describes is that stiff, and a unit-mass chain at lr 3e-5 has coefficient
// sds 10-19% wide even at full batch (symplectic Euler widens a direction
// by about 1/sqrt(1 - (omega h)^2/4)). So:
//
//   - full batch at lr 1e-5 (omega h at most 0.74) is a posterior,
//     coefficient sds within 5% of the exact ones, and is called ok (its
//     integration error reads as sds about 3% wide, below WarnIntSD);
//   - full batch at the lr 3e-5 is too large a step for the stiff
//     directions, its coefficient sds 10% or more wide, and is refused
//     naming integration error, never gradient noise;
//   - minibatch 20 at lr 1e-5 is refused naming gradient noise;
//   - minibatch 20 at lr 3e-5 has both causes: refused, integration error
//     first (its coefficient sds are too wide, as integration error makes
//     them; gradient noise alone makes them narrow), gradient noise listed
//     beyond its failing share;
//
// and at predictor sd 100, where omega h is 0.68 at lr 3e-5, the full-batch
// chain (sds 1-3% wide, the table's 1.00-1.05) is called ok.
func TestBadScaleHealth(t *testing.T) {
	for _, draw := range badScaleHealthDraws {
		for _, tc := range []struct {
			name  string
			sd    float64
			run   badScaleRun
			want  health.HealthStatus // the worst window's
			cause health.HealthCause  // its cause
			noise bool                // gradient noise beyond FailShare also
		}{
			{"sd200/full_batch_lr6e-6", 200, badScaleRun{LR: 6e-6, Batch: 100, Steps: 1000000, Burn: 200000}, health.HealthOK, health.CauseNone, false},
			{"sd200/full_batch_lr1e-5", 200, badScaleRun{LR: 1e-5, Batch: 100, Steps: 1000000, Burn: 200000}, health.HealthWarn, health.CauseIntegration, false},
			{"sd200/full_batch_lr3e-5", 200, badScaleRun{LR: 3e-5, Batch: 100}, health.HealthFail, health.CauseIntegration, false},
			{"sd200/batch20_lr6e-6", 200, badScaleRun{LR: 6e-6, Batch: 20}, health.HealthFail, health.CauseNoise, false},
			{"sd200/batch20_lr3e-5", 200, badScaleRun{LR: 3e-5, Batch: 20}, health.HealthFail, health.CauseIntegration, true},
			{"sd100/full_batch_lr3e-5", 100, badScaleRun{LR: 3e-5, Batch: 100, Steps: 1000000, Burn: 200000}, health.HealthOK, health.CauseNone, false},
		} {
			t.Run(fmt.Sprintf("draw%d/%s", draw, tc.name), func(t *testing.T) {
				bs, err := newBadScaleSD(draw, tc.sd)
				if err != nil {
					t.Fatal(err)
				}
				mo, err := bs.exact()
				if err != nil {
					t.Fatal(err)
				}
				r := tc.run
				if r.Steps == 0 {
					r.Steps, r.Burn = 200000, 50000
				}
				r.Friction, r.Thin, r.Seed = 0.1, 10, 1
				xs, hl := r.run(t, bs)
				c := mo.check(xs)
				w := hl.WorstWindow
				t.Logf("%v; %d/%d windows failed, %d warned; worst: %v", c, hl.Bad, hl.After, hl.Warned, w)
				lo, hi := math.Inf(1), 0.0
				for _, q := range c.BetaSDRatio {
					lo, hi = math.Min(lo, q), math.Max(hi, q)
				}
				if hl.Worst != tc.want {
					t.Errorf("verdict %v, want %v: %v", hl.Worst, tc.want, w)
				}
				if tc.want != health.HealthFail {
					// the verdict is honest: the coefficient sds are within
					// 5% (sigma's, which mixes over thousands of steps, 10%)
					if lo < 0.95 || hi > 1.05 || math.Abs(c.SigmaSDRatio-1) > 0.1 {
						t.Errorf("called a posterior, but sds / exact are %.3f-%.3f (sigma %.3f)", lo, hi, c.SigmaSDRatio)
					}
				}
				if got := w.Cause(); got != tc.cause {
					t.Errorf("cause %q, want %q", got, tc.cause)
				}
				if r.Batch >= bs.N && w.Share > health.WarnShare {
					t.Errorf("full batch read as gradient noise: share %.2f", w.Share)
				}
				if tc.want == health.HealthFail && tc.cause == health.CauseIntegration && hi < 1.1 {
					t.Errorf("refused for integration error, but the coefficient sds are only %.3f-%.3f of exact", lo, hi)
				}
				if tc.noise && (w.Share <= health.FailShare || !strings.Contains(strings.Join(w.Problems(), "; "), "gradient noise")) {
					t.Errorf("gradient noise not named beside the cause: share %.2f, problems %q", w.Share, w.Problems())
				}
			})
		}
	}
}

// TestBadScalePreconditioned is issue 29's bar: with a diagonal mass
// estimated during burn-in and then frozen, SGNHT at minibatch 20, lr 3e-5
// and friction 0.1 per step samples the bad-scale posterior: every
// coefficient's and sigma's sd within 10% of the exact one and every mean
// within 0.3 sd, and the health check does not fail.
//
// It runs at the predictors' sd of the other bad-scale tests (100) and at
// the 200, where the unit-mass chain's stiffest direction is past
// its integrator's accuracy (omega h = 1.25) but the mass takes it in.
func TestBadScalePreconditioned(t *testing.T) {
	for _, sd := range []float64{badScaleSD, 200} {
		bs, err := newBadScaleSD(1, sd)
		if err != nil {
			t.Fatal(err)
		}
		mo, err := bs.exact()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []adapt.Preconditioner{adapt.PrecondRMSprop, adapt.PrecondVariance} {
			runPreconditioned(t, bs, mo, p, sd)
		}
	}
}

// runPreconditioned is one case of TestBadScalePreconditioned.
func runPreconditioned(t *testing.T, bs *badScale, mo badScaleMoments, p adapt.Preconditioner, sd float64) {
	t.Run(fmt.Sprintf("%v/sd%g", p, sd), func(t *testing.T) {
		xs, hl := badScaleRun{LR: 3e-5, Friction: 0.1, Batch: 20, Steps: 1200000, Burn: 200000, Thin: 10, Seed: 1, Precond: p}.run(t, bs)
		c := mo.check(xs)
		t.Logf("%v: %v; health %d/%d windows failed, %d warned, worst %v", p, c, hl.Bad, hl.After, hl.Warned, hl.WorstWindow)
		if !c.within(0.1, 0.3) {
			t.Errorf("%v: not within 10%% in sds and 0.3 sd in means", p)
		}
		if hl.Worst == health.HealthFail {
			t.Errorf("%v: the health check failed a window", p)
		}
	})
}

// BenchmarkBadScaleESS compares, on the bad-scale case, SGNHT with unit
// mass and with the preconditioners (friction 0.1 per step, 1.2 million
// steps, the first 200,000 burn-in, every 20th kept): the smallest bulk
// ESS over the six coordinates per 1,000 gradient evaluations and per 1,000 per-example
// gradients (a full-batch evaluation costs 100, a batch of 20 costs 20),
// and the worst sd error (coefficients and sigma) against the exact
// posterior: an ESS of samples from the wrong distribution is no gain.
// Run: go test -run XXX -bench BadScaleESS -benchtime 1x ./sampler/
func BenchmarkBadScaleESS(b *testing.B) {
	bs, err := newBadScale(1)
	if err != nil {
		b.Fatal(err)
	}
	mo, err := bs.exact()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		lr      float64
		batch   int
		precond adapt.Preconditioner
	}{
		{"identity_full_lr3e-5", 3e-5, 100, adapt.PrecondNone},
		{"identity_b20_lr3e-5", 3e-5, 20, adapt.PrecondNone},
		{"rmsprop_b20_lr3e-5", 3e-5, 20, adapt.PrecondRMSprop},
		{"variance_b20_lr3e-5", 3e-5, 20, adapt.PrecondVariance},
		{"rmsprop_b20_lr3e-4", 3e-4, 20, adapt.PrecondRMSprop},
		{"rmsprop_b20_lr1e-3", 1e-3, 20, adapt.PrecondRMSprop},
		{"rmsprop_full_lr3e-3", 3e-3, 100, adapt.PrecondRMSprop},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				const steps, burn = 1200000, 200000
				// every 20th step: the ESS estimator's cost grows as
				// samples times lags, and the chains' lags run to thousands
				xs, hl := badScaleRun{LR: c.lr, Friction: 0.1, Batch: c.batch, Steps: steps, Burn: burn, Thin: 20, Seed: 1, Precond: c.precond}.run(b, bs)
				chk := mo.check(xs)
				minESS := math.Inf(1)
				for j := 0; j <= bs.P; j++ {
					tr := make([]float64, len(xs))
					for s, x := range xs {
						tr[s] = x[j]
					}
					minESS = math.Min(minESS, diagnose.BulkESS([][]float64{tr}))
				}
				worst := math.Abs(chk.SigmaSDRatio - 1)
				for _, r := range chk.BetaSDRatio {
					worst = math.Max(worst, math.Abs(r-1))
				}
				n := float64(steps - burn)
				b.ReportMetric(1000*minESS/n, "ESS/1000grad")
				b.ReportMetric(1000*minESS/(n*float64(c.batch)), "ESS/1000examples")
				b.ReportMetric(worst, "sd-error")
				b.ReportMetric(float64(hl.Bad)/float64(max(hl.After, 1)), "failed-windows")
			}
		})
	}
}

// BenchmarkSuiteESS compares unit mass with the preconditioners on the
// posterior suite's regression (500 examples, 10 inputs, batch 100, SGNHT
// at the suite's h 2.2e-3 and friction 0.1 per step; 110,000 steps, 10,000
// burn-in), a well-conditioned posterior: the smallest bulk ESS over the 11
// coordinates per 1,000 gradients and the worst sd error.
// Run: go test -run XXX -bench SuiteESS -benchtime 1x ./sampler/
func BenchmarkSuiteESS(b *testing.B) {
	lr, err := newLinReg(500, 10, 1)
	if err != nil {
		b.Fatal(err)
	}
	const h, steps, burn = 2.2e-3, 110000, 10000
	for _, p := range []adapt.Preconditioner{adapt.PrecondNone, adapt.PrecondRMSprop, adapt.PrecondVariance} {
		b.Run(p.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				pot, err := lr.potential(100, 100)
				if err != nil {
					b.Fatal(err)
				}
				pt := testDriver(testPT{Kernel: sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h}, Temps: []float64{1}, Workers: 1, BurnIn: burn, Precondition: p})
				st, err := pt.Init([][]float64{lr.init(1)}, 1)
				if err != nil {
					b.Fatal(err)
				}
				var xs [][]float64
				err = pt.Run([]sampler.Potential{pot}, nil, st, steps, func(s *tempering.PTState) error {
					if s.Steps > burn && s.Steps%5 == 0 {
						xs = append(xs, append([]float64(nil), s.Rungs[0].Theta...))
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				chk := lr.check(xs, 1)
				minESS := math.Inf(1)
				for j := range lr.Mean {
					tr := make([]float64, len(xs))
					for s, x := range xs {
						tr[s] = x[j]
					}
					minESS = math.Min(minESS, diagnose.BulkESS([][]float64{tr}))
				}
				b.ReportMetric(1000*minESS/(steps-burn), "ESS/1000grad")
				b.ReportMetric(math.Max(1-chk.SDMin, chk.SDMax-1), "sd-error")
			}
		})
	}
}
