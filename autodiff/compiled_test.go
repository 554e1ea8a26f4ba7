package autodiff

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/testmodel"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The compiled graph (autodiff/compile) against Gorgonia's VM and through
// NewFor and the sharded evaluator: the tests that need both packages.

// tensorDType is dt as Gorgonia names it (the compiler's dtype).
func tensorDType(dt DType) tensor.Dtype {
	if dt == Float32 {
		return tensor.Float32
	}
	return tensor.Float64
}

type compileCase struct {
	name  string
	model nn.Model
	data  *datasets.Dataset
}

func compileCases(t *testing.T) []compileCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 22))
	var cs []compileCase
	add := func(name string, m nn.Model, err error, d *datasets.Dataset) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cs = append(cs, compileCase{name, m, d})
	}
	for _, act := range []nn.Activation{nn.ReLU, nn.Tanh, nn.Sigmoid} {
		spec := nn.Spec{Sizes: []int{5, 6, 4, 3}, Activation: act, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
		m, err := spec.Model()
		add("mlp-"+act.String(), m, err, toyData(nn.Categorical, 12, 5, 3, rng))
	}
	spec := nn.Spec{Sizes: []int{4, 5, 2}, Activation: nn.Tanh, Likelihood: nn.Gaussian, NoiseSD: 0.5, PriorPrecision: []float64{1}, PriorDF: 3}
	m, err := spec.Model()
	add("mlp-regression", m, err, toyData(nn.Gaussian, 12, 4, 2, rng))
	m, err = nn.NewModel("linear", testmodel.LinearRegression)
	add("linear", m, err, toyData(nn.Gaussian, 12, 3, 2, rng))
	m, err = smallCNN(0).Model("small-cnn")
	add("cnn", m, err, toyData(nn.Categorical, 12, 36, 3, rng))
	three := nn.ConvNet{Height: 8, Width: 8, Channels: 2, Conv: []int{2, 3, 2}, Kernel: 3, Dense: []int{4}, Classes: 3,
		Prior: nn.PriorConfig{Precision: 0.5, FanIn: true}} // CNN3's shape, small
	m, err = three.Model("three-blocks")
	add("cnn-3-blocks", m, err, toyData(nn.Categorical, 12, 128, 3, rng))
	m, err = nn.NewModel("all-ops", testmodel.AllOps)
	add("all-ops", m, err, toyData(nn.Categorical, 12, 25, 3, rng))
	return cs
}

func perturbedInit(m nn.Model, rng *rand.Rand) []float64 {
	theta := make([]float64, m.NumParams())
	m.Layout.Init(theta, rng)
	for i := range theta {
		theta[i] += 0.2 * rng.NormFloat64()
	}
	return theta
}

