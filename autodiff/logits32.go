package autodiff

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// Float32Logits is implemented by evaluators that take weights already in
// float32 (a float32 Plan): a caller holding float32 samples spares the
// conversions of Logits, float32 to float64 and back.
type Float32Logits interface {
	// Float32 reports whether the evaluator computes in float32, and so
	// takes LogitsFloat32.
	Float32() bool
	LogitsFloat32(w []float32, data *datasets.Dataset, idx []int, out []float64) error
}

// Float32 reports whether the plan computes in float32.
func (p *Plan) Float32() bool { return p.f32 != nil }

// LogitsFloat32 is Logits with the weights in float32, the precision a
// float32 plan computes in: they are read where they are, not converted,
// and the logits are those of Logits of the weights widened to float64,
// bit for bit. A float64 plan refuses them.
func (p *Plan) LogitsFloat32(w []float32, data *datasets.Dataset, idx []int, out []float64) error {
	if p.f32 == nil {
		return fmt.Errorf("logits: a %s plan takes float64 weights", p.dtype)
	}
	k := p.spec.Sizes[len(p.spec.Sizes)-1]
	switch {
	case len(w) != p.Dim():
		return fmt.Errorf("logits: %d weights, model %s has %d parameters", len(w), p.shape.Name, p.Dim())
	case len(idx) == 0 || len(idx) > p.MaxBatch():
		return fmt.Errorf("logits: %d examples, expected 1 to %d", len(idx), p.MaxBatch())
	case data.D != p.shape.Inputs:
		return fmt.Errorf("logits: data has %d features, model %s takes %d", data.D, p.shape.Name, p.shape.Inputs)
	case len(out) < len(idx)*k:
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*k)
	}
	own := p.f32.w
	p.f32.w = w // forward only reads the weights
	p.f32.forward(nil, data, idx, false)
	p.f32.w = own
	for i, v := range p.f32.acts[len(p.f32.layers)][:len(idx)*k] {
		out[i] = float64(v)
	}
	return nil
}
