package sampler_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
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
	rng := rand.New(rand.NewPCG(seed, 99))
	spec := nn.Spec{Sizes: []int{d, 1}, Likelihood: nn.Gaussian, NoiseSD: 0.5, PriorPrecision: []float64{1}}
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
	ev, err := autodiff.NewPlan(lr.Spec, max(batch, 1), autodiff.Float64)
	if err != nil {
		return nil, err
	}
	return autodiff.NewPotential(lr.Spec, lr.Data, ev, batch, rand.New(rand.NewPCG(seed, 7)))
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
func runSingle(t testing.TB, lr *linReg, k sampler.Kernel, pot sampler.Potential, batch int, temp float64, n, burn, thin, window int, seed uint64) ([][]float64, *sampler.State, *sampler.Health) {
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
	hl := &sampler.Health{}
	fk, watched := k.(sampler.Frictional)
	for i := 1; i <= n; i++ {
		xi0 := s.Xi
		if err := k.Step(pot, s, temp, rng.Rand); err != nil {
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
