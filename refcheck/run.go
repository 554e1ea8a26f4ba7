package refcheck

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/diagnose"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/gonum/mat"
)

// Start is where a case's chain starts.
type Start int

const (
	// StartLeastSquares starts the coefficients at the least-squares fit
	// and log sigma at the log of its residual sd: the start a user who
	// knows regression would pick, near the posterior's mode.
	StartLeastSquares Start = iota
	// StartModelInit starts at the model's own initial values
	// (nn.Layout.Init: zero coefficients, sigma = 1), far from the
	// posterior on these data: the start-up transient of issue 43.
	StartModelInit
)

// String returns "least-squares" or "model-init".
func (s Start) String() string {
	if s == StartModelInit {
		return "model-init"
	}
	return "least-squares"
}

// Case is one chain of the harness: a kernel with train's parameters on a
// posterior, sampled by a driver.Driver with one rung (as train runs one
// chain).
type Case struct {
	Posterior string
	Kernel    string               // "sgnht", "sghmc" or "sgld"
	Precond   adapt.Preconditioner // estimated during burn-in, then frozen
	MassScale adapt.MassScale      // how the mass is normalised
	// Rank is a low-rank mass's k (adapt.PrecondLowRank; 0: its default).
	Rank int
	// Batch is the minibatch size (0 or at least N: the full data set).
	Batch int
	// LR is train's per-example learning rate: the step h = sqrt(LR/N) of
	// SGNHT and SGHMC, SGLD's step 2 LR/N.
	LR float64
	// Friction is the momentum's decay per step (train's --friction): the
	// diffusion or friction A = Friction/h. 0 means 0.1.
	Friction float64
	// Steps in all, of which BurnIn are burn-in (0: a quarter).
	Steps, BurnIn int
	// HealthWindow is the health check's window (0: Steps/200, at least
	// 1,000 steps).
	HealthWindow int
	Seed         uint64 // 0 means 1
	Start        Start
	// UngradedMix runs the chain as train and the public API's default do,
	// without driver.StepHealth.MixCoords: the verdict does not grade the
	// coordinates' mixing (a small model's are watched: health.MixWatch).
	UngradedMix bool
	// NoiseCorrection turns on the gradient-noise correction
	// (driver.NoiseCorrection, train's --noise-correction, with the
	// defaults' ceiling and tracking).
	NoiseCorrection bool
	// Step names the user grid's step (UserGrid; "" elsewhere).
	Step UserStep
	// NoiseTarget, when positive, makes burn-in shrink the step until the
	// gradient noise's share of the diffusion is at most it
	// (driver.StepHealth.NoiseTarget, train's --noise-target).
	NoiseTarget float64
}

// friction returns the friction per step.
func (c Case) friction() float64 {
	if c.Friction == 0 {
		return 0.1
	}
	return c.Friction
}

// burnIn returns the burn-in.
func (c Case) burnIn() int {
	if c.BurnIn == 0 {
		return c.Steps / 4
	}
	return c.BurnIn
}

// window returns the health window.
func (c Case) window() int {
	if c.HealthWindow > 0 {
		return c.HealthWindow
	}
	return max(c.Steps/200, 1000)
}

// kernel returns the case's kernel for n examples, as train builds it.
func (c Case) kernel(n int) (sampler.Kernel, float64, error) {
	if !(c.LR > 0) {
		return nil, 0, fmt.Errorf("case %s: learning rate %v must be positive", c.Posterior, c.LR)
	}
	h := math.Sqrt(c.LR / float64(n))
	switch c.Kernel {
	case "sgnht":
		return sampler.SGNHT{StepSize: h, Diffusion: c.friction() / h}, h, nil
	case "sghmc":
		return sampler.SGHMC{StepSize: h, Friction: c.friction() / h}, h, nil
	case "sgld":
		eps := 2 * c.LR / float64(n)
		return sampler.SGLD{StepSize: eps}, eps, nil
	}
	return nil, 0, fmt.Errorf("case %s: kernel %q: expected sgnht, sghmc or sgld", c.Posterior, c.Kernel)
}

