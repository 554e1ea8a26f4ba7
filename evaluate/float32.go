package evaluate

import (
	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/datasets"
)

// AddFloat32 is Add of a sample held in float32 (the precision of a
// float32 samples file): an evaluator that takes float32 weights (an
// MLP's float32 plan, autodiff.Float32Logits) reads them without
// converting them to float64 and back, any other gets them widened. The
// probabilities are Add's of the widened sample, bit for bit.
func (e *Ensemble) AddFloat32(w []float32) error {
	return AddAllFloat32(w, e)
}

// AddAllFloat32 is AddAll of a sample held in float32: on a forward pool
// its workers load it as it is, with no float64 copy; otherwise each
// ensemble adds it as AddFloat32 did alone. The probabilities are AddAll's
// of the widened sample, bit for bit.
func AddAllFloat32(w []float32, ens ...*Ensemble) error {
	if err := checkAll(ens, len(w)); err != nil {
		return err
	}
	if pool := sharedPool(ens); pool != nil {
		return addPooled(ens, func(sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
			return pool.EachFloat32(w, sets, f)
		})
	}
	for _, e := range ens {
		var err error
		if e.pool != nil { // pooled, but not with the others: a pass of its own
			err = addPooled([]*Ensemble{e}, func(sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
				return e.pool.EachFloat32(w, sets, f)
			})
		} else {
			err = e.addFloat32(w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addFloat32 adds a float32 sample on the ensemble's predictor.
func (e *Ensemble) addFloat32(w []float32) error {
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
	return AddAll(e.wide, e)
}