// TestCompiledMatchesVM checks the compiled plan against Gorgonia's VM on
// the same graph: U~, gradient, per-example log-likelihoods and logits, on
// a padded batch then a full one, in float64 (to 1e-10) and float32 (to
// 1e-4 relative), for MLPs, a regression, a CNN and a graph of every
// supported op.
func TestCompiledMatchesVM(t *testing.T) {
	for _, c := range compileCases(t) {
		for _, dt := range []DType{Float64, Float32} {
			t.Run(c.name+"/"+string(dt), func(t *testing.T) {
				tol := 1e-10
				if dt == Float32 {
					tol = 2e-4
				}
				rng := rand.New(rand.NewPCG(3, 4))
				theta := perturbedInit(c.model, rng)
				vm, err := NewModelEvaluator(c.model, 6, dt)
				if err != nil {
					t.Fatal(err)
				}
				ce, err := compile.New(c.model, 6, tensorDType(dt))
				if err != nil {
					t.Fatal(err)
				}
				for _, idx := range [][]int{{1, 7, 3}, {0, 2, 4, 6, 8, 10}, {11}} {
					gv, gc := make([]float64, len(theta)), make([]float64, len(theta))
					lv, lc := make([]float64, len(idx)), make([]float64, len(idx))
					uv, err := vm.Eval(theta, c.data, idx, 3, gv, lv)
					if err != nil {
						t.Fatal(err)
					}
					uc, err := ce.Eval(theta, c.data, idx, 3, gc, lc)
					if err != nil {
						t.Fatal(err)
					}
					if !near(uv, uc, tol) {
						t.Fatalf("batch %v: U compiled %v, VM %v", idx, uc, uv)
					}
					scale := 0.0
					for _, v := range gv {
						scale = math.Max(scale, math.Abs(v))
					}
					for i := range gv {
						if math.Abs(gv[i]-gc[i]) > tol*(1+scale) {
							t.Fatalf("batch %v: gradient %d (%s): compiled %v, VM %v", idx, i, paramOf(c.model, i), gc[i], gv[i])
						}
					}
					for i := range lv {
						if !near(lv[i], lc[i], tol) {
							t.Fatalf("batch %v: log-likelihood %d: compiled %v, VM %v", idx, i, lc[i], lv[i])
						}
					}
				}
				if !c.model.Logits {
					return
				}
				fw, err := compile.NewForward(c.model, 6, tensorDType(dt))
				if err != nil {
					t.Fatal(err)
				}
				idx := []int{5, 9}
				zv, zc := make([]float64, 2*c.model.Outputs), make([]float64, 2*c.model.Outputs)
				if err := vm.Logits(theta, c.data, idx, zv); err != nil {
					t.Fatal(err)
				}
				if err := fw.Logits(theta, c.data, idx, zc); err != nil {
					t.Fatal(err)
				}
				for i := range zv {
					if !near(zv[i], zc[i], tol) {
						t.Fatalf("logit %d: compiled %v, VM %v", i, zc[i], zv[i])
					}
				}
				if _, err := fw.Eval(theta, c.data, idx, 1, make([]float64, len(theta)), nil); err == nil {
					t.Fatal("forward-only compiled evaluator returned a gradient")
				}
			})
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(a)) }

func paramOf(m nn.Model, i int) string {
	for _, p := range m.Layout {
		if i >= p.Offset && i < p.Offset+p.Size() {
			return p.Name
		}
	}
	return "?"
}

// TestCompiledFiniteDifferences checks the compiled gradient against central
// finite differences of its own potential (float64, padded batch).
func TestCompiledFiniteDifferences(t *testing.T) {
	for _, c := range compileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			theta := perturbedInit(c.model, rng)
			ce, err := compile.New(c.model, 6, tensor.Float64)
			if err != nil {
				t.Fatal(err)
			}
			if w := fdWorst(t, ce, theta, c.data, []int{2, 9, 4, 0}, 2.5); w > 1e-6 {
				t.Fatalf("largest relative gradient error %.3g > 1e-6", w)
			}
		})
	}
}

// TestCompiledRegistered checks every registered CNN (LeNet, CNN3)
// compiled against the VM at a small batch in float32 (what train runs).
func TestCompiledRegistered(t *testing.T) {
	for _, name := range nn.ModelNames() {
		t.Run(name, func(t *testing.T) { testCompiledRegistered(t, name) })
	}
}

