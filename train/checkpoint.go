package train

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// checkpointOf assembles the checkpoint of a run from plain state: its
// config, the sampler state st as a snapshot (with what its kernel k keeps
// of its own), each rung's minibatch order, and the lengths of its samples
// file (records) and metrics file (bytes). The checkpoint shares st's
// slices; write it before stepping on.
func checkpointOf(cfg runspec.Config, k sampler.Kernel, st *tempering.PTState, batches []datasets.Batches, samples int, metrics int64) (*rundir.Checkpoint, error) {
	snap, err := st.Snapshot(k)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &rundir.Checkpoint{Config: cfg, Snapshot: snap, Samples: samples, Metrics: metrics, Batches: batches}, nil
}

// checkpoint writes the run's whole state, after committing the samples
// and metrics it records to stable storage.
func (r *Run) checkpoint() error {
	if err := r.samples.Sync(); err != nil {
		return fmt.Errorf("samples: sync: %w", err)
	}
	if err := r.metrics.Sync(); err != nil {
		return fmt.Errorf("metrics: sync: %w", err)
	}
	c, err := checkpointOf(r.Cfg, r.drv.Kernel, r.state, saveBatches(r.batches), r.samples.Count, r.mbytes)
	if err != nil {
		return err
	}
	return rundir.WriteCheckpoint(r.Dir, c)
}

// validateFor checks everything c holds against the run it is restored
// into: a model of dim parameters, numRungs rungs and training data of n
// examples. It returns an error wrapping ErrCheckpoint naming what does not
// fit; a checkpoint it accepts cannot make the resumed run index outside
// its data or its model.
func validateFor(c *rundir.Checkpoint, cfg runspec.Config, dim, numRungs, n int) error {
	bad := func(f string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(f, args...), rundir.ErrCheckpoint)
	}
	switch {
	case len(c.Rungs) != numRungs || len(c.Streams) != numRungs+1 || len(c.Batches) != numRungs:
		return bad("%d rungs, %d streams, %d batch states for a %d-rung run (need %d, %d, %d)",
			len(c.Rungs), len(c.Streams), len(c.Batches), numRungs, numRungs, numRungs+1, numRungs)
	case c.Steps < 0 || c.Steps > cfg.Steps:
		return bad("%d steps done, outside [0, %d] (the run's steps)", c.Steps, cfg.Steps)
	case c.Rounds < 0 || c.Rounds > c.Steps:
		return bad("%d exchange rounds in %d steps", c.Rounds, c.Steps)
	case c.Samples < 0 || c.Samples > c.Steps:
		return bad("%d samples after %d steps", c.Samples, c.Steps)
	case c.Metrics < 0:
		return bad("metrics length %d", c.Metrics)
	case c.Temps != nil && len(c.Temps) != numRungs:
		return bad("a ladder of %d temperatures for %d rungs", len(c.Temps), numRungs)
	}
	for j, rs := range c.Rungs {
		if len(rs.Theta) != dim || len(rs.P) != dim {
			return bad("rung %d has %d parameters and %d momenta, model %s has %d", j+1, len(rs.Theta), len(rs.P), cfg.ModelName(), dim)
		}
		if !finiteAll(rs.Theta) || !finiteAll(rs.P) || !finiteAll([]float64{rs.Xi}) {
			return bad("rung %d holds a non-finite position, momentum or thermostat", j+1)
		}
	}
	// the batch size of the step the checkpoint was written after (the
	// initial checkpoint: of the first step)
	want := cfg.StepBatch(max(c.Steps-1, 0), n)
	for j, b := range c.Batches {
		if b.N != n || b.Size != want || len(b.Order) != n {
			return bad("rung %d's batch state is over %d examples in batches of %d (order of %d), the run has %d examples in batches of %d",
				j+1, b.N, b.Size, len(b.Order), n, want)
		}
		if b.Pos < 0 || b.Pos > n || b.Epoch < 0 {
			return bad("rung %d's batch state is at position %d of epoch %d, outside [0, %d]", j+1, b.Pos, b.Epoch, n)
		}
		seen := make([]bool, n)
		for _, i := range b.Order {
			if i < 0 || i >= n || seen[i] {
				return bad("rung %d's batch order is not a permutation of the %d examples", j+1, n)
			}
			seen[i] = true
		}
	}
	return nil
}

// finiteAll reports whether every value of x is finite; the sum is not
// finite when a value is not (or when they overflow, which is no state to
// resume either).
func finiteAll(x []float64) bool {
	s := 0.0
	for _, v := range x {
		s += v * 0 // NaN for NaN and ±Inf, 0 otherwise
	}
	return s == 0
}

// restore validates c against the run it is restored into (pt, a model of
// dim parameters, n training examples) and returns its sampler state
// (driver.Driver.Restore; rundir.DecodeCheckpoint brought an older
// checkpoint's state up to date). Every error wraps ErrCheckpoint.
func restore(c *rundir.Checkpoint, cfg runspec.Config, d *driver.Driver, dim, n int) (*tempering.PTState, error) {
	if err := validateFor(c, cfg, dim, len(d.PT.Temps), n); err != nil {
		return nil, err
	}
	st, err := d.Restore(c.Snapshot, dim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, rundir.ErrCheckpoint)
	}
	return st, nil
}
