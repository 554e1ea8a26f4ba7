package sampler

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// An update's injected noise, one standard normal variate per parameter,
// costs more than the rest of the update (2.6 ns a variate against about
// 1.8 ns for the arithmetic and memory traffic of a coordinate). When a
// rung has a core to spare (a single chain on a multi-core machine) a
// helper goroutine draws the variates ahead of the update, through a small
// ring of chunks, and the update costs the larger of the two instead of
// their sum. The variates are the same, in the same order, as when the
// update draws them itself (normalSource.fill continues across chunk
// boundaries), so results do not depend on whether a helper ran
// (TestNoisePipeSameVariates).

const (
	pipeChunk = 4096 // variates per chunk of the ring
	pipeRing  = 16   // chunks in the ring: 512 KiB, within a core's L2
	// pipeMin is the smallest update worth a helper goroutine.
	pipeMin = 16 * pipeChunk
)

// noisePipe is the ring a helper goroutine fills; one per rung, reused
// every step. Not safe for concurrent updates.
type noisePipe struct {
	ring     [pipeRing][pipeChunk]float64
	produced atomic.Int64 // chunks written by the helper
	_        [56]byte     // keep the two counters on their own cache lines
	consumed atomic.Int64 // chunks the update is done with
	_        [56]byte
}

// start launches the helper drawing n variates from ns.
func (np *noisePipe) start(ns normalSource, n int) {
	np.produced.Store(0)
	np.consumed.Store(0)
	chunks := (n + pipeChunk - 1) / pipeChunk
	go func() {
		for c := 0; c < chunks; c++ {
			for int64(c)-np.consumed.Load() >= pipeRing { // ring full
				runtime.Gosched()
			}
			lo := c * pipeChunk
			ns.fill(np.ring[c%pipeRing][:min(lo+pipeChunk, n)-lo])
			np.produced.Store(int64(c + 1))
		}
	}()
}

// updateNoise hands an update its n variates in order, a chunk at a time:
// drawn in place into buf, or taken from a helper's ring.
type updateNoise struct {
	ns   normalSource
	pipe *noisePipe
	n    int // variates in all
	next int // the first variate not yet handed out
	c    int // chunks taken from the ring
	buf  [normalChunk]float64
}

// newUpdateNoise returns the noise of an update of n coordinates, seeded
// from rng (one draw, whether or not a helper runs). With pipe not nil and
// n >= pipeMin a helper goroutine draws the variates.
func newUpdateNoise(rng *rand.Rand, n int, pipe *noisePipe) updateNoise {
	u := updateNoise{ns: newNormalSource(rng), n: n}
	if pipe != nil && n >= pipeMin {
		u.pipe = pipe
		pipe.start(u.ns, n)
	}
	return u
}

// chunk returns the next variates (empty when all n were handed out). A
// chunk is valid until the next call.
func (u *updateNoise) chunk() []float64 {
	lo := u.next
	if lo >= u.n {
		if u.pipe != nil {
			u.pipe.consumed.Store(int64(u.c))
		}
		return nil
	}
	if u.pipe == nil {
		z := u.buf[:min(lo+normalChunk, u.n)-lo]
		u.ns.fill(z)
		u.next += len(z)
		return z
	}
	np := u.pipe
	if u.c > 0 {
		np.consumed.Store(int64(u.c)) // done with the previous chunk
	}
	for np.produced.Load() <= int64(u.c) {
		runtime.Gosched()
	}
	z := np.ring[u.c%pipeRing][:min(lo+pipeChunk, u.n)-lo]
	u.c++
	u.next += len(z)
	return z
}
