package tempering

import (
	"sync"
	"sync/atomic"

	"github.com/ptsghmc/ptsghmc/internal/workpool"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// rungSteps is one PT step's kernel steps, one per rung, run by the caller
// and up to workers-1 goroutines of a pool that lives as long as the
// process: each takes the next rung not yet taken, so at most workers
// rungs step at once, and nothing is allocated per step (a closure or a
// goroutine per rung was). The rungs are independent (each its own state,
// potential and stream), so the order in which they step changes no bit.
type rungSteps struct {
	pt     *PT
	pots   []sampler.Potential
	st     *PTState
	hypers []sampler.Hyper
	errs   []error
	next   atomic.Int64
	wg     sync.WaitGroup
}

// step runs rung j's kernel step: its minibatch from its order (when the
// run has orders), then the kernel at hypers[j].
func (rs *rungSteps) step(j int) {
	st := rs.st
	s := st.Rungs[j]
	st.xi0[j] = s.Xi
	s.BeginStep()
	rng := st.Streams[j].Rand
	var mb sampler.Minibatch
	if st.Orders != nil {
		mb = sampler.NextMinibatch(st.Orders[j], rng)
	}
	rs.errs[j] = rs.pt.Kernel.Step(s, rs.pots[j], mb, rs.hypers[j], rng)
	st.kin[j] = s.KineticAfterStep() // summed in the update, or a pass over p in parallel too
}

// drain steps rungs until none is left.
func (rs *rungSteps) drain() {
	for {
		j := int(rs.next.Add(1)) - 1
		if j >= len(rs.errs) {
			return
		}
		rs.step(j)
	}
}

// run steps every rung, on up to workers goroutines.
func (rs *rungSteps) run(workers int) {
	rs.next.Store(0)
	rungPool.Share(rs, min(workers, len(rs.errs))-1, &rs.wg)
}

// Run drains the step's rungs and reports its runner done.
func (rs *rungSteps) Run() {
	rs.drain()
	rs.wg.Done()
}

// rungPool runs rung steps on goroutines that live as long as the process.
var rungPool = workpool.New[*rungSteps](64)
