// Package workpool runs jobs on goroutines that live as long as the
// process, so that work split over cores on a sampler's step path (a
// product's columns, a PT step's rungs, an exchange test's configurations)
// allocates nothing: a goroutine and a closure per piece of work would.
package workpool

import "sync"

// A Job is work a pool goroutine runs. It reports its own completion (a
// WaitGroup of its caller's, typically).
type Job interface{ Run() }

// Pool hands jobs of type J to its goroutines. The zero Pool is not ready:
// make one with New.
type Pool[J Job] struct {
	jobs chan J
	mu   sync.Mutex
	live int
}

// New returns a pool whose queue holds up to queue jobs before Submit waits.
func New[J Job](queue int) *Pool[J] {
	return &Pool[J]{jobs: make(chan J, queue)}
}

// Ensure makes sure at least n goroutines wait for jobs; they are never
// stopped.
func (p *Pool[J]) Ensure(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; p.live < n; p.live++ {
		go func() {
			for j := range p.jobs {
				j.Run()
			}
		}()
	}
}

// Submit queues j for the pool's goroutines (Ensure starts them).
func (p *Pool[J]) Submit(j J) { p.jobs <- j }

// Share runs j on the caller and on helpers pool goroutines at once and
// returns when all have finished: j is work its runners take pieces of
// until none is left, and its Run calls wg.Done when its runner stops.
func (p *Pool[J]) Share(j J, helpers int, wg *sync.WaitGroup) {
	helpers = max(helpers, 0)
	p.Ensure(helpers)
	wg.Add(helpers + 1)
	for range helpers {
		p.Submit(j)
	}
	j.Run()
	wg.Wait()
}
