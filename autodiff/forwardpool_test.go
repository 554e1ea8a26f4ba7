package autodiff

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/testmodel"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// TestForwardPoolMatchesPredictor: the pool's logits of every example of
// two sets (full batches, short ends cut into halving batches, three
// workers) are the Predictor's on the same engine, bit for bit, in float32
// and float64, from float64 and float32 weights; each example is handed
// over once. Bad input is an error, not a panic.
func TestForwardPoolMatchesPredictor(t *testing.T) {
	model, err := smallCNN(0).Model("small-cnn")
	if err != nil {
		t.Fatal(err)
	}
	if !Poolable(EnginePlan, model) || Poolable(EngineGraph, model) {
		t.Fatal("a compiled CNN should be poolable, on the compiled engines only")
	}
	if mlp, err := (nn.Spec{Sizes: []int{4, 3}, PriorPrecision: []float64{1}}).Model(); err != nil || Poolable(EnginePlan, mlp) {
		t.Fatalf("an MLP is poolable (%v)", err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	sets := []*datasets.Dataset{
		testmodel.ToyData(nn.Categorical, 45, 36, 3, rng), // 2 batches of 16 and 13 = 8+4+1
		testmodel.ToyData(nn.Categorical, 7, 36, 3, rng),
	}
	w32 := make([]float32, model.NumParams())
	theta := make([]float64, len(w32))
	for i := range w32 {
		w32[i] = float32(rng.NormFloat64() * 0.5)
		theta[i] = float64(w32[i])
	}
	for _, dt := range []DType{Float32, Float64} {
		pred, err := NewPredictorFor(EnginePlan, model, 16, dt)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]float64, len(sets))
		for s, d := range sets {
			want[s] = make([]float64, d.N*3)
			p := Predictor{Eval: pred}
			if err := p.Each(theta, d, func(i int, z []float64) { copy(want[s][i*3:], z) }); err != nil {
				t.Fatal(err)
			}
		}
		pool, err := NewForwardPool(EnginePlan, model, 16, dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, f32 := range []bool{false, true} {
			got := [][]float64{make([]float64, 45*3), make([]float64, 7*3)}
			seen := [][]int{make([]int, 45), make([]int, 7)}
			f := func(set, i int, z []float64) {
				copy(got[set][i*3:], z)
				seen[set][i]++
			}
			if f32 {
				err = pool.EachFloat32(w32, sets, f)
			} else {
				err = pool.Each(theta, sets, f)
			}
			if err != nil {
				t.Fatal(err)
			}
			for s := range sets {
				if !slices.Equal(got[s], want[s]) {
					t.Fatalf("%s, float32 weights %v, set %d: the pool's logits differ from the predictor's", dt, f32, s)
				}
				for i, n := range seen[s] {
					if n != 1 {
						t.Fatalf("set %d example %d handed over %d times", s, i, n)
					}
				}
			}
		}
	}
	pool, err := NewForwardPool(EnginePlan, model, 16, Float32, 2)
	if err != nil {
		t.Fatal(err)
	}
	noop := func(int, int, []float64) {}
	wide := testmodel.ToyData(nn.Categorical, 3, 37, 3, rng)
	// sets a worker would have panicked on
	badLabel := testmodel.ToyData(nn.Categorical, 3, 36, 3, rng)
	badLabel.Labels[1] = 3
	moreClasses := testmodel.ToyData(nn.Categorical, 3, 36, 3, rng)
	moreClasses.Classes = 4
	short := testmodel.ToyData(nn.Categorical, 3, 36, 3, rng)
	short.X = short.X[:107]
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"short sample", pool.Each(theta[1:], sets, noop), "parameters"},
		{"short float32 sample", pool.EachFloat32(w32[1:], sets, noop), "parameters"},
		{"images of another size", pool.Each(theta, []*datasets.Dataset{wide}, noop), "features"},
		{"a label beyond the outputs", pool.Each(theta, []*datasets.Dataset{badLabel}, noop), "label 3 of example 1 outside [0, 3)"},
		{"more classes than outputs", pool.Each(theta, []*datasets.Dataset{moreClasses}, noop), "4 classes and 0 targets, model small-cnn has 3 outputs"},
		{"fewer values than images", pool.Each(theta, []*datasets.Dataset{short}, noop), "need 108 values, have 107"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one about %s", c.name, c.err, c.want)
		}
	}
	if _, err := NewForwardPool(EnginePlan, model, 0, Float32, 1); err == nil {
		t.Error("a pool of batch 0 was made")
	}
}
