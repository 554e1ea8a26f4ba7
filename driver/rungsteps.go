package driver

import (
	"sync"
	"sync/atomic"

	"github.com/ptsghmc/ptsghmc/internal/workpool"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// rungSteps is one step's kernel steps, one per rung, run by the caller
// and up to workers-1 goroutines of a pool that lives as long as the
// process: each takes the next rung not yet taken, so at most workers
// rungs step at once, and nothing is allocated per step (a closure or a
// goroutine per rung was). The rungs are independent (each its own state,
// potential and stream), so the order in which they step changes no bit.
type rungSteps struct {
	kernel sampler.Kernel
	pots   []sampler.Potential
	st     *tempering.PTState
	in     *StepInfo
	next   atomic.Int64
	wg     sync.WaitGroup
}

// Run steps rungs until none is left and reports its runner done: each
// rung's minibatch from its order (when the run has orders), then the
// step's kernel at the rung's Hyper.
func (rs *rungSteps) Run() {
	st, in := rs.st, rs.in
	for {
		j := int(rs.next.Add(1)) - 1
		if j >= len(in.errs) {
			break
		}
		s := st.Rungs[j]
		in.Xi0[j] = s.Xi
		s.BeginStep()
		rng := st.Streams[j].Rand
		var mb sampler.Minibatch
		if st.Orders != nil {
			mb = sampler.NextMinibatch(st.Orders[j], rng)
		}
		in.errs[j] = rs.kernel.Step(s, rs.pots[j], mb, in.Hypers[j], rng)
		in.Kin[j] = s.KineticAfterStep() // summed in the update, or a pass over p in parallel too
	}
	rs.wg.Done()
}

// rungPool runs rung steps on goroutines that live as long as the process.
var rungPool = workpool.New[*rungSteps](64)
