package evaluate

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff"
)

// AddFloat32 is Add of a sample held in float32 (the precision of a
// float32 samples file): an evaluator that takes float32 weights (an
// MLP's float32 plan, autodiff.Float32Logits) reads them without
// converting them to float64 and back, any other gets them widened. The
// probabilities are Add's of the widened sample, bit for bit.
func (e *Ensemble) AddFloat32(w []float32) error {
	if n := e.Model.NumParams(); len(w) != n {
		return fmt.Errorf("ensemble: sample of %d values, model %s has %d parameters (samples of another model?)", len(w), e.Model.Name, n)
	}
	if ev, ok := e.pred.Eval.(autodiff.Float32Logits); ok && ev.Float32() {
		return e.addEach(func(f func(i int, z []float64)) error {
			return e.pred.EachOf(func(idx []int, out []float64) error { return ev.LogitsFloat32(w, e.Data, idx, out) }, e.Data, f)
		})
	}
	if len(e.wide) != len(w) {
		e.wide = make([]float64, len(w))
	}
	for i, v := range w {
		e.wide[i] = float64(v)
	}
	return e.Add(e.wide)
}
