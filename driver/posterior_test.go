package driver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/gonum/mat"
)

// linReg is the closed-form reference problem of the posterior suite:
// Bayesian linear regression y = x'w + b + noise, noise sd 0.5, prior
// precision 1 on every weight and the bias, written as the network
// 10-1 with a Gaussian likelihood, so the sampler sees the same model and
// potential code a user runs. Its posterior is Gaussian, N(Mean, Cov).
type linReg struct {
	Spec nn.Spec
	Data *datasets.Dataset
	Mean []float64
	Cov  *mat.SymDense
	SD   []float64 // sqrt(diag(Cov))
}

// newLinReg draws n examples of d inputs (x ~ N(0, I)) from weights
// w_i = (-1)^i (0.2 + 0.1 i), bias 0.5, and computes the exact posterior from
// the float32 data the potential sees.
func newLinReg(n, d int, seed uint64) (*linReg, error) {
	return newLinRegPrior(n, d, seed, 1)
}

// newLinRegPrior is newLinReg with prior precision prior on every weight
// and the bias.
func newLinRegPrior(n, d int, seed uint64, prior float64) (*linReg, error) {
	rng := rand.New(rand.NewPCG(seed, 99))
	spec := nn.Spec{Sizes: []int{d, 1}, Likelihood: nn.Gaussian, NoiseSD: 0.5, PriorPrecision: []float64{prior}}
	data := &datasets.Dataset{N: n, D: d, Outputs: 1, X: make([]float32, n*d), Targets: make([]float32, n)}
	for i := 0; i < n; i++ {
		y := 0.5
		for j := 0; j < d; j++ {
			x := float32(rng.NormFloat64())
			data.X[i*d+j] = x
			w := 0.2 + 0.1*float64(j)
			if j%2 == 1 {
				w = -w
			}
			y += w * float64(x)
		}
		data.Targets[i] = float32(y + spec.NoiseSD*rng.NormFloat64())
	}
	// Precision X'X/s^2 + I on [w, b] (the parameter layout: weights, then
	// the bias), and mean Prec^-1 X'y/s^2.
	p := d + 1
	prec := mat.NewSymDense(p, nil)
	rhs := mat.NewVecDense(p, nil)
	s2 := spec.NoiseSD * spec.NoiseSD
	row := make([]float64, p)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			row[j] = float64(data.X[i*d+j])
		}
		row[d] = 1
		y := float64(data.Targets[i])
		for a := 0; a < p; a++ {
			rhs.SetVec(a, rhs.AtVec(a)+row[a]*y/s2)
			for b := a; b < p; b++ {
				prec.SetSym(a, b, prec.At(a, b)+row[a]*row[b]/s2)
			}
		}
	}
	for a := 0; a < p; a++ {
		prec.SetSym(a, a, prec.At(a, a)+spec.PriorPrecision[0])
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, fmt.Errorf("posterior precision not positive definite")
	}
	cov := mat.NewSymDense(p, nil)
	if err := ch.InverseTo(cov); err != nil {
		return nil, err
	}
	var mean mat.VecDense
	mean.MulVec(cov, rhs)
	lr := &linReg{Spec: spec, Data: data, Cov: cov}
	for a := 0; a < p; a++ {
		lr.Mean = append(lr.Mean, mean.AtVec(a))
		lr.SD = append(lr.SD, math.Sqrt(cov.At(a, a)))
	}
	return lr, nil
}

// potential returns a minibatch potential of the problem (float64 plan) with
// its own batch stream.
func (lr *linReg) potential(batch int, seed uint64) (*autodiff.Potential, error) {
	ev, err := autodiff.New(autodiff.EngineCompiled, lr.Spec, max(batch, 1), autodiff.Float64)
	if err != nil {
		return nil, err
	}
	model, err := lr.Spec.Model()
	if err != nil {
		return nil, err
	}
	return autodiff.NewPotential(model, lr.Data, ev, batch, rand.New(rand.NewPCG(seed, 7)))
}

// posteriorCheck compares samples with the exact posterior at temperature
// temp (covariance times temp): the largest |mean error| in posterior sds,
// and the smallest and largest sampled sd / exact sd, and their mean.
type posteriorCheck struct {
	MeanErr              float64 // max over coordinates of |mean - exact| / exact sd
	SDMin, SDMax, SDMean float64 // sampled sd / exact sd
}

func (lr *linReg) check(xs [][]float64, temp float64) posteriorCheck {
	d := len(lr.Mean)
	c := posteriorCheck{SDMin: math.Inf(1), SDMax: math.Inf(-1)}
	for i := 0; i < d; i++ {
		m, v := 0.0, 0.0
		for _, x := range xs {
			m += x[i]
		}
		m /= float64(len(xs))
		for _, x := range xs {
			v += (x[i] - m) * (x[i] - m)
		}
		v /= float64(len(xs) - 1)
		sd := lr.SD[i] * math.Sqrt(temp)
		c.MeanErr = math.Max(c.MeanErr, math.Abs(m-lr.Mean[i])/sd)
		r := math.Sqrt(v) / sd
		c.SDMin, c.SDMax = math.Min(c.SDMin, r), math.Max(c.SDMax, r)
		c.SDMean += r / float64(d)
	}
	return c
}

