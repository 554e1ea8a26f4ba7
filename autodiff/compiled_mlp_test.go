package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// mlpEval is what one evaluation of an engine reports, for comparison bit
// for bit.
type mlpEval struct {
	u, prior  float64
	grad, ll  []float64
	stream    []float64 // the streamed chunks' values, in order
	chunks    []int     // the streamed chunks' first coordinates
	streamU   float64
	logits    []float64
	streamErr error
}

// evalMLP runs ev's Eval (and, when available, EvalStream and Logits) on
// theta and idx.
func evalMLP(t *testing.T, ev Evaluator, spec nn.Spec, theta []float64, data *datasets.Dataset, idx []int, scale float64) mlpEval {
	t.Helper()
	var r mlpEval
	r.grad, r.ll = make([]float64, len(theta)), make([]float64, len(idx))
	var err error
	if r.u, err = ev.Eval(theta, data, idx, scale, r.grad, r.ll); err != nil {
		t.Fatal(err)
	}
	if r.prior, err = ev.Eval(theta, data, idx, 0, nil, nil); err != nil {
		t.Fatal(err)
	}
	if s, ok := ev.(streamer); ok && s.CanStream() {
		r.streamU, r.streamErr = s.EvalStream(theta, data, idx, scale, func(lo int, g []float64) {
			r.chunks = append(r.chunks, lo)
			r.stream = append(r.stream, g...)
		})
	}
	if spec.Likelihood == nn.Categorical {
		r.logits = make([]float64, len(idx)*spec.Sizes[len(spec.Sizes)-1])
		if err := Logits(ev, theta, data, idx, r.logits); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// sameBits reports the first index where a and b differ in their bits, or
// -1.
func sameBits(a, b []float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestCompiledMLPMatchesPlan checks that an MLP's compiled graph computes
// what its BLAS plan computes, bit for bit: U~, the prior alone, the
// gradient, the per-example log-likelihoods, the streamed gradient (the
// same chunks) and the logits, for several shapes, the three activations,
// both likelihoods, the Gaussian and the Student-t prior, float32 and
// float64, batches that are not a multiple of the product kernel's tiles
// (and one longer than its 256-deep blocks of the inner dimension), short
// batches padded after full ones, and a layer all of whose ReLUs are off
// (pre-activations exactly zero, where the two engines' masks differed).
func TestCompiledMLPMatchesPlan(t *testing.T) {
	type mlpCase struct {
		sizes []int
		act   nn.Activation
		lik   nn.Likelihood
		df    float64
		batch int
		ns    []int // evaluations' sizes, in order
		dead  bool  // layer 0's ReLUs all off, later biases zero
	}
	cases := []mlpCase{
		{[]int{784, 40, 30, 10}, nn.ReLU, nn.Categorical, 0, 37, []int{37, 20, 37}, false},
		{[]int{50, 17, 9, 5}, nn.Tanh, nn.Categorical, 0, 300, []int{300, 131}, false},
		{[]int{20, 13, 7}, nn.Sigmoid, nn.Categorical, 0, 29, []int{29, 3}, false},
		{[]int{20, 13, 11, 3}, nn.ReLU, nn.Gaussian, 0, 21, []int{21, 19}, false},
		{[]int{20, 13, 4}, nn.Tanh, nn.Gaussian, 3, 21, []int{21}, false},
		{[]int{30, 17, 9, 5}, nn.ReLU, nn.Categorical, 3, 45, []int{45, 44}, false},
		{[]int{30, 17, 9, 5}, nn.ReLU, nn.Categorical, 0, 45, []int{45}, true},
	}
	for _, c := range cases {
		for _, dt := range []DType{Float32, Float64} {
			name := fmt.Sprintf("%v-%s-%s-df%g-b%d-dead%v/%s", c.sizes, c.act, c.lik, c.df, c.batch, c.dead, dt)
			t.Run(name, func(t *testing.T) {
				prec := []float64{0.7} // one per layer, different
				for len(prec) < len(c.sizes)-1 {
					prec = append(prec, prec[len(prec)-1]+0.6)
				}
				spec := nn.Spec{Sizes: c.sizes, Activation: c.act, Likelihood: c.lik, NoiseSD: 0.4, PriorPrecision: prec, PriorDF: c.df}
				model, err := spec.Model()
				if err != nil {
					t.Fatal(err)
				}
				plan, err := NewFor(EnginePlan, model, c.batch, dt)
				if err != nil {
					t.Fatal(err)
				}
				comp, err := NewFor(EngineCompiled, model, c.batch, dt)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := comp.(*compile.Evaluator); !ok {
					t.Fatalf("compiled engine gave %T", comp)
				}
				rng := rand.New(rand.NewPCG(uint64(c.batch), uint64(c.act)))
				data := toyData(c.lik, 400, c.sizes[0], c.sizes[len(c.sizes)-1], rng)
				theta := mlpTheta(spec, rng, c.dead)
				for rep, n := range c.ns {
					idx := rng.Perm(data.N)[:n]
					scale := float64(data.N) / float64(n)
					want := evalMLP(t, plan, spec, theta, data, idx, scale)
					got := evalMLP(t, comp, spec, theta, data, idx, scale)
					compareMLP(t, fmt.Sprintf("evaluation %d (%d examples)", rep, n), want, got)
					theta = mlpTheta(spec, rng, c.dead)
				}
			})
		}
	}
}

// mlpTheta draws parameters: spec's initialisation plus noise, biases of
// sd 0.5; with dead, layer 0's biases so negative that every ReLU of
// layer 0 is off and the later biases zero, so that layer 1's
// pre-activations are exactly zero.
func mlpTheta(spec nn.Spec, rng *rand.Rand, dead bool) []float64 {
	theta := make([]float64, spec.NumParams())
	spec.Init(theta, rng)
	for l, ly := range spec.Layers() {
		for i := ly.W; i < ly.B; i++ {
			theta[i] += 0.05 * rng.NormFloat64()
		}
		for i := ly.B; i < ly.B+ly.Out; i++ {
			switch {
			case dead && l == 0:
				theta[i] = -1e3
			case dead:
				theta[i] = 0
			default:
				theta[i] = 0.5 * rng.NormFloat64()
			}
		}
	}
	return theta
}

// compareMLP fails the test where the compiled engine's evaluation got
// differs from the plan's want in any bit.
func compareMLP(t *testing.T, what string, want, got mlpEval) {
	t.Helper()
	for _, v := range []struct {
		name string
		w, g []float64
	}{
		{"U", []float64{want.u}, []float64{got.u}},
		{"prior (scale 0)", []float64{want.prior}, []float64{got.prior}},
		{"gradient", want.grad, got.grad},
		{"log-likelihoods", want.ll, got.ll},
		{"streamed U", []float64{want.streamU}, []float64{got.streamU}},
		{"streamed gradient", want.stream, got.stream},
		{"logits", want.logits, got.logits},
	} {
		if i := sameBits(v.w, v.g); i >= 0 {
			var a, b float64
			if i < len(v.w) && i < len(v.g) {
				a, b = v.w[i], v.g[i]
			}
			t.Errorf("%s: %s differ at %d (of %d, %d): plan %v, compiled %v", what, v.name, i, len(v.w), len(v.g), a, b)
		}
	}
	if !slices.Equal(want.chunks, got.chunks) || want.streamErr != nil || got.streamErr != nil {
		t.Errorf("%s: streamed chunks at %v (%v), compiled at %v (%v)", what, want.chunks, want.streamErr, got.chunks, got.streamErr)
	}
}

// TestCompiledMLPBatchOne checks that an MLP compiles at batch 1 (train
// --batch 1, a sharded gradient of one example a shard), where Gorgonia's
// bias add has one row, and computes its BLAS plan's values bit for bit.
func TestCompiledMLPBatchOne(t *testing.T) {
	for _, act := range []nn.Activation{nn.ReLU, nn.Tanh} {
		for _, dt := range []DType{Float32, Float64} {
			t.Run(fmt.Sprintf("%s/%s", act, dt), func(t *testing.T) {
				spec := nn.Spec{Sizes: []int{20, 13, 7}, Activation: act, Likelihood: nn.Categorical, PriorPrecision: []float64{0.7, 1.3}}
				model, err := spec.Model()
				if err != nil {
					t.Fatal(err)
				}
				plan, err := autodifftest.NewPlan(spec, 1, dt)
				if err != nil {
					t.Fatal(err)
				}
				comp, err := NewFor(EngineCompiled, model, 1, dt)
				if err != nil {
					t.Fatal(err)
				}
				sharded, err := NewShardedFor(EngineCompiled, model, 2, dt, 2)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, uint64(act)))
				data := toyData(nn.Categorical, 50, 20, 7, rng)
				theta := mlpTheta(spec, rng, false)
				idx := []int{17}
				compareMLP(t, "batch 1", evalMLP(t, plan, spec, theta, data, idx, 50), evalMLP(t, comp, spec, theta, data, idx, 50))
				if _, err := sharded.Eval(theta, data, []int{17, 3}, 25, make([]float64, len(theta)), nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
