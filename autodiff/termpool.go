package autodiff

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/ptsghmc/ptsghmc/internal/workpool"
)

// termBatch is one Terms call's configurations, evaluated in parallel: the
// caller and up to len(thetas)-1 goroutines of a pool that lives as long as
// the process each take the next configuration not yet taken, so nothing is
// allocated per exchange test (a goroutine and a closure per configuration
// were, 30 or more allocations a test). A Potential holds one and reuses it.
// The configurations are independent (each its own evaluator and output), so
// the order they are taken in changes no bit.
type termBatch struct {
	p      *Potential
	thetas [][]float64
	out    [][]float64
	idx    []int
	errs   []error
	next   atomic.Int64
	wg     sync.WaitGroup
}

// drain evaluates configurations until none is left.
func (tb *termBatch) drain() {
	for {
		t := int(tb.next.Add(1)) - 1
		if t >= len(tb.thetas) {
			return
		}
		tb.errs[t] = tb.p.terms(tb.p.TermEvals[t], tb.thetas[t], tb.idx, tb.out[t][:len(tb.idx)])
	}
}

// run evaluates every configuration on its own evaluator and returns their
// errors joined.
func (tb *termBatch) run() error {
	if cap(tb.errs) < len(tb.thetas) {
		tb.errs = make([]error, len(tb.thetas))
	}
	tb.errs = tb.errs[:len(tb.thetas)]
	clear(tb.errs)
	tb.next.Store(0)
	termPool.Share(tb, len(tb.thetas)-1, &tb.wg)
	tb.p, tb.thetas, tb.out, tb.idx = nil, nil, nil, nil // hold no caller's memory
	for _, err := range tb.errs {
		if err != nil {
			return errors.Join(tb.errs...)
		}
	}
	return nil
}

// Run drains the batch and reports its runner done.
func (tb *termBatch) Run() {
	tb.drain()
	tb.wg.Done()
}

// termPool runs term batches on goroutines that live as long as the process.
var termPool = workpool.New[*termBatch](64)