// Result is what a case measured against the reference.
type Result struct {
	Case Case
	N    int // examples
	// Batch is the minibatch size used (N for the full batch).
	Batch int
	// Err is the run's error (a diverged chain: sampler.ErrDiverged
	// wrapped), after which the figures below are empty.
	Err error
	// Compared with the reference, over the kept positions (every step
	// after burn-in): the sd of each coordinate and of the projection on
	// each reference eigenvector (largest eigenvalue first) as ratios to
	// the reference's, and each mean's error in reference sds. These are
	// 2d directions only: a wrong correlation between coordinates whose
	// reference eigenvectors do not mix them reads 1 in all of them
	// (DirectionSD measures every direction).
	MarginalSD, EigenSD, MeanErr []float64
	// DirectionSD is the smallest and the largest, over every direction
	// v, of the kept positions' sd along v as a ratio to the reference's:
	// the square roots of the extreme eigenvalues of L^-1 S L^-T, S the
	// kept positions' covariance and L the Cholesky factor of the
	// reference's. Being the extremes of d whitened directions' ratios,
	// exact draws read about 1 -+ sqrt(d/ESS), not 1 (NaN when the
	// reference's covariance cannot be factorised).
	DirectionSD [2]float64
	// ESS is the smallest bulk ESS (diagnose.BulkESS) over the coordinates
	// and the eigen-directions, of every Thin-th position after burn-in;
	// ESSPer1000 is it per 1,000 steps after burn-in (a minibatch step
	// costs b/N of a full-batch gradient).
	ESS, ESSPer1000 float64
	Thin            int
	// Health is the rung's health watch at the end (no windows for SGLD).
	Health health.Health
	// Mass is the frozen diagonal mass (nil: unit mass, or a dense or
	// low-rank one, in MassMatrix).
	Mass       []float64
	MassMatrix sampler.MassMatrix
	// Xi is the mean friction per step xi h after burn-in (0 for SGLD).
	Xi   float64
	Wall time.Duration
}

// MaxKept is the most positions a case keeps for its ESS: the chain after
// burn-in is thinned to at most this many.
const MaxKept = 40000

// Run runs the case on the posterior's data in dir and compares it with
// the reference summary ref.
func Run(c Case, dir string, ref Reference) (Result, error) {
	p, ok := Posteriors[c.Posterior]
	if !ok {
		return Result{}, fmt.Errorf("case: unknown posterior %q", c.Posterior)
	}
	d, model, err := p.Load(dir)
	if err != nil {
		return Result{}, err
	}
	if ref.Posterior != c.Posterior {
		return Result{}, fmt.Errorf("case %s: the reference is %s's", c.Posterior, ref.Posterior)
	}
	if !slices.Equal(ref.Theta, p.Theta()) {
		return Result{}, fmt.Errorf("case %s: reference %s's coordinates %q, the posterior's %q", c.Posterior, ref.Posterior, ref.Theta, p.Theta())
	}
	if len(ref.Theta) != model.NumParams() {
		return Result{}, fmt.Errorf("case %s: reference has %d coordinates, model %d", c.Posterior, len(ref.Theta), model.NumParams())
	}
	ch, err := newChain(c, d, model)
	if err != nil {
		return Result{}, err
	}
	t0 := time.Now()
	res := ch.run(ref)
	res.Wall = time.Since(t0)
	return res, nil
}

// chain is a case set up to run.
type chain struct {
	c     Case
	n     int
	batch int
	pt    *driver.Driver
	st    *tempering.PTState
	pot   sampler.Potential
}

// newChain builds the case's potential (compiled graph, float64), kernel
// and one-rung PT state.
func newChain(c Case, d Design, model nn.Model) (*chain, error) {
	n := len(d.Y)
	batch := c.Batch
	if batch <= 0 || batch > n {
		batch = n
	}
	ev, err := autodiff.NewFor(autodiff.EngineCompiled, model, batch, autodiff.Float64)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Posterior, err)
	}
	seed := c.Seed
	if seed == 0 {
		seed = 1
	}
	pot, err := autodiff.NewPotential(model, d.Dataset(), ev, batch, rand.New(rand.NewPCG(seed, 43)))
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Posterior, err)
	}
	k, h, err := c.kernel(n)
	if err != nil {
		return nil, err
	}
	if c.Steps-c.burnIn() < 2 {
		return nil, fmt.Errorf("case %s: %d steps, burn-in %d: fewer than two positions to keep, no sd to compare", c.Posterior, c.Steps, c.burnIn())
	}
	phases := []driver.Phase{&driver.StepHealth{Window: c.window(), MixCoords: !c.UngradedMix, ExactGradients: batch == n, NoiseTarget: c.NoiseTarget}}
	if c.Precond != adapt.PrecondNone || c.MassScale != adapt.MassScaleWidest {
		phases = append(phases, &driver.Mass{Precondition: c.Precond, Scale: c.MassScale, Rank: c.Rank})
	}
	if c.NoiseCorrection && batch < n { // train's, with its defaults' ceiling and tracking (none with exact gradients: runspec.Config.CorrectsNoise)
		def := runspec.DefaultConfig()
		phases = append(phases, &driver.NoiseCorrection{Precondition: c.Precond, Ceiling: def.NoiseCeiling, Track: def.NoiseTrack})
	}
	pt := &driver.Driver{Kernel: k, Schedule: driver.Fixed(k, h, 1), PT: &tempering.PT{Temps: []float64{1}}, Workers: 1, BurnIn: c.burnIn(),
		Phases: append(phases, driver.WindowRestart{})}
	theta0, err := c.start(d, model)
	if err != nil {
		return nil, err
	}
	st, err := pt.Init([][]float64{theta0}, seed)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Posterior, err)
	}
	return &chain{c: c, n: n, batch: batch, pt: pt, st: st, pot: pot}, nil
}

