package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// allOpsModel is a small classifier whose graph uses every op the compiler
// supports: Conv2d (im2col, reshapes, a product with a transposed operand,
// a transpose, fused into one kernel), Im2Col on its own, broadcast bias adds, Rectify, MaxPool2D, Reshape, Mul,
// Transpose, Tanh, Sigmoid, Square, Neg, Exp, Log, Sqrt, Add, Sub,
// HadamardProd, HadamardDiv, scalar constants, SoftMax, LogSoftMax and Sum.
func allOpsModel(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	eg := G.NewGraph()
	g := &nn.Graph{G: eg, Batch: batch, DType: dt, OneHot: true,
		Input:  G.NewTensor(eg, dt, 4, G.WithShape(batch, 1, 5, 5), G.WithName("x")),
		Target: G.NewMatrix(eg, dt, G.WithShape(batch, 3), G.WithName("y")),
	}
	learn := func(n *G.Node, sd float64) *G.Node {
		g.Learnables = append(g.Learnables, n)
		g.Priors = append(g.Priors, nn.Prior{Precision: 0.7})
		g.InitSD = append(g.InitSD, sd)
		return n
	}
	cw := learn(G.NewTensor(eg, dt, 4, G.WithShape(2, 1, 3, 3), G.WithName("cw")), 0.5)
	cb := learn(G.NewVector(eg, dt, G.WithShape(2), G.WithName("cb")), 0.1)
	w1 := learn(G.NewMatrix(eg, dt, G.WithShape(8, 4), G.WithName("w1")), 0.5)
	b1 := learn(G.NewVector(eg, dt, G.WithShape(4), G.WithName("b1")), 0.1)
	v := learn(G.NewMatrix(eg, dt, G.WithShape(3, 4), G.WithName("v")), 0.5)
	u := learn(G.NewMatrix(eg, dt, G.WithShape(32, 3), G.WithName("u")), 0.3)
	cw2 := learn(G.NewTensor(eg, dt, 4, G.WithShape(1, 1, 3, 3), G.WithName("cw2")), 0.3)
	u2 := learn(G.NewMatrix(eg, dt, G.WithShape(9, 3), G.WithName("u2")), 0.3)
	one := constant(dt, 1)
	must := func(n *G.Node, err error) *G.Node {
		if err != nil {
			panic(err) // test helper: the graph is fixed
		}
		return n
	}
	// a convolution with no bias or ReLU after it (stride 2, no padding)
	plain := must(G.Conv2d(g.Input, cw2, tensor.Shape{3, 3}, []int{0, 0}, []int{1, 1}, []int{1, 1}))
	extra2 := must(G.Mul(must(G.Reshape(plain, tensor.Shape{batch, 9})), u2))
	h := must(G.Conv2d(g.Input, cw, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}))
	h = must(G.BroadcastAdd(h, cb, nil, []byte{0, 2, 3}))
	h = must(G.Rectify(h))
	// im2col on its own (not a convolution): patches of the hidden layer
	cols := must(G.Im2Col(h, tensor.Shape{2, 2}, tensor.Shape{0, 0}, tensor.Shape{2, 2}, tensor.Shape{1, 1}))
	extra := must(G.Mul(must(G.Reshape(cols, tensor.Shape{batch, 32})), u))
	h = must(G.MaxPool2D(h, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
	h = must(G.Reshape(h, tensor.Shape{batch, 8}))
	h = must(G.Mul(h, w1))
	h = must(G.BroadcastAdd(h, b1, nil, []byte{0}))
	h = must(G.Tanh(h))
	h = must(G.HadamardProd(must(G.Sigmoid(h)), must(G.Square(h))))
	z := must(G.Mul(h, must(G.Transpose(v))))
	e := must(G.HadamardDiv(z, must(G.Add(must(G.Exp(must(G.Neg(must(G.Square(z)))))), one))))
	s := must(G.Log(must(G.Add(must(G.SoftMax(z, 1)), one))))
	r := must(G.Sqrt(must(G.Add(must(G.Square(z)), one))))
	logits := must(G.Sub(must(G.Add(e, must(G.Mul(constant(dt, 0.5), s)))), must(G.Mul(constant(dt, 0.25), r))))
	logits = must(G.Add(must(G.Add(logits, extra)), extra2))
	g.Logits = logits
	var err error
	if g.LogLik, err = nn.CategoricalLogLik(logits, g.Target); err != nil {
		return nil, err
	}
	return g, nil
}

func constant(dt tensor.Dtype, v float64) *G.Node {
	if dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

// linearRegression is a regression model through nn.GaussianLogLik with two
// outputs.
func linearRegression(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	eg := G.NewGraph()
	x := G.NewMatrix(eg, dt, G.WithShape(batch, 3), G.WithName("x"))
	y := G.NewMatrix(eg, dt, G.WithShape(batch, 2), G.WithName("y"))
	w := G.NewMatrix(eg, dt, G.WithShape(3, 2), G.WithName("w"))
	b := G.NewVector(eg, dt, G.WithShape(2), G.WithName("b"))
	xw, err := G.Mul(x, w)
	if err != nil {
		return nil, err
	}
	f, err := G.BroadcastAdd(xw, b, nil, []byte{0})
	if err != nil {
		return nil, err
	}
	ll, err := nn.GaussianLogLik(f, y, 0.7)
	if err != nil {
		return nil, err
	}
	p := nn.Prior{Precision: 2}
	return &nn.Graph{G: eg, Batch: batch, DType: dt, Input: x, Target: y, Learnables: G.Nodes{w, b},
		Priors: []nn.Prior{p, p}, InitSD: []float64{0.5, 0.5}, LogLik: ll}, nil
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
	m, err = nn.NewModel("linear", linearRegression)
	add("linear", m, err, toyData(nn.Gaussian, 12, 3, 2, rng))
	m, err = smallCNN(0).Model("small-cnn")
	add("cnn", m, err, toyData(nn.Categorical, 12, 36, 3, rng))
	three := nn.ConvNet{Height: 8, Width: 8, Channels: 2, Conv: []int{2, 3, 2}, Kernel: 3, Dense: []int{4}, Classes: 3,
		Prior: nn.PriorConfig{Precision: 0.5, FanIn: true}} // CNN3's shape, small
	m, err = three.Model("three-blocks")
	add("cnn-3-blocks", m, err, toyData(nn.Categorical, 12, 128, 3, rng))
	m, err = nn.NewModel("all-ops", allOpsModel)
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
				ce, err := Compile(c.model, 6, dt)
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
				fw, err := CompileForward(c.model, 6, dt)
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
			ce, err := Compile(c.model, 6, Float64)
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
	if err := Compilable(model); err != nil {
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
	ce, err := Compile(model, 2, Float32)
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
	g, err := linearRegression(batch, dt)
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
	err = Compilable(model)
	if !IsUnsupported(err) || !strings.Contains(err.Error(), `"MaxAlong`) {
		t.Fatalf("Compilable: %v, want an unsupported-op error naming MaxAlong", err)
	}
	ev, err := NewFor(EngineCompiled, model, 4, Float64)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.(*GraphEvaluator); !ok {
		t.Fatalf("NewFor chose %T for a model with an unsupported op", ev)
	}
	good, _ := nn.NewModel("linear", linearRegression)
	if err := Compilable(good); err != nil {
		t.Fatal(err)
	}
	ev, err = NewFor(EngineCompiled, good, 4, Float64)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.(*CompiledEvaluator); !ok {
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
		ce, err := Compile(model, 4, dt)
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
	}
}

func ExampleCompile() {
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1, FanIn: true}).Model("lenet")
	if err != nil {
		fmt.Println(err)
		return
	}
	ev, err := Compile(model, 32, Float32)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Dim(), ev.MaxBatch())
	// Output: 857738 32
}

