package autodiff

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Potential is a Bayesian model's posterior potential on a data set, as a
// sampler sees it: a stochastic gradient on the next minibatch of its own
// batch stream, and per-example energy terms on shared random batches for
// exchange tests. Each replica of a sampler needs its own Potential (its own
// evaluator and batch stream); they may share Model and Data.
type Potential struct {
	Model nn.Model // its layout gives the prior of Terms
	Data  *datasets.Dataset
	Eval  Evaluator
	// Batches is the minibatch order Gradient draws from when it is given
	// no minibatch (a kernel stepped by hand). NewPotential makes one; a
	// driver that chooses the minibatches (driver.Driver with
	// PTState.Orders, as train's runs do) leaves it unused.
	Batches *datasets.Batches
	// TermEvals, if set, evaluate Terms: thetas[t] on TermEvals[t], in
	// parallel goroutines (give them a large MaxBatch: exchange tests may
	// need the whole data set).
	TermEvals []Evaluator

	ll        []float64
	perm      []int
	termBatch termBatch // a parallel Terms call's work, reused
}

// NewPotential returns a potential of model on data evaluated by eval,
// drawing minibatches of size batch; rng shuffles the first epoch.
func NewPotential(model nn.Model, data *datasets.Dataset, eval Evaluator, batch int, rng *rand.Rand) (*Potential, error) {
	if err := data.Validate(); err != nil {
		return nil, err
	}
	if batch > eval.MaxBatch() {
		return nil, fmt.Errorf("potential: batch %d exceeds evaluator's %d", batch, eval.MaxBatch())
	}
	b, err := datasets.NewBatches(data.N, batch, rng)
	if err != nil {
		return nil, err
	}
	if eval.Dim() != model.NumParams() {
		return nil, fmt.Errorf("potential: evaluator has %d parameters, model %s %d", eval.Dim(), model.Name, model.NumParams())
	}
	return &Potential{Model: model, Data: data, Eval: eval, Batches: b}, nil
}

// Dim returns the number of parameters.
func (p *Potential) Dim() int { return p.Eval.Dim() }

// Size returns the number of examples in the data set.
func (p *Potential) Size() int { return p.Data.N }

// Gradient writes the gradient of U~ on the minibatch mb into grad and
// returns U~ there (sampler.Potential). An empty mb means the next
// minibatch of the potential's own order, Batches, which rng reshuffles at
// each new epoch.
func (p *Potential) Gradient(theta, grad []float64, mb sampler.Minibatch, rng *rand.Rand) (float64, error) {
	mb, err := p.minibatch(mb, rng)
	if err != nil {
		return 0, err
	}
	return p.Eval.Eval(theta, p.Data, mb.Index, mb.Scale, grad, nil)
}

// minibatch returns mb, checked against the data set, or the next
// minibatch of Batches when mb is empty.
func (p *Potential) minibatch(mb sampler.Minibatch, rng *rand.Rand) (sampler.Minibatch, error) {
	if mb.Index == nil {
		if p.Batches == nil {
			return mb, errors.New("potential: no minibatch given and no batch order of its own")
		}
		return sampler.NextMinibatch(p.Batches, rng), nil
	}
	if len(mb.Index) > p.Eval.MaxBatch() {
		return mb, fmt.Errorf("potential: minibatch of %d examples exceeds the evaluator's %d", len(mb.Index), p.Eval.MaxBatch())
	}
	if !(mb.Scale > 0) {
		return mb, fmt.Errorf("potential: minibatch scale %v: expected N/|B| > 0", mb.Scale)
	}
	return mb, nil
}

// streamer is an evaluator that can stream its gradient (Plan).
type streamer interface {
	CanStream() bool
	EvalStream(theta []float64, data *datasets.Dataset, idx []int, scale float64, consume func(lo int, g []float64)) (float64, error)
}

// CanStream reports whether GradientStream is available: the evaluator
// streams (an MLP's BLAS plan or a compiled graph, each with Gaussian
// priors: sampler.StreamingPotential).
func (p *Potential) CanStream() bool {
	s, ok := p.Eval.(streamer)
	return ok && s.CanStream()
}

// GradientStream is Gradient with the gradient handed to consume in
// consecutive chunks instead of written (sampler.StreamingPotential): the
// same minibatch, values and U~.
func (p *Potential) GradientStream(theta []float64, mb sampler.Minibatch, rng *rand.Rand, consume func(lo int, g []float64)) (float64, error) {
	s, ok := p.Eval.(streamer)
	if !ok || !s.CanStream() {
		return 0, fmt.Errorf("potential: evaluator %T cannot stream its gradient", p.Eval)
	}
	mb, err := p.minibatch(mb, rng)
	if err != nil {
		return 0, err
	}
	return s.EvalStream(theta, p.Data, mb.Index, mb.Scale, consume)
}