// start returns the chain's initial position.
func (c Case) start(d Design, model nn.Model) ([]float64, error) {
	theta := make([]float64, model.NumParams())
	if c.Start == StartModelInit {
		model.Layout.Init(theta, rand.New(rand.NewPCG(1, 1)))
		return theta, nil
	}
	p := Posteriors[c.Posterior]
	coef, s, err := leastSquares(d, p.Model)
	if err != nil {
		return nil, fmt.Errorf("case %s: start: %w", c.Posterior, err)
	}
	copy(theta, coef)
	theta[len(theta)-1] = s
	return theta, nil
}

// leastSquares returns the least-squares coefficients of the regression
// r's design (its intercept first, last or none) and the log of the
// residual sd.
func leastSquares(d Design, r Regression) ([]float64, float64, error) {
	n, k := len(d.Y), len(d.X[0])
	p := k + 1
	if r.NoIntercept {
		p = k
	}
	x := mat.NewDense(n, p, nil)
	for i, row := range d.X {
		off := 0
		switch {
		case r.NoIntercept:
		case r.InterceptFirst:
			x.Set(i, 0, 1)
			off = 1
		default:
			x.Set(i, k, 1)
		}
		for j, v := range row {
			x.Set(i, j+off, v)
		}
	}
	var b mat.VecDense
	if err := b.SolveVec(x, mat.NewVecDense(n, d.Y)); err != nil {
		return nil, 0, err
	}
	rss := 0.0
	for i := 0; i < n; i++ {
		r := d.Y[i] - mat.Dot(x.RowView(i), &b)
		rss += r * r
	}
	return append([]float64(nil), b.RawVector().Data...), 0.5 * math.Log(rss/float64(n-p)), nil
}

// run steps the chain and compares its kept positions with ref.
func (ch *chain) run(ref Reference) Result {
	c := ch.c
	burn := c.burnIn()
	after := c.Steps - burn
	thin := max(1, (after+MaxKept-1)/MaxKept)
	res := Result{Case: c, N: ch.n, Batch: ch.batch, Thin: thin}
	dim := len(ref.Theta)
	var kept [][]float64
	xiSum, xiN := 0.0, 0
	h, _ := ch.dynamics()
	err := ch.pt.Run([]sampler.Potential{ch.pot}, nil, ch.st, c.Steps, func(s *tempering.PTState) error {
		if s.Steps <= burn {
			return nil
		}
		xiSum += s.Rungs[0].Xi * h
		xiN++
		if (s.Steps-burn)%thin == 0 {
			kept = append(kept, append([]float64(nil), s.Rungs[0].Theta...))
		}
		return nil
	})
	res.Health = ch.st.Stats.Health[0]
	res.Mass = append([]float64(nil), ch.st.Rungs[0].Mass...)
	res.MassMatrix = ch.st.Rungs[0].MassMatrix()
	if err != nil {
		res.Err = err
		return res
	}
	if xiN > 0 {
		res.Xi = xiSum / float64(xiN)
	}
	res.compare(kept, ref, dim)
	res.ESSPer1000 = 1000 * res.ESS / float64(after)
	return res
}

// dynamics returns the kernel's step h (0 for SGLD).
func (ch *chain) dynamics() (float64, float64) {
	if f, ok := ch.pt.Kernel.(sampler.Frictional); ok {
		return f.Dynamics()
	}
	return 0, 0
}