// TestCompiledKernels checks which kernels the compiler chose: LeNet's two
// convolution blocks fused with their bias, ReLU and pooling (no im2col or
// transpose left), and the all-ops graph's block without pooling (its ReLU
// feeds two nodes), its convolution without bias, and its im2col and
// transpose run on their own.
func TestCompiledKernels(t *testing.T) {
	lenet, err := nn.LeNet(nn.PriorConfig{Precision: 1}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	all, err := nn.NewModel("all-ops", allOpsModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model nn.Model
		want  map[string]int
	}{
		{lenet, map[string]int{"convblock": 2, "conv": 0, "relu": 1, "im2colOp": 0, "transposeOp": 0, "maxPoolOp": 0, "linAlgBinOp": 2, "softmaxOp": 1}},
		{all, map[string]int{"convblock": 1, "conv": 1, "relu": 0, "im2colOp": 1, "transposeOp": 1, "maxPoolOp": 1}},
	} {
		p, _, err := compileModel[float32](c.model, 2, tensor.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, k := range p.ops {
			got[k]++
		}
		for k, n := range c.want {
			if got[k] != n {
				t.Errorf("%s: %d %s steps, want %d (steps %v)", c.model.Name, got[k], k, n, p.ops)
			}
		}
	}
}

// TestCompiledMACs checks the multiply-add count against a hand count for
// LeNet: per example, conv1 32 filters of 1*5*5 at 28*28 positions, forward
// and filter gradient (the images need no adjoint); conv2 64 of 32*5*5 at
// 14*14, forward, filter and input adjoints; fc1 3136x256 and fc2 256x10,
// three products each. The forward-only plan has the forward third.
func TestCompiledMACs(t *testing.T) {
	model, err := nn.LeNet(nn.PriorConfig{Precision: 1}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	conv1 := int64(32 * 25 * 28 * 28)
	conv2 := int64(64 * 800 * 14 * 14)
	fc := int64(3136*256 + 256*10)
	const batch = 3
	ce, err := Compile(model, batch, Float32)
	if err != nil {
		t.Fatal(err)
	}
	if want := batch * (2*conv1 + 3*conv2 + 3*fc); ce.MACs() != want {
		t.Fatalf("gradient MACs %d, hand count %d", ce.MACs(), want)
	}
	fw, err := CompileForward(model, batch, Float32)
	if err != nil {
		t.Fatal(err)
	}
	if want := batch * (conv1 + conv2 + fc); fw.MACs() != want {
		t.Fatalf("forward MACs %d, hand count %d", fw.MACs(), want)
	}
}

// TestReluMask checks the branch-free mask against z >= 0 on zeros of both
// signs, infinities, NaNs, subnormals and ordinary values.
func TestReluMask(t *testing.T) {
	zs := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), 5e-324, -5e-324, 1e-40, -1e-40, 3.5, -2.25}
	z32 := make([]float32, len(zs))
	for i, v := range zs {
		z32[i] = float32(v)
	}
	g64, g32 := make([]float64, len(zs)), make([]float32, len(zs))
	for i := range zs {
		g64[i], g32[i] = 7, 7
	}
	reluMask(zs, g64)
	reluMask(z32, g32)
	for i, v := range zs {
		want := 0.0
		if v >= 0 {
			want = 7
		}
		w32 := float32(0)
		if z32[i] >= 0 {
			w32 = 7
		}
		if g64[i] != want || g32[i] != w32 {
			t.Errorf("z %v: float64 mask kept %v (want %v), float32 %v (want %v)", v, g64[i], want, g32[i], w32)
		}
	}
}
