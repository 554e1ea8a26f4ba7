package train

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// ErrInterrupted is returned by Run.Train when its context is cancelled; the
// run was checkpointed first and can be resumed.
var ErrInterrupted = errors.New("interrupted; checkpoint written")

// Status is what a progress display shows after each step.
type Status struct {
	Step, Target int
	LogLik       float64   // rung-1 minibatch mean log-likelihood per example (at the last log step)
	SwapRate     []float64 // per pair acceptance so far
	Samples      int
	Logged       bool // a metrics line was written at this step
	// Warning, when not empty, is a health window's verdict that the
	// dynamics are leaving their regime (diagnose.HealthOf gives the run's
	// verdict); Unhealthy is then rung 1's last health window when it is
	// not ok, whose cause diagnose.HealthAdvice turns into what to change
	// (nil when rung 1 is ok).
	Warning   string
	Unhealthy *health.HealthFigures
}

// Train runs until the configured number of steps, keeping rung-1 samples,
// logging metrics and checkpointing; progress, if not nil, is called after
// every step. When ctx is cancelled it checkpoints and returns
// ErrInterrupted.
//
// BLAS calls use the run's threads while it trains (one per call when its
// rungs step in parallel or a gradient is split over parallel graphs); the
// process's setting is restored when Train returns.
func (r *Run) Train(ctx context.Context, progress func(Status)) error {
	defer autodiff.WithBLASThreads(r.threads)()
	return r.train(ctx, progress)
}

// train is Train under the caller's BLAS setting: Chains.Train sets it
// once for all the chains it steps in parallel. The loop is the driver's
// one loop, driver.Driver.RunUntil, which asks the run's schedule for
// each step's step size, temperature and kernel (runSchedule); after each
// step the run records the kept sample, the metrics line, the checkpoint
// and the progress report (afterStep).
func (r *Run) train(ctx context.Context, progress func(Status)) error {
	pots := make([]sampler.Potential, len(r.pots))
	for j, p := range r.pots {
		pots[j] = p
	}
	after := func(*tempering.PTState) error { return r.afterStep(progress) }
	err := r.drv.RunUntil(ctx, pots, r.pots[0], r.state, r.Cfg.Steps, after)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		if cerr := r.checkpoint(); cerr != nil {
			return errors.Join(ErrInterrupted, cerr)
		}
		return ErrInterrupted
	}
	return err
}

// afterStep records the step just taken: rung 1's sample when the step
// keeps one, a metrics line every LogEvery steps and at the end, a
// checkpoint every CkptEvery steps and at the end, and the progress
// report.
func (r *Run) afterStep(progress func(Status)) error {
	cfg := r.Cfg
	step := r.state.Steps
	if keepSample(cfg, step, r.optimiser) {
		if err := r.appendSample(step); err != nil {
			return err
		}
	}
	logged := step%cfg.LogEvery == 0 || step == cfg.Steps
	if logged {
		if err := r.logMetrics(); err != nil {
			return err
		}
	}
	if step%cfg.CkptEvery == 0 || step == cfg.Steps {
		if err := r.checkpoint(); err != nil {
			return err
		}
	}
	if progress != nil {
		s := Status{Step: step, Target: cfg.Steps, LogLik: r.last.LogLik, SwapRate: swapRates(r.state.Stats), Samples: r.samples.Count, Logged: logged}
		s.Warning, s.Unhealthy = r.healthWarning()
		progress(s)
	}
	return nil
}

// Finish ends the run at its current step, as if its configured steps had
// been the steps done (for a wall-clock budget): the target is saved in
// config.json and the checkpoint, sgd keeps its final weights, and a final
// metrics line is written. A resume with more --steps continues it (with
// that extra metrics line, and for sgd that extra sample, which an
// uninterrupted run would not have).
func (r *Run) Finish() error {
	step := r.state.Steps
	if step >= r.Cfg.Steps {
		return nil
	}
	defer autodiff.WithBLASThreads(r.threads)()
	r.Cfg.Steps = step
	if r.optimiser && step > 0 {
		if err := r.appendSample(step); err != nil {
			return err
		}
	}
	if step%r.Cfg.LogEvery != 0 { // Train logged this step otherwise
		if err := r.logMetrics(); err != nil {
			return err
		}
	}
	if err := rundir.WriteConfig(r.Dir, r.Cfg); err != nil {
		return err
	}
	return r.checkpoint()
}

// appendSample keeps rung 1's weights as the sample of step: as they are,
// or with a null-space prior folded back to the raw inputs' first layer
// (nullspace.Prior.Fold: a dense layer's A w', a convolution's K' A) and
// a skip branch's W' to W = s V V^T W' (nullspace.Prior.FoldSkip), so
// that every reader of the samples sees the network of the raw images.
func (r *Run) appendSample(step int) error {
	theta := r.state.Rungs[0].Theta
	if r.null != nil || r.skip != nil {
		theta = append([]float64(nil), theta...)
	}
	if r.null != nil {
		first := r.Model.Layout[0]
		if err := r.null.Fold(theta[first.Offset:first.Offset+first.Size()], first.Shape); err != nil {
			return err
		}
	}
	if r.skip != nil {
		last := r.Model.Layout[len(r.Model.Layout)-1]
		if last.Name != nn.SkipWeights || len(last.Shape) != 2 {
			return fmt.Errorf("null-space skip: model %s's last learnable is %s %v, not the skip branch %s", r.Model.Name, last.Name, last.Shape, nn.SkipWeights)
		}
		if err := r.skip.FoldSkip(theta[last.Offset:last.Offset+last.Size()], last.Shape[1]); err != nil {
			return err
		}
	}
	return r.samples.Append(step, theta)
}