func testCompiledRegistered(t *testing.T, name string) {
	model, err := nn.Models[name](nn.PriorConfig{Precision: 1, FanIn: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := compile.Check(model); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	data := toyData(nn.Categorical, 4, 784, 10, rng)
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	vm, err := NewModelEvaluator(model, 2, Float32)
	if err != nil {
		t.Fatal(err)
	}
	ce, err := compile.New(model, 2, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{3, 1}
	gv, gc := make([]float64, len(theta)), make([]float64, len(theta))
	uv, _ := vm.Eval(theta, data, idx, 100, gv, nil)
	uc, err := ce.Eval(theta, data, idx, 100, gc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !near(uv, uc, 1e-5) {
		t.Fatalf("U compiled %v, VM %v", uc, uv)
	}
	var num, den float64
	for i := range gv {
		num += (gv[i] - gc[i]) * (gv[i] - gc[i])
		den += gv[i] * gv[i]
	}
	if r := math.Sqrt(num / den); r > 1e-5 {
		t.Fatalf("gradient relative difference %.3g > 1e-5", r)
	}
}

// unsupportedModel uses Gorgonia's Max reduction, which the compiler has
// no kernel for.
func unsupportedModel(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	g, err := testmodel.LinearRegression(batch, dt)
	if err != nil {
		return nil, err
	}
	m, err := G.Max(g.LogLik)
	if err != nil {
		return nil, err
	}
	if g.LogLik, err = G.Sub(g.LogLik, m); err != nil {
		return nil, err
	}
	return g, nil
}

// TestUnsupportedOpFallsBack checks that a graph with an op the compiler
// does not know is refused with the op's name, and that NewFor then runs it
// on the VM.
func TestUnsupportedOpFallsBack(t *testing.T) {
	model, err := nn.NewModel("with-max", unsupportedModel)
	if err != nil {
		t.Fatal(err)
	}
	err = compile.Check(model)
	if !compile.IsUnsupported(err) || !strings.Contains(err.Error(), `"MaxAlong`) {
		t.Fatalf("compile.Check: %v, want an unsupported-op error naming MaxAlong", err)
	}
	ev, err := NewFor(EngineCompiled, model, 4, Float64)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.(*GraphEvaluator); !ok {
		t.Fatalf("NewFor chose %T for a model with an unsupported op", ev)
	}
	good, _ := nn.NewModel("linear", testmodel.LinearRegression)
	if err := compile.Check(good); err != nil {
		t.Fatal(err)
	}
	ev, err = NewFor(EngineCompiled, good, 4, Float64)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.(*compile.Evaluator); !ok {
		t.Fatalf("NewFor chose %T for a compilable model", ev)
	}
}

// TestCompiledNoAllocs checks that a compiled gradient allocates nothing in
// steady state, on one graph and sharded over two in parallel.
func TestCompiledNoAllocs(t *testing.T) {
	model, err := smallCNN(0).Model("small-cnn")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data := toyData(nn.Categorical, 8, 36, 3, rng)
	for _, dt := range []DType{Float32, Float64} {
		ce, err := compile.New(model, 4, tensorDType(dt))
		if err != nil {
			t.Fatal(err)
		}
		theta := perturbedInit(model, rng)
		grad := make([]float64, len(theta))
		idx := []int{0, 1, 2}
		n := testing.AllocsPerRun(5, func() {
			if _, err := ce.Eval(theta, data, idx, 2, grad, nil); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Fatalf("%s: %v allocations per gradient", dt, n)
		}
		sh, err := NewShardedFor(EngineCompiled, model, 4, dt, 2)
		if err != nil {
			t.Fatal(err)
		}
		idx = []int{0, 1, 2, 5}
		if _, err := sh.Eval(theta, data, idx, 2, grad, nil); err != nil { // starts the second shard's goroutine
			t.Fatal(err)
		}
		n = testing.AllocsPerRun(5, func() {
			if _, err := sh.Eval(theta, data, idx, 2, grad, nil); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Fatalf("%s: %v allocations per sharded gradient", dt, n)
		}
		// an MLP (the plan's arithmetic): its gradient written and streamed
		spec := nn.Spec{Sizes: []int{36, 5, 3}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
		mlp, err := spec.Model()
		if err != nil {
			t.Fatal(err)
		}
		me, err := compile.New(mlp, 4, tensorDType(dt))
		if err != nil {
			t.Fatal(err)
		}
		mtheta := perturbedInit(mlp, rng)
		mgrad := make([]float64, len(mtheta))
		var sink float64
		n = testing.AllocsPerRun(5, func() {
			if _, err := me.Eval(mtheta, data, idx, 2, mgrad, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := me.EvalStream(mtheta, data, idx, 2, func(lo int, g []float64) { sink += g[0] }); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Fatalf("%s: %v allocations per MLP gradient, written and streamed", dt, n)
		}
	}
}
