package autodiff_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const (
	linNoiseSD   = 0.5 // the likelihood's known noise
	linPrecision = 50  // prior precision of every coefficient
)

// linearModel is a Bayesian linear regression y = x w + b + N(0, 0.5^2)
// with N(0, 1/50) priors on w and b, built as a Gorgonia graph by the model
// contract: a Builder, called once per evaluator.
func linearModel(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	eg := G.NewGraph()
	x := G.NewMatrix(eg, dt, G.WithShape(batch, 3), G.WithName("x"))
	y := G.NewMatrix(eg, dt, G.WithShape(batch, 1), G.WithName("y"))
	w := G.NewMatrix(eg, dt, G.WithShape(3, 1), G.WithName("w"))
	b := G.NewVector(eg, dt, G.WithShape(1), G.WithName("b"))
	xw, err := G.Mul(x, w)
	if err != nil {
		return nil, err
	}
	f, err := G.BroadcastAdd(xw, b, nil, []byte{0})
	if err != nil {
		return nil, err
	}
	ll, err := nn.GaussianLogLik(f, y, linNoiseSD)
	if err != nil {
		return nil, err
	}
	prior := nn.Prior{Precision: linPrecision}
	return &nn.Graph{G: eg, Batch: batch, DType: dt, Input: x, Target: y, OneHot: false,
		Learnables: G.Nodes{w, b}, Priors: []nn.Prior{prior, prior}, InitSD: []float64{0.1, 0},
		LogLik: ll}, nil
}

// linearData draws n examples of y = x (1, -2, 0.5) + 0.3 + N(0, 0.5^2).
func linearData(n int, rng *rand.Rand) *datasets.Dataset {
	d := &datasets.Dataset{N: n, D: 3, X: make([]float32, 3*n), Outputs: 1, Targets: make([]float32, n)}
	for i := 0; i < n; i++ {
		x := d.X[3*i : 3*i+3]
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		d.Targets[i] = float32(float64(x[0]) - 2*float64(x[1]) + 0.5*float64(x[2]) + 0.3 + linNoiseSD*rng.NormFloat64())
	}
	return d
}

// linearPosterior returns the exact posterior mean and standard deviations
// of (w, b): precision A = lambda I + X'^T X' / sigma^2 with X' = [X 1],
// mean A^-1 X'^T y / sigma^2.
func linearPosterior(d *datasets.Dataset) (mean, sd []float64) {
	a := mat.NewSymDense(4, nil)
	rhs := mat.NewVecDense(4, nil)
	for i := 0; i < d.N; i++ {
		row := []float64{float64(d.X[3*i]), float64(d.X[3*i+1]), float64(d.X[3*i+2]), 1}
		for j := range row {
			for k := j; k < 4; k++ {
				a.SetSym(j, k, a.At(j, k)+row[j]*row[k]/(linNoiseSD*linNoiseSD))
			}
			rhs.SetVec(j, rhs.AtVec(j)+row[j]*float64(d.Targets[i])/(linNoiseSD*linNoiseSD))
		}
	}
	for j := 0; j < 4; j++ {
		a.SetSym(j, j, a.At(j, j)+linPrecision)
	}
	var ch mat.Cholesky
	ch.Factorize(a)
	var m mat.VecDense
	ch.SolveVecTo(&m, rhs)
	var cov mat.SymDense
	ch.InverseTo(&cov)
	for j := 0; j < 4; j++ {
		mean = append(mean, m.AtVec(j))
		sd = append(sd, math.Sqrt(cov.At(j, j)))
	}
	return mean, sd
}

