package autodiff

import "github.com/ptsghmc/ptsghmc/datasets"

// Float32Logits is implemented by evaluators that take weights already in
// float32 (a float32 compile.Evaluator of an MLP): a caller holding float32 samples spares the
// conversions of Logits, float32 to float64 and back.
type Float32Logits interface {
	// Float32 reports whether the evaluator computes in float32, and so
	// takes LogitsFloat32.
	Float32() bool
	LogitsFloat32(w []float32, data *datasets.Dataset, idx []int, out []float64) error
}
