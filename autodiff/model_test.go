package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// fdWorst returns the largest relative error of ev's gradient against
// central finite differences of its own potential.
func fdWorst(t *testing.T, ev Evaluator, theta []float64, data *datasets.Dataset, idx []int, scale float64) float64 {
	t.Helper()
	grad := make([]float64, len(theta))
	if _, err := ev.Eval(theta, data, idx, scale, grad, nil); err != nil {
		t.Fatal(err)
	}
	const h = 1e-5
	worst := 0.0
	for i := range theta {
		old := theta[i]
		theta[i] = old + h
		up, err1 := ev.Eval(theta, data, idx, scale, nil, nil)
		theta[i] = old - h
		dn, err2 := ev.Eval(theta, data, idx, scale, nil, nil)
		theta[i] = old
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		fd := (up - dn) / (2 * h)
		worst = math.Max(worst, math.Abs(fd-grad[i])/math.Max(1e-2, math.Abs(fd)+math.Abs(grad[i])))
	}
	return worst
}

// TestConvNetGradientFiniteDifferences checks the generic evaluator's
// gradient (Gorgonia's Grad through Conv2d, MaxPool2D, Rectify and the
// dense layers, plus the prior) against finite differences on a small CNN,
// with a padded batch, for the Gaussian and the Student-t prior.
func TestConvNetGradientFiniteDifferences(t *testing.T) {
	for _, df := range []float64{0, 3} {
		t.Run(fmt.Sprintf("df%g", df), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(df)))
			model, err := smallCNN(df).Model("small-cnn")
			if err != nil {
				t.Fatal(err)
			}
			data := toyData(nn.Categorical, 9, 36, 3, rng)
			ev, err := NewFor(EngineGraph, model, 4, Float64) // the VM (the compiled plan: TestCompiledFiniteDifferences)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ev.(*GraphEvaluator); !ok {
				t.Fatalf("NewFor chose %T for a CNN on engine graph", ev)
			}
			theta := make([]float64, model.NumParams())
			model.Layout.Init(theta, rng)
			for i := range theta {
				theta[i] += 0.1 * rng.NormFloat64()
			}
			if w := fdWorst(t, ev, theta, data, []int{0, 4, 7}, 1.5); w > 1e-6 {
				t.Fatalf("largest relative gradient error %.3g > 1e-6", w)
			}
		})
	}
}

// TestModelEvaluatorDTypes checks that the float32 graph of a CNN agrees
// with the float64 one, that repeated evaluations (buffers reused) give the
// same result, and that a forward-only evaluator reports the same
// log-likelihoods and logits whose log-softmax they are.
func TestModelEvaluatorDTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	model, err := smallCNN(0).Model("small-cnn")
	if err != nil {
		t.Fatal(err)
	}
	data := toyData(nn.Categorical, 20, 36, 3, rng)
	theta := make([]float64, model.NumParams())
	model.Layout.Init(theta, rng)
	idx := []int{3, 1, 4, 15, 9}
	e64, _ := NewModelEvaluator(model, 8, Float64)
	e32, err := NewModelEvaluator(model, 8, Float32)
	if err != nil {
		t.Fatal(err)
	}
	g64, g32 := make([]float64, len(theta)), make([]float64, len(theta))
	ll64, ll32 := make([]float64, len(idx)), make([]float64, len(idx))
	u64, err := e64.Eval(theta, data, idx, 4, g64, ll64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e64.Eval(theta, data, []int{0, 2, 5, 6, 7, 8, 10, 11}, 4, g32, nil); err != nil { // a full batch between
		t.Fatal(err)
	}
	again, _ := e64.Eval(theta, data, idx, 4, g32, nil)
	if again != u64 {
		t.Fatalf("re-evaluation gave U %v, first %v", again, u64)
	}
	u32, _ := e32.Eval(theta, data, idx, 4, g32, ll32)
	if math.Abs(u32-u64) > 1e-5*math.Abs(u64) {
		t.Fatalf("float32 U %v, float64 U %v", u32, u64)
	}
	for i := range g64 {
		if math.Abs(g32[i]-g64[i]) > 1e-3*(1+math.Abs(g64[i])) {
			t.Fatalf("gradient %d: float32 %v, float64 %v", i, g32[i], g64[i])
		}
	}
	fw, err := NewPredictor(model, 8, Float64)
	if err != nil {
		t.Fatal(err)
	}
	llf := make([]float64, len(idx))
	if _, err := fw.Eval(theta, data, idx, 4, nil, llf); err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Eval(theta, data, idx, 4, make([]float64, len(theta)), nil); err == nil {
		t.Fatal("forward-only evaluator returned a gradient")
	}
	logits := make([]float64, len(idx)*3)
	if err := Logits(fw, theta, data, idx, logits); err != nil {
		t.Fatal(err)
	}
	for r, i := range idx {
		z := logits[r*3 : r*3+3]
		lse := math.Log(math.Exp(z[0]) + math.Exp(z[1]) + math.Exp(z[2]))
		want := z[data.Labels[i]] - lse
		if math.Abs(llf[r]-ll64[r]) > 1e-12 || math.Abs(want-ll64[r]) > 1e-12 {
			t.Fatalf("example %d: log-likelihood %v, forward-only %v, from logits %v", i, ll64[r], llf[r], want)
		}
	}
}

