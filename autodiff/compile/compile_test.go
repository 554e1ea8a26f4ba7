package compile

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/testmodel"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"gorgonia.org/tensor"
)

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
	all, err := nn.NewModel("all-ops", testmodel.AllOps)
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
	ce, err := New(model, batch, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if want := batch * (2*conv1 + 3*conv2 + 3*fc); ce.MACs() != want {
		t.Fatalf("gradient MACs %d, hand count %d", ce.MACs(), want)
	}
	fw, err := NewForward(model, batch, tensor.Float32)
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

// TestEvaluatorErrors checks that Eval, Likelihood and Logits refuse
// arguments that do not fit the model (data, theta, the batch, buffers, a
// gradient from a forward-only plan) with an error, as do New for a batch
// or dtype it cannot compile.
func TestEvaluatorErrors(t *testing.T) {
	model, err := testmodel.SmallCNN(0).Model("small-cnn")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(model, 4, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := NewForward(model, 4, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	data := testmodel.ToyData(nn.Categorical, 6, 36, 3, rng)
	n := model.NumParams()
	theta, grad := make([]float64, n), make([]float64, n)
	for _, c := range []struct {
		name   string
		ev     *Evaluator
		theta  []float64
		data   *datasets.Dataset
		idx    []int
		grad   []float64
		loglik []float64
		want   string
	}{
		{"features", ev, theta, testmodel.ToyData(nn.Categorical, 5, 35, 3, rng), []int{0}, nil, nil, "features"},
		{"classes", ev, theta, testmodel.ToyData(nn.Categorical, 5, 36, 4, rng), []int{0}, nil, nil, "classes"},
		{"regression", ev, theta, testmodel.ToyData(nn.Gaussian, 5, 36, 3, rng), []int{0}, nil, nil, "regression"},
		{"short theta", ev, theta[1:], data, []int{0}, nil, nil, "parameters"},
		{"no examples", ev, theta, data, nil, nil, nil, "examples"},
		{"batch too large", ev, theta, data, []int{0, 1, 2, 3, 4}, nil, nil, "examples"},
		{"short gradient", ev, theta, data, []int{0}, grad[1:], nil, "gradient buffer"},
		{"short log-likelihoods", ev, theta, data, []int{0, 1}, nil, make([]float64, 1), "log-likelihood buffer"},
		{"gradient of forward-only", fw, theta, data, []int{0}, grad, nil, "no gradient"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.ev.Eval(c.theta, c.data, c.idx, 1, c.grad, c.loglik); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Eval: error %v, want one mentioning %q", err, c.want)
			}
			if _, err := c.ev.Likelihood(c.theta, c.data, c.idx, 1, c.grad, c.loglik); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Likelihood: error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	if err := fw.Logits(theta, data, []int{0, 1}, make([]float64, 5)); err == nil {
		t.Error("Logits into a short buffer: no error")
	}
	if err := fw.Logits(theta[1:], data, []int{0}, make([]float64, 3)); err == nil {
		t.Error("Logits of a short theta: no error")
	}
	if _, err := New(model, 0, tensor.Float64); err == nil {
		t.Error("New for batch 0: no error")
	}
	if _, err := New(model, 2, tensor.Int); err == nil {
		t.Error("New for dtype int: no error")
	}
}

// TestEvalPriorFused: with Gaussian priors, Eval sums the prior's value and
// gradient in its conversion passes; the gradient must equal, bit for bit,
// the likelihood's gradient plus Layout.AddNegLogPriorGrad (what Eval
// computed before), and U~ the likelihood plus Layout.NegLogPrior within
// rounding. A Student-t prior takes the separate passes and must equal them
// exactly.
func TestEvalPriorFused(t *testing.T) {
	for _, c := range []struct {
		name  string
		prior nn.PriorConfig
		exact bool
	}{
		{"gaussian", nn.PriorConfig{Precision: 0.7, FanIn: true}, false},
		{"student-t", nn.PriorConfig{Precision: 0.7, DF: 5}, true},
	} {
		model, err := nn.LeNet(c.prior).Model("lenet")
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			ev, err := New(model, 3, dt)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			data := testmodel.ToyData(nn.Categorical, 5, 28*28, 10, rng)
			n := model.NumParams()
			theta := make([]float64, n)
			model.Layout.Init(theta, rng)
			idx := []int{4, 0, 2}
			grad, want := make([]float64, n), make([]float64, n)
			u, err := ev.Eval(theta, data, idx, 7, grad, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := ev.Likelihood(theta, data, idx, 7, want, nil)
			if err != nil {
				t.Fatal(err)
			}
			model.Layout.AddNegLogPriorGrad(theta, want)
			wantU := model.Layout.NegLogPrior(theta) - 7*sum
			for i := range grad {
				if grad[i] != want[i] {
					t.Fatalf("%s %v: grad[%d] = %v, want %v", c.name, dt, i, grad[i], want[i])
				}
			}
			if c.exact && u != wantU || math.Abs(u-wantU) > 1e-12*math.Abs(wantU) {
				t.Errorf("%s %v: U~ %v, want %v", c.name, dt, u, wantU)
			}
		}
	}
}

// TestLogLiksMatchEval: LogLiks converts theta once for any number of
// examples and gives, bit for bit, what Eval's loglik gives batch by batch
// (an MLP's float64 log-likelihoods and a graph's, Gaussian and Student-t
// priors, both dtypes, a last batch part full).
func TestLogLiksMatchEval(t *testing.T) {
	lenet, err := nn.LeNet(nn.PriorConfig{Precision: 0.7, FanIn: true}).Model("lenet")
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := nn.Spec{Sizes: []int{784, 16, 10}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}.Model()
	if err != nil {
		t.Fatal(err)
	}
	mlpT, err := nn.Spec{Sizes: []int{784, 16, 10}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}, PriorDF: 4}.Model()
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []nn.Model{lenet, mlp, mlpT} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			ev, err := New(model, 3, dt)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			data := testmodel.ToyData(nn.Categorical, 9, 28*28, 10, rng)
			theta := make([]float64, model.NumParams())
			model.Layout.Init(theta, rng)
			idx := []int{8, 1, 4, 0, 7, 3, 2, 6}
			want, got := make([]float64, len(idx)), make([]float64, len(idx))
			for s := 0; s < len(idx); s += 3 {
				e := min(s+3, len(idx))
				if _, err := ev.Eval(theta, data, idx[s:e], 1, nil, want[s:e]); err != nil {
					t.Fatal(err)
				}
			}
			if err := ev.LogLiks(theta, data, idx, got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Errorf("%s %v: loglik[%d] = %v, Eval gives %v", model.Name, dt, i, got[i], want[i])
				}
			}
			if err := ev.LogLiks(theta, data, idx, got[:2]); err == nil || !strings.Contains(err.Error(), "2 values for 8 examples") {
				t.Errorf("%s: a short buffer: %v", model.Name, err)
			}
		}
	}
}

// TestLogitsFloat32Errors checks that a float32 MLP's LogitsFloat32 refuses
// data that does not fit the model, as Logits does, with an error rather
// than a panic: regression targets, or more classes than the model has.
func TestLogitsFloat32Errors(t *testing.T) {
	spec := nn.Spec{Sizes: []int{6, 5, 3}, Activation: nn.ReLU, Likelihood: nn.Categorical, PriorPrecision: []float64{1}}
	model, err := spec.Model()
	if err != nil {
		t.Fatal(err)
	}
	ev, err := NewForward(model, 4, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, model.NumParams())
	for name, data := range map[string]*datasets.Dataset{
		"regression":   testmodel.ToyData(nn.Gaussian, 5, 6, 3, rng),
		"more classes": testmodel.ToyData(nn.Categorical, 40, 6, 7, rng),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			idx := make([]int, 4)
			for i := range idx {
				idx[i] = slices.Index(data.Labels, 6-i) // the largest labels, where there are labels
				if idx[i] < 0 {
					idx[i] = i
				}
			}
			if err := ev.LogitsFloat32(w, data, idx, make([]float64, 4*3)); err == nil {
				t.Error("no error")
			}
		})
	}
}