// compare fills the ratios, mean errors and ESS from the kept positions.
// With fewer than two positions there is no sd: every figure is NaN (which
// WorstErrors reads as +Inf, the worst error).
func (r *Result) compare(kept [][]float64, ref Reference, dim int) {
	if len(kept) < 2 {
		nan := math.NaN()
		for j := 0; j < dim; j++ {
			r.MarginalSD = append(r.MarginalSD, nan)
			r.MeanErr = append(r.MeanErr, nan)
		}
		for range ref.Eigenvectors {
			r.EigenSD = append(r.EigenSD, nan)
		}
		r.DirectionSD = [2]float64{nan, nan}
		r.ESS = nan
		return
	}
	col := func(f func(x []float64) float64) ([]float64, float64, float64) {
		tr := make([]float64, len(kept))
		mean := 0.0
		for i, x := range kept {
			tr[i] = f(x)
			mean += tr[i]
		}
		mean /= float64(len(tr))
		v := 0.0
		for _, y := range tr {
			v += (y - mean) * (y - mean)
		}
		return tr, mean, math.Sqrt(v / float64(len(tr)-1))
	}
	minESS := math.Inf(1)
	coords := make([][]float64, dim) // each coordinate's trace
	for j := 0; j < dim; j++ {
		tr, m, sd := col(func(x []float64) float64 { return x[j] })
		coords[j] = tr
		r.MarginalSD = append(r.MarginalSD, sd/ref.SD[j])
		r.MeanErr = append(r.MeanErr, (m-ref.Mean[j])/ref.SD[j])
		minESS = math.Min(minESS, diagnose.BulkESS([][]float64{tr}))
	}
	for k, v := range ref.Eigenvectors {
		tr, _, sd := col(func(x []float64) float64 {
			s := 0.0
			for a, va := range v {
				s += va * (x[a] - ref.Mean[a])
			}
			return s
		})
		r.EigenSD = append(r.EigenSD, sd/math.Sqrt(ref.Eigenvalues[k]))
		minESS = math.Min(minESS, diagnose.BulkESS([][]float64{tr}))
	}
	r.ESS = minESS
	r.DirectionSD = directionSD(coords, ref)
}

