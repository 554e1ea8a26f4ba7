package predictive

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is the error of Batcher.Predict after Close.
var ErrClosed = errors.New("predictive: batcher closed")

// Batcher merges concurrent Predict calls into one ensemble pass of up to
// MaxImages images: while a pass runs, the calls that arrive queue, and
// the next pass takes them all (up to MaxImages). A pass reads every
// sample's weights once whatever its number of images, so under load the
// merged passes serve many more images per second than one pass per call
// (docs/serve.md measures it). With MaxImages 1 every call has a pass of
// its own.
type Batcher struct {
	post       *Posterior
	maxImages  int                                                 // BatcherOptions.MaxImages, at least 1
	onPass     func(calls, images int, d time.Duration, err error) // BatcherOptions.OnPass
	beforePass func()                                              // BatcherOptions.BeforePass

	jobs    chan *job
	waiting atomic.Int64 // calls waiting for the worker to take them (Waiting)
	quit    chan struct{}
	done    sync.WaitGroup
	once    sync.Once
}

// BatcherOptions are the settings of NewBatcher.
type BatcherOptions struct {
	// MaxImages bounds the images merged into one pass (<= 1: no merging).
	MaxImages int
	// OnPass, when not nil, is called after each pass with its number of
	// calls and images, its duration and its error.
	OnPass func(calls, images int, d time.Duration, err error)
	// BeforePass, when not nil, is called before each pass starts (a test
	// holds a pass in flight with it).
	BeforePass func()
}

type job struct {
	ctx  context.Context
	x    []float32
	n    int
	done chan result // buffered: the worker never waits on a caller
}

type result struct {
	preds []Prediction
	err   error
}

// NewBatcher starts a batcher of p's passes; Close stops it.
func NewBatcher(p *Posterior, opt BatcherOptions) *Batcher {
	b := &Batcher{post: p, maxImages: max(opt.MaxImages, 1), onPass: opt.OnPass, beforePass: opt.BeforePass,
		jobs: make(chan *job), quit: make(chan struct{})}
	b.done.Add(1)
	go b.run()
	return b
}

// Predict is Posterior.PredictFlat of n images held row-major in x, in a
// pass shared with other calls. The images are checked before they queue
// (an *InputError). A call whose ctx ends before its pass starts is left
// out of it and returns ctx's error.
func (b *Batcher) Predict(ctx context.Context, x []float32, n int) ([]Prediction, error) {
	if err := b.post.CheckImages(x, n); err != nil {
		return nil, err
	}
	j := &job{ctx: ctx, x: x, n: n, done: make(chan result, 1)}
	b.waiting.Add(1)
	var err error
	select {
	case b.jobs <- j:
	case <-b.quit:
		err = ErrClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	b.waiting.Add(-1)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-j.done:
		return r.preds, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Waiting returns the number of calls waiting for the worker to take
// them: queued behind the pass in progress, to be merged into the next.
func (b *Batcher) Waiting() int { return int(b.waiting.Load()) }

// Close stops the batcher once the pass in progress ends; calls queued
// after it get ErrClosed. A server closes it after its handlers returned.
func (b *Batcher) Close() {
	b.once.Do(func() { close(b.quit) })
	b.done.Wait()
}

// run is the worker: it takes a call, merges the calls queued behind it
// up to maxImages images, and runs their pass.
func (b *Batcher) run() {
	defer b.done.Done()
	var carry *job // a call that did not fit the last pass
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-b.jobs:
			case <-b.quit:
				return
			}
		}
		batch, images := []*job{first}, first.n
	merge:
		for images < b.maxImages {
			select {
			case j := <-b.jobs:
				if images+j.n > b.maxImages {
					carry = j
					break merge
				}
				batch = append(batch, j)
				images += j.n
			default:
				break merge
			}
		}
		b.pass(batch)
	}
}

// pass predicts the images of the calls still waiting in one ensemble pass
// and hands each call its predictions.
func (b *Batcher) pass(batch []*job) {
	live := batch[:0]
	n := 0
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.done <- result{err: err}
			continue
		}
		live = append(live, j)
		n += j.n
	}
	if len(live) == 0 {
		return
	}
	x := live[0].x
	if len(live) > 1 {
		x = make([]float32, 0, n*b.post.Model.Inputs)
		for _, j := range live {
			x = append(x, j.x...)
		}
	}
	if b.beforePass != nil {
		b.beforePass()
	}
	start := time.Now()
	preds, err := b.post.PredictFlat(x, n)
	if b.onPass != nil {
		b.onPass(len(live), n, time.Since(start), err)
	}
	off := 0
	for _, j := range live {
		if err != nil {
			j.done <- result{err: err}
			continue
		}
		j.done <- result{preds: preds[off : off+j.n : off+j.n]}
		off += j.n
	}
}
