package autodiff

import (
	"fmt"
	"sync"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// ShardedPlan is Plan with every pass of a gradient split over shards
// goroutines: the conversion of theta to the network's float type (by
// parameter range), the forward and backward passes (by contiguous shards
// of the minibatch, each with its own activations and likelihood gradient),
// and the sum of the shards' gradients with the prior's (by parameter
// range). All shards read one converted copy of the parameters.
//
// Use it when one chain has more cores than work (a single chain on a
// multi-core machine), with BLAS on one thread per call
// (SetBLASThreads(1)): the matrix products of 64 rows on one core each are
// faster than those of 128 rows on two BLAS threads, and the passes outside
// BLAS, which one plan runs on one core, run on all of them
// (docs/speed.md). The result equals Plan's up to rounding (the shards' sums
// are added in shard order; TestShardedPlanMatchesPlan) and is
// deterministic for a given number of shards. Not safe for concurrent use.
type ShardedPlan struct {
	spec   nn.Spec
	shape  nn.Model
	dtype  DType
	batch  int
	shards int
	f32    *shardedPlan[float32]
	f64    *shardedPlan[float64]
}

// NewShardedPlan returns a plan of spec for batches of up to batch
// examples, split over shards goroutines (1 to batch).
func NewShardedPlan(spec nn.Spec, batch int, dtype DType, shards int) (*ShardedPlan, error) {
	p0, err := NewPlan(spec, batch, dtype) // validates spec, batch and dtype
	if err != nil {
		return nil, err
	}
	if shards < 1 || shards > batch {
		return nil, fmt.Errorf("sharded plan: %d shards for batches of %d: expected 1 to %d", shards, batch, batch)
	}
	p := &ShardedPlan{spec: spec, shape: p0.shape, dtype: p0.dtype, batch: batch, shards: shards}
	per := (batch + shards - 1) / shards
	switch p.dtype {
	case Float32:
		p.f32 = newShardedPlan[float32](spec, per, shards, blas32.Implementation().Sgemm)
	default:
		p.f64 = newShardedPlan[float64](spec, per, shards, blas64.Implementation().Dgemm)
	}
	return p, nil
}

// Dim returns the number of parameters.
func (p *ShardedPlan) Dim() int { return p.spec.NumParams() }

// MaxBatch returns the largest batch the plan was allocated for.
func (p *ShardedPlan) MaxBatch() int { return p.batch }

// Shards returns how many goroutines a minibatch is split over.
func (p *ShardedPlan) Shards() int { return p.shards }

// Eval implements Evaluator.
func (p *ShardedPlan) Eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64) (float64, error) {
	if err := checkModel(p.shape, p.batch, theta, data, idx, grad, loglik); err != nil {
		return 0, err
	}
	gauss := p.spec.PriorDF == 0
	var sumLL, prior float64
	if p.f32 != nil {
		sumLL, prior = p.f32.eval(theta, data, idx, scale, grad, loglik, gauss)
	} else {
		sumLL, prior = p.f64.eval(theta, data, idx, scale, grad, loglik, gauss)
	}
	if !gauss {
		if grad != nil {
			p.spec.AddNegLogPriorGrad(theta, grad)
		}
		prior = p.spec.NegLogPrior(theta)
	}
	return prior - scale*sumLL, nil
}

// Logits writes the network's outputs for examples idx into out (row-major,
// len(idx) x outputs), the shards in parallel.
func (p *ShardedPlan) Logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) error {
	if err := checkModel(p.shape, p.batch, theta, data, idx, nil, nil); err != nil {
		return err
	}
	k := p.spec.Sizes[len(p.spec.Sizes)-1]
	if len(out) < len(idx)*k {
		return fmt.Errorf("logits: output has room for %d values, need %d", len(out), len(idx)*k)
	}
	if p.f32 != nil {
		p.f32.logits(theta, data, idx, out)
	} else {
		p.f64.logits(theta, data, idx, out)
	}
	return nil
}

// shardedPlan holds one plan per shard; their parameter buffers w are one
// slice.
type shardedPlan[T float] struct {
	parts []*plan[T]
	per   int         // examples per shard
	prior [][]float64 // prior[k][l]: shard k's part of layer l's sum of squares
	sums  []float64   // the shards' log-likelihood sums
}

func newShardedPlan[T float](spec nn.Spec, per, shards int, gemm gemmFunc[T]) *shardedPlan[T] {
	s := &shardedPlan[T]{per: per, sums: make([]float64, shards)}
	for k := 0; k < shards; k++ {
		pk := newPlan[T](spec, per, gemm)
		if k > 0 {
			pk.w = s.parts[0].w
		}
		s.parts = append(s.parts, pk)
		s.prior = append(s.prior, make([]float64, len(pk.layers)))
	}
	return s
}