// sampleLinear samples the linear model's posterior on d with PT-SGHMC
// (3 rungs, SGNHT on minibatches of 50, corrected minibatch Barker
// exchanges every 10 steps) and returns the mean and standard deviation of rung 1's
// (w, b) after burn-in.
func sampleLinear(d *datasets.Dataset, steps int, seed uint64) (mean, sd []float64, err error) {
	model, err := nn.NewModel("linear", linearModel)
	if err != nil {
		return nil, nil, err
	}
	temps, err := tempering.GeometricLadder(3, 2)
	if err != nil {
		return nil, nil, err
	}
	corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{})
	if err != nil {
		return nil, nil, err
	}
	h := math.Sqrt(0.002 / float64(d.N)) // per-example learning rate 0.002, friction 0.1 (train's definitions)
	k := sampler.SGNHT{StepSize: h, Diffusion: 0.1 / h, Inertia: 0.01}
	pt := &driver.Driver{Kernel: k, Schedule: driver.Fixed(k, h, 1), Phases: driver.Watched(),
		PT: &tempering.PT{Temps: temps, Every: 10, Exchange: &tempering.Exchanger{Batch: 40, Correction: corr}}}
	rng := rand.New(rand.NewPCG(seed, 1))
	theta0 := make([]float64, model.NumParams())
	model.Layout.Init(theta0, rng)
	state, err := pt.Init([][]float64{theta0}, seed)
	if err != nil {
		return nil, nil, err
	}
	pots := make([]sampler.Potential, len(temps))
	var first *autodiff.Potential
	for j := range pots {
		ev, err := autodiff.NewModelEvaluator(model, 50, autodiff.Float64)
		if err != nil {
			return nil, nil, err
		}
		p, err := autodiff.NewPotential(model, d, ev, 50, rng)
		if err != nil {
			return nil, nil, err
		}
		pots[j] = p
		if j == 0 {
			first = p
		}
	}
	burn := steps / 5
	sum, sq := make([]float64, model.NumParams()), make([]float64, model.NumParams())
	n := 0
	err = pt.Run(pots, first, state, steps, func(s *tempering.PTState) error {
		if s.Steps <= burn {
			return nil
		}
		for i, v := range s.Rungs[0].Theta {
			sum[i] += v
			sq[i] += v * v
		}
		n++
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range sum {
		m := sum[i] / float64(n)
		mean = append(mean, m)
		sd = append(sd, math.Sqrt(math.Max(0, sq[i]/float64(n)-m*m)))
	}
	return mean, sd, nil
}

// Example_customModel builds a model of one's own, a Bayesian linear
// regression, as a Gorgonia graph (linearModel above: input, target,
// learnables with their priors, per-example Gaussian log-likelihood),
// samples its posterior with PT-SGHMC through the public API, and compares
// the posterior mean with the closed form.
func Example_customModel() {
	d := linearData(200, rand.New(rand.NewPCG(3, 4)))
	mean, _, err := sampleLinear(d, 5000, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	exact, _ := linearPosterior(d)
	fmt.Printf("PT-SGHMC posterior mean (w, b): %.1f\n", mean)
	fmt.Printf("closed-form posterior mean:     %.1f\n", exact)
	// Output:
	// PT-SGHMC posterior mean (w, b): [0.9 -1.9 0.5 0.3]
	// closed-form posterior mean:     [0.9 -1.9 0.5 0.3]
}

// TestLinearPosterior checks PT-SGHMC on the custom linear model against the
// closed-form posterior: each mean within a third of a posterior standard
// deviation, each standard deviation within 25%. The prior is strong enough
// (precision 50 against a data precision of about 800) that dropping the
// prior, or the N/|S| scale of the likelihood, moves the mean by several
// standard deviations.
func TestLinearPosterior(t *testing.T) {
	d := linearData(200, rand.New(rand.NewPCG(3, 4)))
	mean, sd, err := sampleLinear(d, 10000, 11)
	if err != nil {
		t.Fatal(err)
	}
	exact, exactSD := linearPosterior(d)
	for i := range mean {
		if math.Abs(mean[i]-exact[i]) > exactSD[i]/3 || math.Abs(sd[i]/exactSD[i]-1) > 0.25 {
			t.Errorf("coefficient %d: mean %.4f sd %.4f, closed form %.4f sd %.4f", i, mean[i], sd[i], exact[i], exactSD[i])
		}
	}
	t.Logf("sampled %.4f sd %.4f\nexact   %.4f sd %.4f", mean, sd, exact, exactSD)
}

// linearSetup returns the linear model, 30 examples of its data and a
// float64 evaluator of batches up to 8: the set-up of the tests that check
// its gradient.
func linearSetup(t *testing.T) (nn.Model, *datasets.Dataset, autodiff.Evaluator) {
	t.Helper()
	model, err := nn.NewModel("linear", linearModel)
	if err != nil {
		t.Fatal(err)
	}
	d := linearData(30, rand.New(rand.NewPCG(5, 6)))
	ev, err := autodiff.NewModelEvaluator(model, 8, autodiff.Float64)
	if err != nil {
		t.Fatal(err)
	}
	return model, d, ev
}

// TestLinearModelGradient checks the custom model's gradient on the generic
// evaluator against finite differences.
func TestLinearModelGradient(t *testing.T) {
	_, d, ev := linearSetup(t)
	theta := []float64{0.3, -0.7, 1.1, 0.2}
	idx := []int{1, 5, 9, 20, 29}
	grad := make([]float64, 4)
	if _, err := ev.Eval(theta, d, idx, 6, grad, nil); err != nil {
		t.Fatal(err)
	}
	for i := range theta {
		const h = 1e-5
		old := theta[i]
		theta[i] = old + h
		up, _ := ev.Eval(theta, d, idx, 6, nil, nil)
		theta[i] = old - h
		dn, _ := ev.Eval(theta, d, idx, 6, nil, nil)
		theta[i] = old
		if fd := (up - dn) / (2 * h); math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
			t.Fatalf("gradient %d: %v, finite difference %v", i, grad[i], fd)
		}
	}
}