// TestModelEvaluatorErrors checks data the model does not fit is refused.
func TestModelEvaluatorErrors(t *testing.T) {
	model, _ := smallCNN(0).Model("small-cnn")
	ev, err := NewModelEvaluator(model, 4, Float64)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, model.NumParams())
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name string
		data *datasets.Dataset
	}{
		{"features", toyData(nn.Categorical, 5, 35, 3, rng)},
		{"classes", toyData(nn.Categorical, 5, 36, 4, rng)},
		{"regression", toyData(nn.Gaussian, 5, 36, 3, rng)},
	} {
		if _, err := ev.Eval(theta, c.data, []int{0}, 1, nil, nil); err == nil {
			t.Errorf("%s mismatch: no error", c.name)
		}
	}
	if _, err := ev.Eval(theta[1:], toyData(nn.Categorical, 5, 36, 3, rng), []int{0}, 1, nil, nil); err == nil {
		t.Error("short theta: no error")
	}
}

// rowNormModel is a classifier of its inputs scaled to unit length,
// x / |x| W: finite on every non-zero example, 0/0 on a zero one.
func rowNormModel(batch int, dt tensor.Dtype) (*nn.Graph, error) {
	eg := G.NewGraph()
	g := &nn.Graph{G: eg, Batch: batch, DType: dt, OneHot: true,
		Input:  G.NewMatrix(eg, dt, G.WithShape(batch, 4), G.WithName("x")),
		Target: G.NewMatrix(eg, dt, G.WithShape(batch, 3), G.WithName("y")),
	}
	w := G.NewMatrix(eg, dt, G.WithShape(4, 3), G.WithName("w"))
	g.Learnables, g.Priors, g.InitSD = G.Nodes{w}, []nn.Prior{{Precision: 1}}, []float64{0.5}
	ones := make([]float64, 16) // x^2 ones: each row's squared length in every column
	for i := range ones {
		ones[i] = 1
	}
	var backing any = ones
	if dt == tensor.Float32 {
		backing = []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	}
	sq, err := G.Square(g.Input)
	if err != nil {
		return nil, err
	}
	ss, err := G.Mul(sq, G.NewConstant(tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(backing))))
	if err != nil {
		return nil, err
	}
	norm, err := G.Sqrt(ss)
	if err != nil {
		return nil, err
	}
	xn, err := G.HadamardDiv(g.Input, norm)
	if err != nil {
		return nil, err
	}
	if g.Logits, err = G.Mul(xn, w); err != nil {
		return nil, err
	}
	g.LogLik, err = nn.CategoricalLogLik(g.Logits, g.Target)
	return g, err
}

// TestShortBatchPadding checks that the rows padding a short batch do not
// reach its gradient: a model finite on every example (rowNormModel, 0/0
// on a zero row) gets on a short batch the gradient an evaluator of just
// that batch size computes, finite, on every engine and dtype.
func TestShortBatchPadding(t *testing.T) {
	model, err := nn.NewModel("row-norm", rowNormModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range []Engine{EngineCompiled, EngineGraph} {
		for _, dt := range []DType{Float64, Float32} {
			t.Run(fmt.Sprintf("%s/%s", engine, dt), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 5))
				data := toyData(nn.Categorical, 9, 4, 3, rng)
				theta := make([]float64, model.NumParams())
				model.Layout.Init(theta, rng)
				idx := []int{4, 1}
				padded, err := NewFor(engine, model, 5, dt)
				if err != nil {
					t.Fatal(err)
				}
				exact, err := NewFor(engine, model, len(idx), dt)
				if err != nil {
					t.Fatal(err)
				}
				got, want := make([]float64, len(theta)), make([]float64, len(theta))
				ug, err1 := padded.Eval(theta, data, idx, 4.5, got, nil)
				uw, err2 := exact.Eval(theta, data, idx, 4.5, want, nil)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if ug != uw {
					t.Errorf("U~ %v on a padded batch, %v on an exact one", ug, uw)
				}
				for i := range want {
					if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
						t.Fatalf("gradient %d: %v on a padded batch, %v on an exact one", i, got[i], want[i])
					}
				}
			})
		}
	}
}
