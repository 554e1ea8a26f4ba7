package evaluate

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/autodifftest"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// TestAddFloat32: a float32 sample added by AddFloat32 (read in place by
// the float32 plan) gives Add's probabilities of the widened sample bit
// for bit, over several batches of the evaluator; so does the widening
// path of an evaluator that takes float64 only.
func TestAddFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data, err := datasets.SyntheticImages(1200, 16, 3, rng) // 3 batches of 500
	if err != nil {
		t.Fatal(err)
	}
	spec := nn.Spec{Sizes: []int{16, 12, 3}, PriorPrecision: []float64{1}}
	model, err := spec.Model()
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float32, model.NumParams())
	wide := make([]float64, len(w))
	for i := range w {
		w[i] = float32(rng.NormFloat64())
		wide[i] = float64(w[i])
	}
	ref, err := NewModelEnsemble(model, data)
	if err != nil {
		t.Fatal(err)
	}
	narrow, _ := NewModelEnsemble(model, data)
	if _, ok := narrow.pred.Eval.(autodiff.Float32Logits); !ok {
		t.Fatalf("the ensemble's evaluator %T takes no float32 weights", narrow.pred.Eval)
	}
	for range 2 {
		if err := ref.Add(wide); err != nil {
			t.Fatal(err)
		}
		if err := narrow.AddFloat32(w); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(ref.Sum, narrow.Sum) || !slices.Equal(ref.Ent, narrow.Ent) || narrow.Count != 2 {
		t.Fatal("AddFloat32's sums differ from Add's of the widened sample")
	}
	// an evaluator of float64 weights only: AddFloat32 widens
	ev64, err := autodifftest.NewPlan(spec, 500, autodiff.Float64)
	if err != nil {
		t.Fatal(err)
	}
	a := &Ensemble{Data: data, Model: model, Sum: make([]float64, len(ref.Sum)), Ent: make([]float64, data.N), Last: make([]float64, len(ref.Sum)), LastLogLik: make([]float64, data.N), LogLik: make([]float64, data.N), pred: &autodiff.Predictor{Eval: ev64}}
	b := &Ensemble{Data: data, Model: model, Sum: make([]float64, len(ref.Sum)), Ent: make([]float64, data.N), Last: make([]float64, len(ref.Sum)), LastLogLik: make([]float64, data.N), LogLik: make([]float64, data.N), pred: &autodiff.Predictor{Eval: ev64}}
	if err := a.Add(wide); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFloat32(w); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Sum, b.Sum) {
		t.Fatal("AddFloat32 on a float64 plan differs from Add")
	}
	if err := narrow.AddFloat32(w[1:]); err == nil {
		t.Fatal("a sample of the wrong length was added")
	}
}
