package autodiff

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ptsghmc/ptsghmc/autodiff/compile"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// ForwardPool computes a compiled classifier's logits under one weight
// sample on every example of several data sets at once: a predictive pass
// (evaluate's ensembles on the test set and the sets scored beside it,
// predictive's requests). Its workers, one goroutine each, take batches of
// examples from a shared queue, so a core another process slows down
// takes fewer of them instead of holding the others up; each worker
// loads the sample's weights into its compiled forward pass once a pass,
// not once a batch, and a float32 sample is loaded as it is, with no
// float64 copy. A short batch (the end of a set, a request of a few
// images) runs on a forward pass compiled for a smaller batch, since a
// graph's kernels run on the whole compiled batch: the batch sizes are the
// pool's batch and its halves down to 1, each compiled when first needed.
//
// The logits are those of a Predictor on the same engine, bit for bit:
// the pinned arithmetic fixes each dot product's rounding whatever the
// batch, and the other kernels work example by example
// (TestForwardPoolMatchesPredictor). Not safe for concurrent use.
type ForwardPool struct {
	// Progress, when not nil, is called during Each and EachFloat32 on
	// their own goroutine, after each batch it runs, with the number of
	// examples of the pass done so far (every worker's): a progress report
	// within a long pass.
	Progress func(done int)

	model   nn.Model
	dtype   DType
	batch   int
	workers []*poolWorker
	tasks   []poolTask
	pass    int // counts the passes, so that a worker loads a pass's weights once per forward pass it uses
}

// poolWorker is one worker's forward passes, by batch size, and buffers.
type poolWorker struct {
	evs    map[int]*compile.Evaluator
	loaded map[int]int // the pass whose weights each forward pass holds
	out    []float64
	idx    []int
}

// poolTask is a batch of examples lo..hi-1 of set.
type poolTask struct{ set, lo, hi int }

// Poolable reports whether a ForwardPool can compute the predictions of
// model on engine (a run's engine): a classifier that is not an MLP (an
// MLP's predictions run on its BLAS plan, whose products take every core),
// on the compiled graph (engines plan, compiled and compiled-generic; a run
// made on Gorgonia's VM is evaluated on it), whose every op the compiler
// knows.
func Poolable(engine Engine, m nn.Model) bool {
	switch engine {
	case EnginePlan, "", EngineCompiled, EngineCompiledGeneric:
	default:
		return false
	}
	return m.MLP == nil && m.Logits && compile.Check(m) == nil
}

// PoolWorkers is the number of workers of the pools package evaluate and
// predictive make: one per core the process may use.
func PoolWorkers() int { return runtime.GOMAXPROCS(0) }

// NewForwardPool returns a pool of workers forward passes of model (a
// classifier Poolable accepts) for batches of up to batch examples of
// dtype.
func NewForwardPool(engine Engine, model nn.Model, batch int, dtype DType, workers int) (*ForwardPool, error) {
	if !Poolable(engine, model) {
		return nil, fmt.Errorf("forward pool: model %s on engine %q: not a compiled classifier other than an MLP", model.Name, engine)
	}
	if batch < 1 || workers < 1 {
		return nil, fmt.Errorf("forward pool: batch %d and workers %d must be positive", batch, workers)
	}
	if dtype != Float32 && dtype != Float64 {
		return nil, fmt.Errorf("forward pool: dtype %q: expected float32 or float64", dtype)
	}
	p := &ForwardPool{model: model, dtype: dtype, batch: batch}
	for range workers {
		p.workers = append(p.workers, &poolWorker{evs: map[int]*compile.Evaluator{}, loaded: map[int]int{},
			out: make([]float64, batch*model.Outputs), idx: make([]int, 0, batch)})
	}
	// the full batch's forward pass now, so that a model the compiler
	// refuses at this batch is an error here
	if _, err := p.workers[0].evaluator(p, batch); err != nil {
		return nil, err
	}
	return p, nil
}

// MaxBatch returns the largest batch of examples one forward pass takes.
func (p *ForwardPool) MaxBatch() int { return p.batch }

// Workers returns the number of workers.
func (p *ForwardPool) Workers() int { return len(p.workers) }

// Model returns the model evaluated.
func (p *ForwardPool) Model() nn.Model { return p.model }

// MACsPerExample returns the multiply-adds of the products and
// convolutions of one example's forward pass (twice that is its FLOP
// count).
func (p *ForwardPool) MACsPerExample() int64 {
	return p.workers[0].evs[p.batch].MACs() / int64(p.batch)
}

// Each calls f(set, i, z) for every example i of every data set sets[set],
// with z its logits under theta (a view valid during the call). The calls
// come from the pool's workers at once, each example's exactly once, in no
// particular order: f may write what belongs to (set, i) alone. With more
// than one worker, each BLAS call has one thread while Each runs.
func (p *ForwardPool) Each(theta []float64, sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
	if len(theta) != p.model.NumParams() {
		return fmt.Errorf("forward pool: sample of %d values, model %s has %d parameters", len(theta), p.model.Name, p.model.NumParams())
	}
	return p.run(func(ev *compile.Evaluator) error { return ev.LoadWeights(theta) }, sets, f)
}

