package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/nn"
)

// TestShardedPlanMatchesPlan checks that the plan split over shards gives
// the single plan's potential, gradient, per-example log-likelihoods and
// logits (to rounding), for both dtypes, both priors, both likelihoods, and
// full, short and tiny batches (some shards then get no example), and that
// the same call twice is bit-identical.
func TestShardedPlanMatchesPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const batch = 12
	type tc struct {
		name      string
		spec      nn.Spec
		dtype     DType
		shards, n int
	}
	cat := nn.Spec{Sizes: []int{6, 9, 7, 3}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{2, 0.5, 1}}
	stu := cat
	stu.PriorDF = 4
	reg := nn.Spec{Sizes: []int{6, 8, 2}, Activation: nn.Tanh, Likelihood: nn.Gaussian, NoiseSD: 0.5, PriorPrecision: []float64{1}}
	var cases []tc
	for _, s := range []struct {
		name string
		spec nn.Spec
	}{{"categorical", cat}, {"student-t", stu}, {"regression", reg}} {
		for _, dt := range []DType{Float64, Float32} {
			for _, sn := range [][2]int{{1, 12}, {2, 12}, {3, 12}, {2, 7}, {4, 5}, {5, 1}} {
				cases = append(cases, tc{s.name, s.spec, dt, sn[0], sn[1]})
			}
		}
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/shards%d_n%d", c.name, c.dtype, c.shards, c.n), func(t *testing.T) {
			data := toyData(c.spec.Likelihood, 40, c.spec.Sizes[0], c.spec.Sizes[len(c.spec.Sizes)-1], rng)
			theta := make([]float64, c.spec.NumParams())
			c.spec.Init(theta, rng)
			ref, err := NewPlan(c.spec, batch, c.dtype)
			if err != nil {
				t.Fatal(err)
			}
			sh, err := NewShardedPlan(c.spec, batch, c.dtype, c.shards)
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-12
			if c.dtype == Float32 {
				tol = 2e-5
			}
			idx := rng.Perm(data.N)[:c.n]
			g0, g1, g2 := make([]float64, len(theta)), make([]float64, len(theta)), make([]float64, len(theta))
			l0, l1 := make([]float64, c.n), make([]float64, c.n)
			u0, err := ref.Eval(theta, data, idx, 3, g0, l0)
			if err != nil {
				t.Fatal(err)
			}
			u1, err := sh.Eval(theta, data, idx, 3, g1, l1)
			if err != nil {
				t.Fatal(err)
			}
			u2, _ := sh.Eval(theta, data, idx, 3, g2, nil)
			if u1 != u2 {
				t.Fatalf("repeated sharded U %v then %v", u1, u2)
			}
			if math.Abs(u1-u0) > tol*(1+math.Abs(u0)) {
				t.Fatalf("sharded U %v, plan %v", u1, u0)
			}
			scale := 0.0
			for _, v := range g0 {
				scale = max(scale, math.Abs(v))
			}
			for i := range g0 {
				if g1[i] != g2[i] {
					t.Fatalf("repeated sharded gradient %d: %v then %v", i, g1[i], g2[i])
				}
				if math.Abs(g1[i]-g0[i]) > tol*(1+scale) {
					t.Fatalf("gradient %d: sharded %v, plan %v", i, g1[i], g0[i])
				}
			}
			for i := range l0 {
				if math.Abs(l1[i]-l0[i]) > tol*(1+math.Abs(l0[i])) {
					t.Fatalf("log-likelihood %d: sharded %v, plan %v", i, l1[i], l0[i])
				}
			}
			if c.spec.Likelihood != nn.Categorical {
				return
			}
			k := c.spec.Sizes[len(c.spec.Sizes)-1]
			o0, o1 := make([]float64, c.n*k), make([]float64, c.n*k)
			if err := ref.Logits(theta, data, idx, o0); err != nil {
				t.Fatal(err)
			}
			if err := sh.Logits(theta, data, idx, o1); err != nil {
				t.Fatal(err)
			}
			for i := range o0 {
				if math.Abs(o1[i]-o0[i]) > tol*(1+math.Abs(o0[i])) {
					t.Fatalf("logit %d: sharded %v, plan %v", i, o1[i], o0[i])
				}
			}
		})
	}
}

// TestShardedPlanRejects checks the constructor's and Eval's errors.
func TestShardedPlanRejects(t *testing.T) {
	spec := nn.Spec{Sizes: []int{4, 3, 2}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	for _, shards := range []int{0, -1, 9} {
		if _, err := NewShardedPlan(spec, 8, Float32, shards); err == nil {
			t.Errorf("%d shards for batch 8 accepted", shards)
		}
	}
	if _, err := NewShardedPlan(spec, 8, "float16", 2); err == nil {
		t.Error("dtype float16 accepted")
	}
	sh, err := NewShardedPlan(spec, 8, Float32, 2)
	if err != nil {
		t.Fatal(err)
	}
	data := toyData(nn.Categorical, 20, 4, 2, rand.New(rand.NewPCG(1, 1)))
	theta := make([]float64, spec.NumParams())
	if _, err := sh.Eval(theta, data, make([]int, 9), 1, nil, nil); err == nil {
		t.Error("a batch of 9 accepted by a plan for 8")
	}
	if _, err := sh.Eval(theta[1:], data, []int{0}, 1, nil, nil); err == nil {
		t.Error("a short theta accepted")
	}
}