func (c posteriorCheck) String() string {
	return fmt.Sprintf("mean error %.3f sd, sd ratio %.3f (min %.3f, max %.3f)", c.MeanErr, c.SDMean, c.SDMin, c.SDMax)
}

// within reports whether the samples meet the suite's tolerances: means
// within meanTol posterior sds, every sd within sdTol (relative).
func (c posteriorCheck) within(meanTol, sdTol float64) bool {
	return c.MeanErr <= meanTol && c.SDMin >= 1-sdTol && c.SDMax <= 1+sdTol
}

// runSingle runs kernel k at temperature temp for n steps from the network's
// seeded initialisation (burn steps discarded) and returns every thin-th
// position, the final state, and (for a Frictional kernel) its health over
// windows of window steps.
func runSingle(t testing.TB, lr *linReg, k sampler.Kernel, pot sampler.Potential, batch int, temp float64, n, burn, thin, window int, seed uint64) ([][]float64, *sampler.State, *health.Health) {
	t.Helper()
	if pot == nil {
		p, err := lr.potential(batch, seed)
		if err != nil {
			t.Fatal(err)
		}
		pot = p
	}
	rng := sampler.NewStream(seed, 0)
	s := sampler.NewState(lr.init(seed))
	k.Init(s, rng.Rand)
	var xs [][]float64
	hl := &health.Health{}
	hl.Start(s.KineticTemperature())
	fk, watched := k.(sampler.Frictional)
	for i := 1; i <= n; i++ {
		xi0 := s.Xi
		if err := k.Step(s, pot, sampler.Minibatch{}, sampler.At(temp), rng.Rand); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if watched {
			hl.Observe(fk, xi0, s.KineticTemperature(), s.Kinetic, len(s.P), i, window, i > burn)
		}
		if i > burn && i%thin == 0 {
			xs = append(xs, append([]float64(nil), s.Theta...))
		}
	}
	return xs, s, hl
}

// init returns the network's seeded initial weights.
func (lr *linReg) init(seed uint64) []float64 {
	theta := make([]float64, lr.Spec.NumParams())
	lr.Spec.Init(theta, rand.New(rand.NewPCG(seed, 0x1417)))
	return theta
}

// suiteCase is one sampler setting of the posterior suite.
type suiteCase struct {
	name      string
	kernel    sampler.Kernel
	temps     []float64 // PT ladder; nil for a single chain at T = 1
	steps     int
	burn      int
	wantOK    bool    // posterior within tolerance and health not failed
	wantWarn  bool    // health must warn or fail (the noisy settings)
	anyOK     bool    // borderline: only the health verdict is asserted
	target    float64 // PT.NoiseTarget (noise-aware step)
	meanTol   float64
	sdTol     float64
	batch     int
	healthWin int
}

