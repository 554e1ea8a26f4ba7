package sampler

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// NoiseAhead, when true (the default), lets a streamed SGNHT or SGHMC step
// whose minibatch is given draw its injected noise on another goroutine
// while the gradient is computed: the noise depends on the step's seed
// only, not on the gradient. The variates are the same, in the same order,
// as when the update draws them itself (TestNoiseAheadSameChain), so a run's
// samples do not depend on it; it only moves work to an idle core. It is
// used only when GOMAXPROCS is at least 2.
var NoiseAhead atomic.Bool

func init() { NoiseAhead.Store(true) }

// noiseJob is one step's noise, drawn ahead into buf by a noise worker:
// buf[:ready] holds the variates drawn so far, in the order the update uses
// them.
type noiseJob struct {
	ns    normalSource
	buf   []float64
	ready atomic.Int64
	done  chan struct{}
}

var (
	noiseJobs     = make(chan *noiseJob, 16)
	noiseWorkerMu sync.Mutex
	noiseWorkers  int
)

// startNoiseWorker makes sure a goroutine draws noise jobs (it lives as
// long as the process; one is enough: a step's noise takes less time than
// its gradient).
func startNoiseWorker() {
	noiseWorkerMu.Lock()
	defer noiseWorkerMu.Unlock()
	if noiseWorkers > 0 {
		return
	}
	noiseWorkers++
	go func() {
		for j := range noiseJobs {
			for lo := 0; lo < len(j.buf); lo += normalChunk {
				hi := min(lo+normalChunk, len(j.buf))
				j.ns.fill(j.buf[lo:hi])
				j.ready.Store(int64(hi))
			}
			j.done <- struct{}{}
		}
	}()
}

// start draws d variates of a normal source seeded as the update would
// seed it from rng, on the noise worker.
func (j *noiseJob) start(d int, ns normalSource) {
	if cap(j.buf) < d {
		j.buf = make([]float64, d)
		j.done = make(chan struct{}, 1)
	}
	j.buf, j.ns = j.buf[:d], ns
	j.ready.Store(0)
	startNoiseWorker()
	noiseJobs <- j
}

// upTo returns the variates [lo, hi), waiting for the worker to draw them.
func (j *noiseJob) upTo(lo, hi int) []float64 {
	for j.ready.Load() < int64(hi) {
		runtime.Gosched()
	}
	return j.buf[lo:hi]
}

// wait returns once the worker has finished the job (buf may be reused).
func (j *noiseJob) wait() { <-j.done }

// useNoiseAhead reports whether a step should draw its noise ahead.
func useNoiseAhead() bool { return NoiseAhead.Load() && runtime.GOMAXPROCS(0) >= 2 }
