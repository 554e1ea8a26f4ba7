package workpool

import (
	"sync"
	"sync/atomic"
	"testing"
)

type count struct {
	n  *atomic.Int64
	wg *sync.WaitGroup
}

func (c count) Run() { c.n.Add(1); c.wg.Done() }

// TestPoolRunsEveryJob: every submitted job runs once, Ensure never starts
// more goroutines than asked for in all, and a submit allocates nothing.
func TestPoolRunsEveryJob(t *testing.T) {
	p := New[count](4)
	p.Ensure(2)
	p.Ensure(1)
	if p.live != 2 {
		t.Fatalf("%d goroutines after Ensure(2), Ensure(1)", p.live)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	job := count{&n, &wg}
	wg.Add(100)
	for range 100 {
		p.Submit(job)
	}
	wg.Wait()
	if n.Load() != 100 {
		t.Fatalf("%d of 100 jobs ran", n.Load())
	}
	if a := testing.AllocsPerRun(50, func() { wg.Add(1); p.Submit(job); wg.Wait() }); a != 0 {
		t.Errorf("%v allocations a job", a)
	}
}

// TestShare: the caller and the helpers take pieces of one job until none
// is left; every piece runs once, whatever the number of helpers.
func TestShare(t *testing.T) {
	p := New[*pieces](4)
	for _, helpers := range []int{-1, 0, 1, 3} {
		w := &pieces{done: make([]atomic.Int64, 1000)}
		p.Share(w, helpers, &w.wg)
		for i := range w.done {
			if n := w.done[i].Load(); n != 1 {
				t.Fatalf("%d helpers: piece %d ran %d times", helpers, i, n)
			}
		}
	}
}

type pieces struct {
	next atomic.Int64
	done []atomic.Int64
	wg   sync.WaitGroup
}

func (w *pieces) Run() {
	for {
		i := int(w.next.Add(1)) - 1
		if i >= len(w.done) {
			break
		}
		w.done[i].Add(1)
	}
	w.wg.Done()
}
