package driver

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Driver steps the replicas of a run: one chain of a kernel per rung of a
// ladder (one rung: a single chain), each step a list of phases. The
// schedule gives the step its kernel, step size and posterior temperature;
// the attached phases prepare the rungs; every rung steps (explore, in
// parallel); the recorders and the phases see the step; the tempering
// exchanges positions between rungs when a round is due (communicate);
// and the phases end the step (the ladder's tuning, the window's restart).
// It is Pigeons.jl's round (explore, communicate, adapt) one step at a
// time.
type Driver struct {
	// Kernel is the run's kernel: it draws each rung's first momentum
	// (Init), keeps a stateful kernel's state in snapshots (Restore) and
	// is what the phases are validated against.
	Kernel sampler.Kernel
	// Schedule gives every step its Setting (Fixed: the same at every
	// step).
	Schedule Schedule
	// PT is the tempering: the ladder, the exchanges and the recorders.
	PT *tempering.PT
	// Phases are the adaptations and watches attached, run in order.
	Phases []Phase
	// BurnIn is the step at which the burn-in ends: the adaptations stop
	// and the window statistics restart (WindowRestart).
	BurnIn int
	// Workers is the number of rungs stepped at once (0: GOMAXPROCS).
	Workers int

	in StepInfo // the step's scratch: a driver steps one state at a time
}

// Validate checks the driver's configuration and its phases'.
func (d *Driver) Validate() error {
	switch {
	case d.Kernel == nil:
		return errors.New("pt: no kernel")
	case d.Schedule == nil:
		return errors.New("pt: no schedule")
	case d.PT == nil:
		return errors.New("pt: no tempering (a single chain is a one-rung ladder)")
	}
	if err := d.PT.Validate(); err != nil {
		return err
	}
	for _, p := range d.Phases {
		if err := p.Validate(d); err != nil {
			return fmt.Errorf("pt: %w", err)
		}
	}
	return nil
}

// Init returns a state with every rung at a copy of theta0[r] (or
// theta0[0] for all rungs when only one is given) and streams seeded by
// seed, one per rung plus one for the exchanges.
func (d *Driver) Init(theta0 [][]float64, seed uint64) (*tempering.PTState, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	r := len(d.PT.Temps)
	if len(theta0) != 1 && len(theta0) != r {
		return nil, fmt.Errorf("pt: %d initial positions for %d rungs", len(theta0), r)
	}
	st := &tempering.PTState{}
	for j := 0; j <= r; j++ {
		st.Streams = append(st.Streams, sampler.NewStream(seed, uint64(j)))
	}
	for j := 0; j < r; j++ {
		th := theta0[0]
		if len(theta0) == r {
			th = theta0[j]
		}
		s := sampler.NewState(th)
		d.Kernel.Init(s, st.Streams[j].Rand)
		st.Rungs = append(st.Rungs, s)
	}
	for _, p := range d.Phases {
		if c, ok := p.(dimChecker); ok {
			if err := c.CheckDim(d, len(theta0[0])); err != nil {
				return nil, err
			}
		}
	}
	d.PT.Start(st)
	for _, p := range d.Phases {
		p.Start(d, st)
	}
	return st, nil
}

// dimChecker is a phase whose settings depend on the model's dimension
// (a dense mass's): Init asks it before a new run starts.
type dimChecker interface {
	CheckDim(d *Driver, dim int) error
}

// Check reports whether st is a state of d for a model of dim parameters
// (for states restored from checkpoints).
func (d *Driver) Check(st *tempering.PTState, dim int) error {
	if err := d.PT.Check(st, dim); err != nil {
		return err
	}
	for _, p := range d.Phases {
		if err := p.Check(d, st, dim); err != nil {
			return fmt.Errorf("pt state: %w", err)
		}
	}
	return nil
}

// Step advances every rung by one kernel step (in parallel; rung j uses
// pots[j] and stream j), then runs an exchange round when one is due; tp
// supplies the energy terms of the exchange tests.
func (d *Driver) Step(pots []sampler.Potential, tp sampler.TermPotential, st *tempering.PTState) error {
	in, err := d.prepare(pots, st) // the schedule's setting at each rung
	if err != nil {
		return err
	}
	for _, p := range d.Phases { // mass and noise armed, the noise-aware step
		p.Before(d, st, in)
	}
	for _, p := range d.Phases { // the per-coordinate watch, after the noise's
		if a, ok := p.(armer); ok {
			a.armLast(d, st, in)
		}
	}
	if err := d.explore(pots, st, in); err != nil { // every rung's kernel step
		return err
	}
	st.Steps++
	d.PT.RecordStep(st, in.Kin)
	for _, p := range d.Phases { // tuning's trend, health watch, mass, noise
		if err := p.After(d, st, in); err != nil {
			return fmt.Errorf("pt: step %d: %w", st.Steps, err)
		}
	}
	if err := d.PT.Communicate(tp, st, in.Setting.Hyper.Temp, d); err != nil {
		return fmt.Errorf("pt: step %d: %w", st.Steps, err)
	}
	for _, p := range d.Phases { // tuning rounds, the window at burn-in
		if err := p.End(d, st, in); err != nil {
			return fmt.Errorf("pt: step %d: %w", st.Steps, err)
		}
	}
	return nil
}

