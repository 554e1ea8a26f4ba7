package autodiff

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/convert"
	"github.com/ptsghmc/ptsghmc/autodiff/internal/evalargs"
	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// ShardedEvaluator evaluates a model's minibatch potential with the
// minibatch split into contiguous shards, each run on its own Gorgonia graph
// (on the VM, or compiled: NewShardedFor) in its own goroutine (data parallelism within one gradient). The shards'
// likelihood gradients are added in shard order and the prior's once, so the
// result is deterministic for a given number of shards; it equals the
// unsharded GraphEvaluator's up to rounding (TestShardedMatchesGraph).
//
// Use it when one rung has more cores than work: Gorgonia's convolution
// machinery outside BLAS (im2col, col2im, layout transposes) runs on one
// thread, so two shards of 64 examples take about 0.6 of the time of one
// graph of 128 with a two-thread BLAS (docs/models.md). Give BLAS one thread
// per call (SetBLASThreads(1)) when shards run in parallel. Shards after the
// first run on goroutines that live as long as the evaluator, so that an
// evaluation on compiled shards allocates nothing. Not safe for concurrent
// use.
type ShardedEvaluator struct {
	model nn.Model
	batch int
	gauss bool      // every learnable's prior is Gaussian (convert.GaussianLayout)
	own   []float64 // shard 0's gradient when EvalStream streams it
	*shardPool
}

// shardPool is a sharded evaluator's shards and the job they run: shards
// 1.. run on goroutines of their own, started at the first evaluation and
// woken by a channel for each one after (so that an evaluation allocates
// nothing); they stop when the evaluator is garbage collected. The job's
// fields are set by the caller before it wakes them.
type shardPool struct {
	shards []shard
	grads  [][]float64 // the shards' gradients (shard 0 writes into the caller's)
	sums   []float64
	errs   []error
	work   []chan struct{}
	wg     sync.WaitGroup

	logits       bool // the job: Logits, or else likelihood
	theta        []float64
	data         *datasets.Dataset
	idx          []int
	scale        float64
	grad, loglik []float64
	out          []float64
	k            int
}

// shard is an evaluator that can report the likelihood's part alone (the
// prior is added once, by ShardedEvaluator). Only graphs are sharded: the
// MLP's BLAS plan split in two was slower than one plan on two BLAS threads
// (8.3 against 6.4 ms at batch 128, 784-400-400-10, float32; docs/speed.md).
type shard interface {
	MaxBatch() int
	HasGradient() bool
	Likelihood(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error)
	Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error
}

// MaxShards bounds the graphs one batch is split over by default (a run's
// gradient shards, a predictor's forward shards): smaller shards gain
// little (docs/models.md).
const MaxShards = 4

// NewShardedEvaluator builds shards graphs of model on Gorgonia's VM, each
// for ceil(batch/shards) examples, with their gradients.
func NewShardedEvaluator(model nn.Model, batch int, dtype DType, shards int) (*ShardedEvaluator, error) {
	return newSharded(EngineGraph, model, batch, dtype, shards, true)
}

// NewShardedForward is NewShardedEvaluator without the backward pass (for
// prediction and validation): Eval reports no gradient.
func NewShardedForward(model nn.Model, batch int, dtype DType, shards int) (*ShardedEvaluator, error) {
	return newSharded(EngineGraph, model, batch, dtype, shards, false)
}

// NewShardedFor is NewShardedEvaluator with each shard built by engine:
// compiled (or plan, for a model that is not an MLP) compiles the graph
// (compile.Evaluator), falling back to the VM for an op the compiler does
// not know; graph runs the VM. An MLP's BLAS plan is not sharded.
func NewShardedFor(engine Engine, model nn.Model, batch int, dtype DType, shards int) (*ShardedEvaluator, error) {
	return newSharded(engine, model, batch, dtype, shards, true)
}

// NewShardedForwardFor is NewShardedFor without the backward pass.
func NewShardedForwardFor(engine Engine, model nn.Model, batch int, dtype DType, shards int) (*ShardedEvaluator, error) {
	return newSharded(engine, model, batch, dtype, shards, false)
}

