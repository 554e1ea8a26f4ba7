package predictive

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// Prediction is the posterior-predictive answer for one image.
type Prediction struct {
	// Probabilities are the ensemble's class probabilities, one per model
	// output: (1/S) sum_s p(c | x, theta_s).
	Probabilities []float64 `json:"probabilities"`
	// Class is the most probable class, as a label of the data (a run on
	// a subset of classes names its outputs by their labels).
	Class int `json:"class"`
	// Entropy is the predictive entropy H[p] in nats.
	Entropy float64 `json:"entropy"`
	// MutualInformation is H[p] - (1/S) sum_s H[p_s]: the information
	// the label would give about the weights, the epistemic part of the
	// entropy.
	MutualInformation float64 `json:"mutual_information"`
	// MaxProb is the probability of Class.
	MaxProb float64 `json:"max_prob"`
	// Abstain is set when the posterior's abstention rule refuses the
	// image (see Abstention); Reason says why, or why not.
	Abstain bool   `json:"abstain"`
	Reason  string `json:"reason"`
}

// InputError reports images Predict cannot take: their number, size or
// values. A server answers it with a client error.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// CheckImages returns an *InputError naming the first image that is not
// a model input: n flat rows of Model.Inputs pixel values in [0, 1] (NaN
// and infinities are outside). x holds the n images, row-major.
func (p *Posterior) CheckImages(x []float32, n int) error {
	d := p.Model.Inputs
	if n <= 0 {
		return inputErr("no images: send at least one")
	}
	if len(x) != n*d {
		return inputErr("%d images need %d values (the model takes %d inputs), got %d", n, n*d, d, len(x))
	}
	for i, v := range x {
		if !(v >= 0 && v <= 1) { // false for NaN too
			return inputErr("image %d, value %d: %v is outside [0, 1] (pixel values scaled to [0, 1], as the training images were)", i/d, i%d, v)
		}
	}
	return nil
}

// Predict returns the predictions of images, each a flat row of
// Model.Inputs pixel values in [0, 1], in order. Bad images give an
// *InputError and no predictions.
func (p *Posterior) Predict(images [][]float32) ([]Prediction, error) {
	d := p.Model.Inputs
	x := make([]float32, 0, len(images)*d)
	for i, im := range images {
		if len(im) != d {
			return nil, inputErr("image %d has %d values, the model %s takes %d inputs", i, len(im), p.Model.Name, d)
		}
		x = append(x, im...)
	}
	return p.PredictFlat(x, len(images))
}

// PredictData returns the predictions of the examples of data (its
// labels, if any, are not read). A CNN refuses images whose dimensions
// (data.Image, when known) are not those it takes, even of as many pixels.
func (p *Posterior) PredictData(data *datasets.Dataset) ([]Prediction, error) {
	if data.D != p.Model.Inputs {
		return nil, inputErr("images of %d features, the model %s takes %d inputs", data.D, p.Model.Name, p.Model.Inputs)
	}
	if p.Model.Conv != nil {
		if err := p.Model.Conv.CheckImages(data.Image); err != nil {
			return nil, inputErr("model %s: %v", p.Model.Name, err)
		}
	}
	return p.PredictFlat(data.X, data.N)
}

// PredictFlat returns the predictions of n images held row-major in x.
func (p *Posterior) PredictFlat(x []float32, n int) ([]Prediction, error) {
	if err := p.CheckImages(x, n); err != nil {
		return nil, err
	}
	// Labels are not read for logits, but a graph model's evaluator loads
	// a batch's labels with its images.
	data := &datasets.Dataset{N: n, D: p.Model.Inputs, X: x, Classes: p.Model.Outputs, Labels: make([]int, n)}
	p.mu.Lock()
	defer p.mu.Unlock()
	ens, err := p.base.On(data)
	if err != nil {
		return nil, err
	}
	for s, w := range p.weights {
		add := func() error { return ens.Add(w.f64) }
		if w.f32 != nil {
			add = func() error { return ens.AddFloat32(w.f32) }
		}
		if err := add(); err != nil {
			return nil, fmt.Errorf("sample %d (step %d): %w", s, p.Steps[s], err)
		}
	}
	k := p.Model.Outputs
	probs := ens.Probs()
	out := make([]Prediction, n)
	for i := range out {
		pr := probs[i*k : (i+1)*k : (i+1)*k]
		best := 0
		for c := range pr {
			if pr[c] > pr[best] {
				best = c
			}
		}
		h, mi := ens.Uncertainty(i)
		out[i] = Prediction{Probabilities: pr, Class: p.Label(best), Entropy: h, MutualInformation: mi, MaxProb: pr[best]}
		p.abstain.apply(&out[i])
	}
	return out, nil
}