// prepare checks the step's arguments and sets each rung's kernel and
// Hyper from the schedule's setting: its step size, and the posterior
// temperature times the rung's place on the ladder; a Frictional kernel
// is the one stepping at that step (its At), whose dynamics the health
// watch and the noise correction read.
func (d *Driver) prepare(pots []sampler.Potential, st *tempering.PTState) (*StepInfo, error) {
	r := len(d.PT.Temps)
	if len(pots) != r || len(st.Rungs) != r {
		return nil, fmt.Errorf("pt: %d potentials and %d states for %d rungs", len(pots), len(st.Rungs), r)
	}
	if st.Orders != nil && len(st.Orders) != r {
		return nil, fmt.Errorf("pt: %d minibatch orders for %d rungs", len(st.Orders), r)
	}
	set, err := d.Schedule.Next(st)
	if err == nil {
		err = set.check()
	}
	if err != nil {
		return nil, fmt.Errorf("pt: step %d: %w", st.Steps+1, err)
	}
	in := &d.in
	in.size(r)
	in.Setting = set
	for j := range in.Kernels {
		in.Hypers[j] = sampler.Hyper{StepSize: set.Hyper.StepSize, Temp: tempering.TemperedRung(set.Hyper.Temp, st.Temps[j])}
		in.Kernels[j] = kernelAt(set.Kernel, in.Hypers[j].StepSize)
	}
	return in, nil
}

// kernelAt returns k as it steps at step size h: k itself at its own
// step (sampler.KernelAt's value, without boxing a copy at every step),
// a Frictional kernel's At(h) otherwise.
func kernelAt(k sampler.Kernel, h float64) sampler.Kernel {
	if fk, ok := k.(sampler.Frictional); ok {
		if own, _ := fk.Dynamics(); own == h {
			return k
		}
	}
	return sampler.KernelAt(k, h)
}

// explore steps every rung's kernel at its Hyper, on up to Workers
// goroutines.
func (d *Driver) explore(pots []sampler.Potential, st *tempering.PTState, in *StepInfo) error {
	workers := d.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rs := &in.rs
	rs.kernel, rs.pots, rs.st, rs.in = in.Setting.Kernel, pots, st, in
	rs.next.Store(0)
	helpers := min(workers, len(in.errs)) - 1 // goroutines of the pool beside this one
	rungPool.Ensure(helpers)
	rs.wg.Add(helpers + 1)
	for range helpers {
		rungPool.Submit(rs)
	}
	rs.Run()
	rs.wg.Wait()
	rs.pots, rs.st = nil, nil // hold no caller's potentials
	for j, err := range in.errs {
		if err != nil {
			return fmt.Errorf("pt: step %d, rung %d (T=%g): %w", st.Steps, j, st.Temps[j], err)
		}
	}
	return nil
}

// Swap implements tempering.SwapObserver: the phases see every exchange
// attempt.
func (d *Driver) Swap(st *tempering.PTState, sw tempering.SwapAttempt) {
	for _, p := range d.Phases {
		p.Swap(d, st, sw)
	}
}

// Restore returns the state snapshot s holds for d, with a model of dim
// parameters (see Check), the kernel's own state handed back to it. The
// state shares s's slices.
func (d *Driver) Restore(s tempering.Snapshot, dim int) (*tempering.PTState, error) {
	st := &tempering.PTState{Steps: s.Steps, Rounds: s.Rounds, Stats: s.Stats, Temps: s.Temps, Tuning: s.Tuning, Mass: s.Mass, Noise: s.Noise}
	for j, rs := range s.Rungs {
		r := sampler.NewState(rs.Theta)
		copy(r.P, rs.P)
		r.Xi, r.U = rs.Xi, rs.U
		if err := r.SetMassMatrix(rs.MassMatrix()); err != nil {
			return nil, fmt.Errorf("rung %d: %w", j+1, err)
		}
		if err := setInjScale(r, rs.InjScale); err != nil {
			return nil, fmt.Errorf("rung %d: %w", j+1, err)
		}
		if err := sampler.UnmarshalExtra(d.Kernel, r, rs.Extra); err != nil {
			return nil, fmt.Errorf("rung %d: %w", j+1, err)
		}
		st.Rungs = append(st.Rungs, r)
	}
	for j, b := range s.Streams {
		r := &sampler.Stream{}
		if err := r.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("random stream %d: %w", j+1, err)
		}
		st.Streams = append(st.Streams, r)
	}
	if err := d.Check(st, dim); err != nil {
		return nil, err
	}
	return st, nil
}

// Watched returns phases followed by the health watch (StepHealth, with
// its defaults) and the window's restart at the end of burn-in: the
// phases of a run that adapts nothing else.
func Watched(phases ...Phase) []Phase {
	return append(phases, &StepHealth{}, WindowRestart{})
}

// Chain returns the driver of one chain of kernel k at step size h (in
// k's units) and temperature 1, its health watched: a one-rung ladder.
func Chain(k sampler.Kernel, h float64) *Driver {
	return &Driver{Kernel: k, Schedule: Fixed(k, h, 1), PT: &tempering.PT{Temps: []float64{1}}, Phases: Watched()}
}
