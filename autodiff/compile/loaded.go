package compile

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/dense"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/evalargs"
	"github.com/ptsghmc/ptsghmc/datasets"
)

// Loaded weights: a predictive pass runs one weight sample over many
// batches of examples. Logits converts and loads the weights at every
// call; LoadWeights (or LoadWeightsFloat32) loads them once, and
// LoadedLogits then runs batch after batch on them. The logits are those
// of Logits, bit for bit: the forward pass reads the same values.

// LoadWeights writes theta into the evaluator's parameter buffers, in its
// precision, for the LoadedLogits calls that follow. Any other evaluation
// (Eval, Logits, LogLiks, ...) replaces the loaded weights with its own.
func (e *Evaluator) LoadWeights(theta []float64) error {
	if len(theta) != e.Dim() {
		return fmt.Errorf("load weights: %d values, model %s has %d parameters", len(theta), e.model.Name, e.Dim())
	}
	if e.f32 != nil {
		loadWeights(e, e.f32, theta)
	} else {
		loadWeights(e, e.f64, theta)
	}
	return nil
}

func loadWeights[T float](e *Evaluator, p *program[T], theta []float64) {
	if e.mlp != nil {
		dense.LoadTheta(e.layers, e.mlp.Precision, p.flat, theta, false)
		return
	}
	loadParams(e.model, p, theta, false)
}

// LoadWeightsFloat32 is LoadWeights of weights held in float32 (a float32
// samples file's): a float32 evaluator copies them as they are, with no
// float64 copy; a float64 one widens them. The loaded values are those
// LoadWeights loads of the weights widened to float64.
func (e *Evaluator) LoadWeightsFloat32(w []float32) error {
	if len(w) != e.Dim() {
		return fmt.Errorf("load weights: %d values, model %s has %d parameters", len(w), e.model.Name, e.Dim())
	}
	if e.f32 != nil {
		loadWeightsFloat32(e, e.f32, w)
	} else {
		loadWeightsFloat32(e, e.f64, w)
	}
	return nil
}

func loadWeightsFloat32[T float](e *Evaluator, p *program[T], w []float32) {
	if e.mlp != nil {
		for i, v := range w {
			p.flat[i] = T(v)
		}
		return
	}
	for i, par := range e.model.Layout {
		dst := p.params[i]
		for j, v := range w[par.Offset : par.Offset+par.Size()] {
			dst[j] = T(v)
		}
	}
}

// LoadedLogits is Logits with the weights of the last LoadWeights or
// LoadWeightsFloat32: it writes the model's logits for examples idx (1 to
// MaxBatch of them) into out, row-major, len(idx) x outputs.
func (e *Evaluator) LoadedLogits(data *datasets.Dataset, idx []int, out []float64) error {
	if !e.model.Logits {
		return fmt.Errorf("logits: model %s reports no logits", e.model.Name)
	}
	if err := evalargs.CheckExamples(e.model, e.batch, data, idx); err != nil {
		return err
	}
	if len(out) < len(idx)*e.k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*e.k)
	}
	if e.f32 != nil {
		loadedLogits(e, e.f32, data, idx, out)
	} else {
		loadedLogits(e, e.f64, data, idx, out)
	}
	return nil
}

func loadedLogits[T float](e *Evaluator, p *program[T], data *datasets.Dataset, idx []int, out []float64) {
	loadExamples(e, p, data, idx)
	p.forward()
	for i, v := range p.logits[:len(idx)*e.k] {
		out[i] = float64(v)
	}
}