func newSharded(engine Engine, model nn.Model, batch int, dtype DType, shards int, withGrad bool) (*ShardedEvaluator, error) {
	if shards < 1 || shards > batch {
		return nil, fmt.Errorf("sharded evaluator: %d shards for batches of %d: expected 1 to %d", shards, batch, batch)
	}
	per := (batch + shards - 1) / shards
	s := &ShardedEvaluator{model: model, batch: batch, gauss: convert.GaussianLayout(model.Layout), shardPool: &shardPool{sums: make([]float64, shards),
		errs: make([]error, shards), work: make([]chan struct{}, shards), k: model.Outputs}}
	runtime.AddCleanup(s, (*shardPool).stop, s.shardPool)
	for i := 0; i < shards; i++ {
		if engine == EnginePlan && model.MLP != nil {
			return nil, fmt.Errorf("sharded evaluator: model %s: engine plan computes an MLP's gradient in one piece (engine compiled or graph shards it)", model.Name)
		}
		ev, err := newFor(engine, model, per, dtype, withGrad)
		if err != nil {
			return nil, fmt.Errorf("sharded evaluator: shard %d: %w", i+1, err)
		}
		sh, ok := ev.(shard)
		if !ok {
			return nil, fmt.Errorf("sharded evaluator: engine %s gave %T, which cannot be a shard", engine, ev)
		}
		s.shards = append(s.shards, sh)
		if withGrad && i > 0 {
			s.grads = append(s.grads, make([]float64, model.NumParams()))
		}
	}
	return s, nil
}

// Dim returns the number of parameters.
func (s *ShardedEvaluator) Dim() int { return s.model.NumParams() }

// MaxBatch returns the largest minibatch one Eval takes.
func (s *ShardedEvaluator) MaxBatch() int { return s.batch }

// Shards returns the number of graphs the minibatch is split over.
func (s *ShardedEvaluator) Shards() int { return len(s.shards) }

// Model returns the model evaluated.
func (s *ShardedEvaluator) Model() nn.Model { return s.model }

// split returns shard i's slice of xs (contiguous shards of
// ceil(batch/shards) examples; the last ones may be short or empty).
func (p *shardPool) split(xs []int, i int) []int {
	per := p.shards[0].MaxBatch()
	lo, hi := min(i*per, len(xs)), min((i+1)*per, len(xs))
	return xs[lo:hi]
}

// run runs the job on shard i.
func (p *shardPool) run(i int) error {
	per := p.shards[0].MaxBatch()
	part := p.split(p.idx, i)
	if p.logits {
		return p.shards[i].Logits(p.theta, p.data, part, p.out[i*per*p.k:(i*per+len(part))*p.k])
	}
	var g, ll []float64
	if p.grad != nil {
		g = p.grad
		if i > 0 {
			g = p.grads[i-1]
		}
	}
	if p.loglik != nil {
		ll = p.loglik[i*per : i*per+len(part)]
	}
	var err error
	p.sums[i], err = p.shards[i].Likelihood(p.theta, p.data, part, p.scale, g, ll)
	return err
}

// worker runs shard i's jobs as they are signalled, until the channel is
// closed.
func (p *shardPool) worker(i int, wake chan struct{}) {
	for range wake {
		p.errs[i] = p.run(i)
		p.wg.Done()
	}
}

// stop ends the workers.
func (p *shardPool) stop() {
	for _, w := range p.work {
		if w != nil {
			close(w)
		}
	}
}

// each runs the job on every shard with examples, shard 0 on the calling
// goroutine, and returns the first shard's error. It then drops the
// job's references to the caller's buffers.
func (p *shardPool) each() error {
	for i := 1; i < len(p.shards); i++ {
		p.errs[i] = nil
		if len(p.split(p.idx, i)) == 0 {
			continue
		}
		if p.work[i] == nil {
			p.work[i] = make(chan struct{})
			go p.worker(i, p.work[i])
		}
		p.wg.Add(1)
		p.work[i] <- struct{}{}
	}
	p.errs[0] = p.run(0)
	p.wg.Wait()
	p.theta, p.data, p.grad, p.loglik, p.out = nil, nil, nil, nil, nil
	for i, err := range p.errs {
		if err != nil {
			return fmt.Errorf("shard %d: %w", i+1, err)
		}
	}
	return nil
}