// directionSD returns the smallest and the largest ratio, over every
// direction v, of the sd along v of the kept positions, given as each
// coordinate's trace (coords), to the reference's:
// sd_kept(v)^2 / sd_ref(v)^2 = v'Sv / v'Cv, whose extremes are the extreme
// eigenvalues of L^-1 S L^-T (C = LL'). NaN when C is not positive
// definite.
func directionSD(coords [][]float64, ref Reference) [2]float64 {
	nan := [2]float64{math.NaN(), math.NaN()}
	dim := len(coords)
	if len(ref.Cov) != dim {
		return nan
	}
	var chol mat.Cholesky
	if !chol.Factorize(ref.covMatrix()) {
		return nan
	}
	var l, lInv mat.TriDense
	chol.LTo(&l)
	if err := lInv.InverseTri(&l); err != nil {
		return nan
	}
	_, cov := meanCov(coords)
	s := mat.NewDense(dim, dim, nil)
	for a := 0; a < dim; a++ {
		s.SetRow(a, cov[a])
	}
	var ls, lslt mat.Dense
	ls.Mul(&lInv, s)
	lslt.Mul(&ls, lInv.T())
	whitened := mat.NewSymDense(dim, nil)
	for a := 0; a < dim; a++ {
		for b := a; b < dim; b++ {
			whitened.SetSym(a, b, 0.5*(lslt.At(a, b)+lslt.At(b, a)))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(whitened, false) {
		return nan
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range es.Values(nil) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return [2]float64{math.Sqrt(math.Max(lo, 0)), math.Sqrt(math.Max(hi, 0))}
}

// Diverged reports whether the run ended by diverging.
func (r Result) Diverged() bool { return errors.Is(r.Err, sampler.ErrDiverged) }

// StableLR returns the learning rate (train's per-example one) at which
// the stiffest direction of the reference posterior, seen through the
// mass the preconditioner would estimate from exact gradients at
// equilibrium, has omega h = omegaH: with unit mass the largest eigenvalue
// of the precision Cov^-1; with rmsprop's mass m_i proportional to
// E[g_i^2] = (Cov^-1)_ii (the Fisher identity), and with variance's m_i
// proportional to 1/Cov_ii, that of M^-1/2 Cov^-1 M^-1/2. h = omegaH /
// sqrt(lambda_max) and LR = N h^2. It is the harness's "stable step": at
// omega h = 0.5 symplectic Euler widens the stiffest direction by 3%
// (1/sqrt(1 - (omega h)^2/4)). scale normalises the mass as the chain
// would (adapt.MassScale); the chain's own mass (with gradient noise
// in rmsprop's estimate, from a finite window) differs somewhat.
//
// With a dense mass (adapt.DenseMassOf of the reference covariance:
// M^-1 = Cov/c, c its smallest eigenvalue under stiffest, its largest
// under widest) every direction's curvature is 1/c, so h = omegaH
// sqrt(c); with a low-rank mass of rank k (adapt.LowRankMassOf of the
// reference covariance: its exact top-k correlation directions) it is
// the largest eigenvalue of C' Cov^-1 C, M^-1 = C C'.
func StableLR(ref Reference, p adapt.Preconditioner, scale adapt.MassScale, n int, omegaH float64) (float64, error) {
	return StableLRRank(ref, p, scale, 0, n, omegaH)
}

// StableLRRank is StableLR with a low-rank mass's rank (0: its default).
func StableLRRank(ref Reference, p adapt.Preconditioner, scale adapt.MassScale, rank, n int, omegaH float64) (float64, error) {
	d := len(ref.Cov)
	cov := ref.covMatrix()
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return 0, fmt.Errorf("stable step of %s: covariance not positive definite", ref.Posterior)
	}
	prec := mat.NewSymDense(d, nil)
	if err := ch.InverseTo(prec); err != nil {
		return 0, fmt.Errorf("stable step of %s: %w", ref.Posterior, err)
	}
	if !p.Diagonal() {
		top, err := fullMassTop(ref, prec, p, scale, rank)
		if err != nil {
			return 0, err
		}
		h := omegaH / math.Sqrt(top)
		return float64(n) * h * h, nil
	}
	v := make([]float64, d)
	for i := range v {
		switch p {
		case adapt.PrecondRMSprop:
			v[i] = prec.At(i, i)
		case adapt.PrecondVariance:
			v[i] = 1 / ref.Cov[i][i]
		default:
			v[i] = 1
		}
	}
	m := scale.MassFrom(v)
	scaled := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			scaled.SetSym(a, b, prec.At(a, b)/math.Sqrt(m[a]*m[b]))
		}
	}
	top, ok := largestEigenvalue(scaled)
	if !ok {
		return 0, fmt.Errorf("stable step of %s: eigenvalues failed", ref.Posterior)
	}
	h := omegaH / math.Sqrt(top)
	return float64(n) * h * h, nil
}

// fullMassTop returns the largest curvature of the reference posterior
// (precision prec) in the momentum's units of the dense or low-rank mass
// the preconditioner p would set from its exact covariance: the largest
// eigenvalue of C' prec C, M^-1 = C C'.
func fullMassTop(ref Reference, prec *mat.SymDense, p adapt.Preconditioner, scale adapt.MassScale, rank int) (float64, error) {
	d := prec.SymmetricDim()
	mm, err := exactMass(ref, p, scale, rank)
	if err != nil {
		return 0, fmt.Errorf("stable step of %s: %w", ref.Posterior, err)
	}
	// C's columns, then C' prec C
	c := mat.NewDense(d, d, nil)
	e, col := make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		clear(e)
		e[j] = 1
		mm.Velocity(col, e)
		for a := 0; a < d; a++ {
			c.Set(a, j, col[a])
		}
	}
	var pc, cpc mat.Dense
	pc.Mul(prec, c)
	cpc.Mul(c.T(), &pc)
	scaled := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			scaled.SetSym(a, b, 0.5*(cpc.At(a, b)+cpc.At(b, a)))
		}
	}
	top, ok := largestEigenvalue(scaled)
	if !ok {
		return 0, fmt.Errorf("stable step of %s: eigenvalues failed", ref.Posterior)
	}
	return top, nil
}

// largestEigenvalue returns the largest eigenvalue of the symmetric matrix
// s, and false when its eigen-decomposition fails.
func largestEigenvalue(s *mat.SymDense) (float64, bool) {
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		return 0, false
	}
	top := 0.0
	for _, l := range es.Values(nil) {
		top = math.Max(top, l)
	}
	return top, true
}