// runSuiteCase runs c on lr and checks every rung's samples against the
// exact posterior (covariance times T) and its health.
func runSuiteCase(t *testing.T, lr *linReg, c suiteCase) {
	t.Helper()
	temps := c.temps
	if temps == nil {
		temps = []float64{1}
	}
	pt := testDriver(testPT{Record: tempering.StandardRecorders(), Kernel: c.kernel, Temps: temps, Workers: 1, BurnIn: c.burn, HealthWindow: c.healthWin, NoiseTarget: c.target})
	var tp sampler.TermPotential
	pots := make([]sampler.Potential, len(temps))
	for j := range pots {
		p, err := lr.potential(c.batch, uint64(100+j))
		if err != nil {
			t.Fatal(err)
		}
		pots[j] = p
		if j == 0 {
			tp = p
		}
	}
	if len(temps) > 1 {
		corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pt.PT.Every, pt.PT.Exchange = 25, &tempering.Exchanger{Batch: 100, Correction: corr}
	}
	st, err := pt.Init([][]float64{lr.init(1)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([][][]float64, len(temps))
	err = pt.Run(pots, tp, st, c.steps, func(s *tempering.PTState) error {
		if s.Steps > c.burn && s.Steps%5 == 0 {
			for j, r := range s.Rungs {
				xs[j] = append(xs[j], append([]float64(nil), r.Theta...))
			}
		}
		return nil
	})
	if err != nil && c.wantOK {
		t.Fatal(err)
	}
	ok, warned := err == nil, false
	for j, temp := range temps {
		var chk posteriorCheck
		if err == nil {
			chk = lr.check(xs[j], temp)
			ok = ok && chk.within(c.meanTol, c.sdTol)
		}
		hl := st.Stats.Health[j]
		if hl.After == 0 {
			t.Fatalf("rung %d: no health window after burn-in", j+1)
		}
		if _, fr := c.kernel.(sampler.Frictional); !fr { // SGLD: its own watch's verdict
			status, fig := hl.Verdict()
			warned = warned || status != health.HealthOK
			ok = ok && status != health.HealthFail
			t.Logf("%s rung %d (T=%g): %v; health %v", c.name, j+1, temp, chk, fig)
			continue
		}
		warned = warned || hl.Worst != health.HealthOK
		ok = ok && hl.Worst != health.HealthFail
		t.Logf("%s rung %d (T=%g): step x%.3g; %v; health %d windows (%d failed, %d warned), last %v; worst %v", c.name, j+1, temp, stepScale(hl), chk, hl.After, hl.Bad, hl.Warned, hl.Last, hl.WorstWindow)
	}
	if len(temps) > 1 {
		t.Logf("swap acceptance %.2f", st.Stats.AcceptanceRate(0))
	}
	if ok != c.wantOK && !c.anyOK {
		t.Errorf("%s: within tolerance (means %.2g sd, sds %.0f%%) and healthy = %v, want %v", c.name, c.meanTol, 100*c.sdTol, ok, c.wantOK)
	}
	if c.wantWarn && !warned {
		t.Errorf("%s: the health check did not warn", c.name)
	}
	if !c.wantWarn && warned {
		t.Errorf("%s: the health check warned at a setting in its regime", c.name)
	}
}

// TestPosteriorSuite checks SGLD, SGHMC, SGNHT (default inertia) and PT
// (SGNHT rungs at T = 1 and 2) against the exact posterior of a Bayesian
// linear regression run through the nn and autodiff code users run: every
// rung's means within 0.1 posterior sd and every sd within 5% of the exact
// ones (times sqrt(T)), and the health check quiet. The settings are the
// documented ones (docs/posterior-checks.md): friction 0.1 per step, the
// step near 0.1 of the fastest oscillation (h = 2.2e-3, omega = 45), and a
// batch that keeps the gradient noise near 5% of the momentum's diffusion.
// The noisy setting (friction 0.1 per step at the step size of
// train's default learning rate, batch 128 of 2,000) must fail and warn.
// Sized for make test (3.4 s in all on a lightly loaded machine); TestPosteriorSuiteLong
// (-tags long) runs the 2,000-example problem.
func TestPosteriorSuite(t *testing.T) {
	lr, err := newLinReg(500, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	const h, a = 2.2e-3, 45.0 // friction A h = 0.1 per step
	cases := []suiteCase{
		{name: "sgld", kernel: sampler.SGLD{StepSize: 5e-5}, steps: 60000, burn: 10000, wantOK: true},
		{name: "sghmc", kernel: sampler.SGHMC{StepSize: h, Friction: a}, steps: 60000, burn: 10000, wantOK: true},
		{name: "sgnht", kernel: sampler.SGNHT{StepSize: h, Diffusion: a}, steps: 60000, burn: 10000, wantOK: true},
		{name: "pt", kernel: sampler.SGNHT{StepSize: h, Diffusion: a}, temps: []float64{1, 2}, steps: 50000, burn: 10000, wantOK: true},
	}
	for i := range cases {
		cases[i].batch, cases[i].meanTol, cases[i].sdTol, cases[i].healthWin = 100, 0.1, 0.05, 5000
	}
	// Batch 10: the gradient noise is 70% of the momentum's diffusion and
	// the plain kernel's sds drift to 0.73: the health check must fail
	// (TestPosteriorSuiteLong shows the noise-aware step correcting it).
	// SGLD at 12 times its step: the stiffest direction's contraction
	// eps omega^2/2 is about 0.6, its sd about 20% wide: the SGLD watch
	// must fail it.
	cases = append(cases, suiteCase{name: "sgld large step", kernel: sampler.SGLD{StepSize: 6e-4}, steps: 30000, burn: 5000,
		batch: 100, wantWarn: true, meanTol: 0.1, sdTol: 0.05, healthWin: 5000})
	cases = append(cases, suiteCase{name: "sgnht batch 10", kernel: sampler.SGNHT{StepSize: h, Diffusion: a},
		steps: 30000, burn: 10000, batch: 10, wantWarn: true, meanTol: 0.1, sdTol: 0.05, healthWin: 5000})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runSuiteCase(t, lr, c) })
	}
	t.Run("noisy", func(t *testing.T) {
		big, err := newLinReg(2000, 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		// train's defaults (lr 0.02, friction 0.1, batch 128) on 2,000
		// examples: h = sqrt(0.02/2000).
		h := math.Sqrt(0.02 / 2000)
		runSuiteCase(t, big, suiteCase{name: "noisy", kernel: sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h, Inertia: 0.01},
			steps: 12000, burn: 2000, batch: 128, meanTol: 0.1, sdTol: 0.05, healthWin: 2000, wantOK: false, wantWarn: true})
	})
}

// stepScale returns a rung's step multiplier (0 in Health means 1).
func stepScale(hl health.Health) float64 {
	if hl.StepScale == 0 {
		return 1
	}
	return hl.StepScale
}
