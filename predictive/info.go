package predictive

import "github.com/ptsghmc/ptsghmc/rundir"

// Info describes a loaded posterior: what ptsghmc serve answers at
// /v1/model.
type Info struct {
	Runs         []string `json:"runs"`         // the chain directories pooled
	Model        string   `json:"model"`        // the model's name (an MLP's widths)
	Architecture string   `json:"architecture"` // its parameter arrays and shapes
	Inputs       int      `json:"inputs"`       // pixel values per image
	// Classes are the labels of the model's outputs, in order: the
	// classes of Prediction.Probabilities.
	Classes     []int   `json:"classes"`
	Parameters  int     `json:"parameters"`  // weights per sample
	Samples     int     `json:"samples"`     // samples averaged
	Temperature float64 `json:"temperature"` // posterior temperature T of exp(-U/T)
	Sampler     string  `json:"sampler"`
	// Window is the steps whose samples were kept (Options.Window). It is
	// embedded only so that its JSON keys, from_step and to_step (each
	// omitted when 0), stay in Info's own object; read it as in.Window.
	rundir.Window
	FirstStep int `json:"first_step"` // steps of the earliest and latest sample
	LastStep  int `json:"last_step"`
	Dropped   int `json:"dropped_records,omitempty"`
	Skipped   int `json:"skipped_records,omitempty"`
	// Abstention is the rule Predict flags images by (nil: none).
	Abstention *Abstention          `json:"abstention"`
	Chains     []rundir.ChainStatus `json:"chains"`
}

// Info returns the description of p.
func (p *Posterior) Info() Info {
	in := Info{Runs: p.Runs, Model: p.Model.Name, Architecture: p.Model.Layout.String(), Inputs: p.Model.Inputs,
		Parameters: p.Model.NumParams(), Samples: p.Samples(), Temperature: p.Temperature, Sampler: p.Config.Sampler,
		Window: p.Window, Dropped: p.Dropped, Skipped: p.Skipped, Chains: p.Chains}
	for c := 0; c < p.Model.Outputs; c++ {
		in.Classes = append(in.Classes, p.Label(c))
	}
	in.FirstStep, in.LastStep = p.Steps[0], p.Steps[0]
	for _, s := range p.Steps {
		in.FirstStep, in.LastStep = min(in.FirstStep, s), max(in.LastStep, s)
	}
	p.mu.Lock()
	in.Abstention = p.abstain
	p.mu.Unlock()
	return in
}