// EachFloat32 is Each of weights held in float32, loaded as they are: the
// logits are Each's of the weights widened to float64, bit for bit.
func (p *ForwardPool) EachFloat32(w []float32, sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
	if len(w) != p.model.NumParams() {
		return fmt.Errorf("forward pool: sample of %d values, model %s has %d parameters", len(w), p.model.Name, p.model.NumParams())
	}
	return p.run(func(ev *compile.Evaluator) error { return ev.LoadWeightsFloat32(w) }, sets, f)
}

// run is a pass: the batches of sets shared out to the workers, each
// forward pass loading the weights (load) before its first batch.
func (p *ForwardPool) run(load func(*compile.Evaluator) error, sets []*datasets.Dataset, f func(set, i int, z []float64)) error {
	p.tasks = p.tasks[:0]
	for s, d := range sets {
		if d.D != p.model.Inputs {
			return fmt.Errorf("forward pool: set %d has %d features, model %s takes %d", s, d.D, p.model.Name, p.model.Inputs)
		}
		if d.N == 0 {
			continue
		}
		// checked here, not in a worker, whose panic nothing could recover
		if err := d.Validate(); err != nil {
			return fmt.Errorf("forward pool: set %d: %w", s, err)
		}
		if k := p.model.Outputs; d.Classes > k || (d.Classes == 0 && d.Outputs != k) {
			return fmt.Errorf("forward pool: set %d has %d classes and %d targets, model %s has %d outputs", s, d.Classes, d.Outputs, p.model.Name, k)
		}
		full := d.N / p.batch * p.batch
		for lo := 0; lo < full; lo += p.batch {
			p.tasks = append(p.tasks, poolTask{s, lo, lo + p.batch})
		}
	}
	// the short ends last, each set's largest first, cut into halving
	// batches (at most two of each size) so that none runs on padding
	for s, d := range sets {
		lo := d.N / p.batch * p.batch
		for size := p.batch / 2; lo < d.N; size /= 2 {
			for ; d.N-lo >= size; lo += size {
				p.tasks = append(p.tasks, poolTask{s, lo, lo + size})
			}
		}
	}
	if len(p.tasks) == 0 {
		return nil
	}
	p.pass++
	n := min(len(p.workers), len(p.tasks))
	if n > 1 {
		defer WithBLASThreads(1)()
	}
	var next, done atomic.Int64
	var failed atomic.Bool
	errs := make([]error, n)
	work := func(wi int) {
		w := p.workers[wi]
		for !failed.Load() {
			t := int(next.Add(1) - 1)
			if t >= len(p.tasks) {
				return
			}
			task := p.tasks[t]
			if err := w.do(p, load, sets, task, f); err != nil {
				errs[wi] = err
				failed.Store(true)
				return
			}
			d := done.Add(int64(task.hi - task.lo))
			if wi == 0 && p.Progress != nil {
				p.Progress(int(d))
			}
		}
	}
	var wg sync.WaitGroup
	for wi := 1; wi < n; wi++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(wi)
		}()
	}
	work(0)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("forward pool: %w", err)
		}
	}
	return nil
}

// evaluator returns the worker's forward pass of batch size b, compiling
// it the first time.
func (w *poolWorker) evaluator(p *ForwardPool, b int) (*compile.Evaluator, error) {
	if ev, ok := w.evs[b]; ok {
		return ev, nil
	}
	ev, err := newFor(EngineCompiled, p.model, b, p.dtype, false)
	if err != nil {
		return nil, err
	}
	ce, ok := ev.(*compile.Evaluator)
	if !ok {
		return nil, fmt.Errorf("model %s at batch %d: the compiler gave %T", p.model.Name, b, ev)
	}
	w.evs[b] = ce
	return ce, nil
}

// do runs task t: the weights loaded into the forward pass of its size if
// this pass has not yet, its logits, and f on each example.
func (w *poolWorker) do(p *ForwardPool, load func(*compile.Evaluator) error, sets []*datasets.Dataset, t poolTask, f func(set, i int, z []float64)) error {
	n := t.hi - t.lo
	ev, err := w.evaluator(p, n)
	if err != nil {
		return err
	}
	if w.loaded[n] != p.pass {
		if err := load(ev); err != nil {
			return err
		}
		w.loaded[n] = p.pass
	}
	w.idx = w.idx[:0]
	for i := t.lo; i < t.hi; i++ {
		w.idx = append(w.idx, i)
	}
	if err := ev.LoadedLogits(sets[t.set], w.idx, w.out); err != nil {
		return fmt.Errorf("set %d, examples %d to %d: %w", t.set, t.lo, t.hi-1, err)
	}
	k := p.model.Outputs
	for r, i := range w.idx {
		f(t.set, i, w.out[r*k:(r+1)*k])
	}
	return nil
}
