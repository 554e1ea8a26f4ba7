package autodiff

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
)

// TestDiagEngines (ENGINE_DIAG=1) counts where the plan's and the compiled
// graph's values differ on make run's MLP.
func TestDiagEngines(t *testing.T) {
	if os.Getenv("ENGINE_DIAG") == "" {
		t.Skip("ENGINE_DIAG unset")
	}
	type cse struct {
		sizes    []int
		act      nn.Activation
		lik      nn.Likelihood
		df       float64
		batch, n int
		bias     float64 // sd of the biases' perturbation (0.01 otherwise)
		zeroRow  bool    // example idx[0]'s features all zero, the biases zero
	}
	for _, c := range []cse{
		{[]int{784, 400, 400, 10}, nn.ReLU, nn.Categorical, 0, 128, 128, 0.01, false},
		{[]int{784, 400, 400, 10}, nn.ReLU, nn.Categorical, 0, 128, 100, 0.01, false},
		{[]int{30, 17, 9, 5}, nn.Tanh, nn.Categorical, 0, 300, 300, 0.01, false},
		{[]int{30, 17, 9, 5}, nn.Sigmoid, nn.Categorical, 0, 37, 37, 0.01, false},
		{[]int{30, 17, 3}, nn.ReLU, nn.Gaussian, 0, 37, 37, 0.01, false},
		{[]int{30, 17, 5}, nn.ReLU, nn.Categorical, 3, 37, 37, 0.01, false},
		{[]int{30, 17, 9, 5}, nn.ReLU, nn.Categorical, 0, 37, 37, 3, false},
		{[]int{30, 17, 9, 5}, nn.ReLU, nn.Categorical, 0, 37, 37, 0, true},
	} {
		t.Logf("case %+v", c)
		diagCase(t, nn.Spec{Sizes: c.sizes, Activation: c.act, Likelihood: c.lik, PriorPrecision: []float64{1}, PriorDF: c.df, NoiseSD: 0.5}, c.batch, c.n, c.bias, c.zeroRow)
	}
}

func diagCase(t *testing.T, spec nn.Spec, batch, n int, biasSD float64, zeroRow bool) {
	model, err := spec.Model()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	data := toyData(spec.Likelihood, 1000, spec.Sizes[0], spec.Sizes[len(spec.Sizes)-1], rng)
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	for l, ly := range spec.Layers() {
		for i := ly.W; i < ly.B; i++ {
			theta[i] += 0.01 * rng.NormFloat64()
		}
		for i := ly.B; i < ly.B+ly.Out; i++ {
			theta[i] = biasSD * rng.NormFloat64()
			if zeroRow && l > 0 {
				theta[i] = 0
			}
		}
	}
	idx := rng.Perm(1000)[:n]
	if zeroRow {
		// every hidden unit of layer 0 dead for example idx[0]: layer 1's
		// pre-activations are its zero biases
		for j := 0; j < spec.Layers()[0].Out; j++ {
			theta[spec.Layers()[0].B+j] = -1e3
		}
	}
	k := spec.Sizes[len(spec.Sizes)-1]
	for _, dt := range []DType{Float32, Float64} {
		plan, _ := NewFor(EnginePlan, model, batch, dt)
		comp, err := NewFor(EngineCompiled, model, batch, dt)
		if err != nil {
			t.Fatal(err)
		}
		lg1, lg2 := make([]float64, n*k), make([]float64, n*k)
		Logits(plan, theta, data, idx, lg1)
		Logits(comp, theta, data, idx, lg2)
		t.Logf("%s logits differ: %d of %d", dt, countDiff(lg1, lg2), len(lg1))
		g1, g2 := make([]float64, len(theta)), make([]float64, len(theta))
		l1, l2 := make([]float64, n), make([]float64, n)
		u1, _ := plan.Eval(theta, data, idx, 60000.0/128, g1, l1)
		u2, _ := comp.Eval(theta, data, idx, 60000.0/128, g2, l2)
		p1, _ := plan.Eval(theta, data, idx, 0, nil, nil)
		p2, _ := comp.Eval(theta, data, idx, 0, nil, nil)
		t.Logf("%s prior alone (scale 0): %v %v (same %v)", dt, p1, p2, p1 == p2)
		t.Logf("%s U %v %v (same %v); loglik differ %d", dt, u1, u2, u1 == u2, countDiff(l1, l2))
		for _, p := range model.Layout {
			a, b := g1[p.Offset:p.Offset+p.Size()], g2[p.Offset:p.Offset+p.Size()]
			t.Logf("%s %s: %d of %d differ", dt, p.Name, countDiff(a, b), len(a))
		}
		t.Logf("%s total gradient differs %d of %d", dt, countDiff(g1, g2), len(g1))
	}
}

func countDiff(a, b []float64) int {
	n := 0
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			n++
		}
	}
	return n
}