// LogLik writes the per-example log-likelihoods of theta on examples idx into
// out, in chunks of the evaluator's batch size.
func (p *Potential) LogLik(theta []float64, idx []int, out []float64) error {
	return logLik(p.Eval, p.Data, theta, idx, out)
}

func logLik(ev Evaluator, data *datasets.Dataset, theta []float64, idx []int, out []float64) error {
	if len(out) < len(idx) {
		return fmt.Errorf("log-likelihoods: output has room for %d values, need %d", len(out), len(idx))
	}
	if b, ok := ev.(BatchLogLiker); ok {
		return b.LogLiks(theta, data, idx, out)
	}
	mb := ev.MaxBatch()
	for s := 0; s < len(idx); s += mb {
		e := min(s+mb, len(idx))
		if _, err := ev.Eval(theta, data, idx[s:e], 0, nil, out[s:e]); err != nil {
			return err
		}
	}
	return nil
}

// ParallelTerms gives Terms n evaluators of its own at the given batch size
// and dtype (compiled graphs, an MLP's in its BLAS plan's arithmetic), so that an exchange test evaluates its n
// configurations in parallel and in large batches (tests may need the whole
// data set).
func (p *Potential) ParallelTerms(n, batch int, dtype DType) error {
	return p.ParallelTermsOn(EnginePlan, n, batch, dtype)
}

// ParallelTermsOn is ParallelTerms with the evaluators NewFor builds on
// engine.
func (p *Potential) ParallelTermsOn(engine Engine, n, batch int, dtype DType) error {
	p.TermEvals = p.TermEvals[:0]
	for t := 0; t < n; t++ {
		ev, err := NewFor(engine, p.Model, batch, dtype)
		if err != nil {
			return fmt.Errorf("parallel terms: %w", err)
		}
		p.TermEvals = append(p.TermEvals, ev)
	}
	return nil
}

// Terms evaluates per-example energy terms at each theta for positions
// from..to-1 of one shared random order of the data, drawn without
// replacement by rng (from = 0 starts a new order; from > 0 continues the
// previous call's, so a growing batch repeats no example; to >= Size() covers
// the whole data set): out[t][i-from] = -log p(theta_t) - N log l(theta_t; x_i),
// so that the mean over the batch is U~(theta_t).
func (p *Potential) Terms(thetas [][]float64, from, to int, rng *rand.Rand, out [][]float64) error {
	N := p.Data.N
	if from < 0 || from > to {
		return fmt.Errorf("terms: bad range %d..%d", from, to)
	}
	if len(out) < len(thetas) {
		return fmt.Errorf("terms: %d outputs for %d configurations", len(out), len(thetas))
	}
	if from > 0 && len(p.perm) != N {
		return fmt.Errorf("terms: range %d..%d continues no earlier order", from, to)
	}
	if len(p.perm) != N {
		p.perm = make([]int, N)
	}
	if from == 0 {
		// Start from the identity every time, so the order depends on rng
		// alone (a resumed run draws the same batches).
		for i := range p.perm {
			p.perm[i] = i
		}
	}
	to = min(to, N)
	from = min(from, to)
	if to < N {
		// Partial Fisher-Yates: positions from..to-1 extend the prefix.
		for i := from; i < to; i++ {
			j := i + rng.IntN(N-i)
			p.perm[i], p.perm[j] = p.perm[j], p.perm[i]
		}
	}
	n := to - from
	idx := p.perm[from:to]
	for t := range thetas {
		if len(out[t]) < n {
			return fmt.Errorf("terms: output %d has room for %d of %d terms", t, len(out[t]), n)
		}
	}
	if len(p.TermEvals) < len(thetas) {
		for t := range thetas {
			if err := p.terms(p.Eval, thetas[t], idx, out[t][:n]); err != nil {
				return err
			}
		}
		return nil
	}
	tb := &p.termBatch
	tb.p, tb.thetas, tb.out, tb.idx = p, thetas, out, idx
	return tb.run()
}

// terms writes the energy terms of theta on examples idx, evaluated by ev,
// into out: -log p(theta) - N log l(theta; x_i).
func (p *Potential) terms(ev Evaluator, theta []float64, idx []int, out []float64) error {
	if err := logLik(ev, p.Data, theta, idx, out); err != nil {
		return err
	}
	prior := p.Model.Layout.NegLogPrior(theta)
	N := float64(p.Data.N)
	for i := range out {
		out[i] = prior - N*out[i]
	}
	return nil
}