// Eval implements Evaluator.
func (s *ShardedEvaluator) Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	if err := evalargs.Check(s.model, s.batch, theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	if grad != nil && !s.shards[0].HasGradient() {
		return 0, fmt.Errorf("eval: model %s: a forward-only evaluator has no gradient", s.model.Name)
	}
	sum, err := s.likelihood(theta, data, idx, scale, grad, loglik)
	if err != nil {
		return 0, err
	}
	if !s.gauss {
		if grad != nil {
			s.addOthers(grad, 0, idx)
		}
		return convert.WithPrior(s.model.Layout, theta, grad, scale, sum), nil
	}
	// Gaussian priors: learnable by learnable, the other shards' gradients
	// and then the prior's are added (the order of the separate passes),
	// and the prior's value is summed in four partial sums per learnable
	if grad != nil {
		for _, par := range s.model.Layout {
			lo, hi := par.Offset, par.Offset+par.Size()
			s.addShards(grad[lo:hi], lo, idx, theta[lo:hi], par.Prior.Precision)
		}
	}
	return convert.NegLogPrior(s.model.Layout, theta) - scale*sum, nil
}

// likelihood runs the likelihood job on every shard (shard 0's gradient
// into grad, the others' into their own buffers) and returns the sum of
// the shards' log-likelihoods, in shard order.
func (s *ShardedEvaluator) likelihood(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	p := s.shardPool
	p.logits, p.theta, p.data, p.idx, p.scale, p.grad, p.loglik = false, theta, data, idx, scale, grad, loglik
	if err := p.each(); err != nil {
		return 0, fmt.Errorf("sharded evaluator: %w", err)
	}
	sum := p.sums[0]
	for i := 1; i < len(p.shards); i++ {
		if len(p.split(idx, i)) > 0 {
			sum += p.sums[i]
		}
	}
	return sum, nil
}

// addOthers adds to out (shard 0's gradient of coordinates lo..) the other
// shards' that had examples, in shard order.
func (s *ShardedEvaluator) addOthers(out []float64, lo int, idx []int) {
	p := s.shardPool
	for i := 1; i < len(p.shards); i++ {
		if len(p.split(idx, i)) == 0 {
			continue
		}
		g := p.grads[i-1][lo : lo+len(out)]
		for k, v := range g {
			out[k] += v
		}
	}
}

// addShards is addOthers followed by the Gaussian prior's gradient lam
// theta.
func (s *ShardedEvaluator) addShards(out []float64, lo int, idx []int, theta []float64, lam float64) {
	s.addOthers(out, lo, idx)
	theta = theta[:len(out)]
	for k, v := range theta {
		out[k] += lam * v
	}
}

// CanStream reports whether EvalStream is available: every learnable's
// prior is Gaussian, and the shards have gradients.
func (s *ShardedEvaluator) CanStream() bool { return s.gauss && s.shards[0].HasGradient() }

// EvalStream is Eval with a gradient, which it hands to consume in
// consecutive chunks covering every parameter, in order, instead of writing
// it: the same values, added in the same order (autodifftest.Plan's
// EvalStream). consume may change theta's chunk; the shards have read it by
// then.
func (s *ShardedEvaluator) EvalStream(theta []float64, data *datasets.Dataset, idx []int, scale float64, consume func(lo int, g []float64)) (float64, error) {
	if !s.CanStream() {
		return 0, fmt.Errorf("sharded evaluator: model %s: the gradient can be streamed with Gaussian priors and a backward pass only", s.model.Name)
	}
	if err := evalargs.Check(s.model, s.batch, theta, data, idx, nil, nil); err != nil {
		return 0, err
	}
	if s.own == nil {
		s.own = make([]float64, s.model.NumParams())
	}
	sum, err := s.likelihood(theta, data, idx, scale, s.own, nil)
	if err != nil {
		return 0, err
	}
	u := convert.NegLogPrior(s.model.Layout, theta) - scale*sum // before consume may change theta
	for _, par := range s.model.Layout {
		for lo := par.Offset; lo < par.Offset+par.Size(); lo += convert.StreamChunk {
			hi := min(lo+convert.StreamChunk, par.Offset+par.Size())
			out := s.own[lo:hi]
			s.addShards(out, lo, idx, theta[lo:hi], par.Prior.Precision)
			consume(lo, out)
		}
	}
	return u, nil
}

// Logits writes the model's logits for examples idx into out (row-major,
// len(idx) x outputs), the shards in parallel.
func (s *ShardedEvaluator) Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	if err := evalargs.Check(s.model, s.batch, theta, data, idx, nil, nil); err != nil {
		return err
	}
	if len(out) < len(idx)*s.k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*s.k)
	}
	p := s.shardPool
	p.logits, p.theta, p.data, p.idx, p.out = true, theta, data, idx, out
	return p.each()
}