// parallel runs f(k) for every shard, shard 0 on the calling goroutine.
func (s *shardedPlan[T]) parallel(f func(k int)) {
	var wg sync.WaitGroup
	for k := 1; k < len(s.parts); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k)
		}()
	}
	f(0)
	wg.Wait()
}

// piece returns shard k's part [lo, hi) of the range [a, b).
func (s *shardedPlan[T]) piece(k, a, b int) (lo, hi int) {
	n := len(s.parts)
	return a + (b-a)*k/n, a + (b-a)*(k+1)/n
}

// rows returns shard k's examples of idx.
func (s *shardedPlan[T]) rows(idx []int, k int) []int {
	return idx[min(k*s.per, len(idx)):min((k+1)*s.per, len(idx))]
}

// convert writes theta into the shared parameter buffer, each shard its
// piece of every layer, and returns the Gaussian prior's -log p(theta) with
// gaussPrior.
func (s *shardedPlan[T]) convert(theta []float64, gaussPrior bool) float64 {
	p0 := s.parts[0]
	s.parallel(func(k int) {
		for l, ly := range p0.layers {
			lo, hi := s.piece(k, ly.W, ly.B+ly.Out)
			if gaussPrior {
				s.prior[k][l] = convertSumSquares(p0.w[lo:hi], theta[lo:hi])
				continue
			}
			for i, v := range theta[lo:hi] {
				p0.w[lo+i] = T(v)
			}
		}
	})
	prior := 0.0
	if gaussPrior {
		for l := range p0.layers {
			ss := 0.0
			for k := range s.parts {
				ss += s.prior[k][l]
			}
			prior += 0.5 * p0.spec.Precision(l) * ss
		}
	}
	return prior
}

// eval is plan.eval split over the shards.
func (s *shardedPlan[T]) eval(theta []float64, data *datasets.Dataset, idx []int, scale float64, grad, loglik []float64, gaussPrior bool) (sumLL, negLogPrior float64) {
	negLogPrior = s.convert(theta, gaussPrior)
	last := len(s.parts[0].layers) - 1
	s.parallel(func(k int) {
		part := s.rows(idx, k)
		s.sums[k] = 0
		if len(part) == 0 {
			if grad != nil {
				clear(s.parts[k].g)
			}
			return
		}
		var ll []float64
		if loglik != nil {
			ll = loglik[k*s.per : k*s.per+len(part)]
		}
		s.parts[k].run(data, part)
		s.sums[k] = s.parts[k].backward(data, part, scale, grad != nil, ll, len(part), last)
	})
	for _, v := range s.sums {
		sumLL += v
	}
	if grad != nil {
		s.parallel(func(k int) { s.writeGrad(k, theta, grad, gaussPrior) })
	}
	return sumLL, negLogPrior
}

// writeGrad writes shard k's piece of every layer of the summed gradient
// (and the Gaussian prior's with gaussPrior) into grad.
func (s *shardedPlan[T]) writeGrad(k int, theta, grad []float64, gaussPrior bool) {
	p0 := s.parts[0]
	for l, ly := range p0.layers {
		lam := 0.0
		if gaussPrior {
			lam = p0.spec.Precision(l)
		}
		lo, hi := s.piece(k, ly.W, ly.B+ly.Out)
		out, th := grad[lo:hi], theta[lo:hi]
		copyGrad(out, p0.g[lo:hi], th, lam)
		for _, pj := range s.parts[1:] {
			for i, v := range pj.g[lo:hi] {
				out[i] += float64(v)
			}
		}
	}
}

// copyGrad writes float64(g) + lam theta into out.
func copyGrad[T float](out []float64, g []T, theta []float64, lam float64) {
	g, theta = g[:len(out)], theta[:len(out)]
	if lam == 0 {
		for i, v := range g {
			out[i] = float64(v)
		}
		return
	}
	for i, v := range g {
		out[i] = float64(v) + lam*theta[i]
	}
}

// logits runs the forward pass of every shard on its examples and copies
// the logits into out.
func (s *shardedPlan[T]) logits(theta []float64, data *datasets.Dataset, idx []int, out []float64) {
	s.convert(theta, false)
	last := len(s.parts[0].layers)
	k := s.parts[0].spec.Sizes[last]
	s.parallel(func(j int) {
		part := s.rows(idx, j)
		if len(part) == 0 {
			return
		}
		pj := s.parts[j]
		pj.run(data, part)
		for i, v := range pj.acts[last][:len(part)*k] {
			out[j*s.per*k+i] = float64(v)
		}
	})
}
