// Package driver steps the chains of package sampler's kernels: one
// replica per rung of a tempering ladder (one rung: a single chain), the
// one loop of every run (training runs, the benchmark, the experiments,
// refcheck's posteriors).
//
// # The step
//
// Driver.Step is a list of phases, as Pigeons.jl's round is (explore,
// communicate, adapt) and as gonum optimize's Method is driven with
// Recorders attached:
//
//   - the Schedule gives the step its Setting: the kernel, the step size
//     and the posterior temperature, both arguments of every kernel step
//     (sampler.Hyper), as in BlackJAX; a rung samples at the posterior
//     temperature times its place on the ladder;
//   - the attached phases prepare the step (Phase.Before);
//   - every rung steps (explore: its minibatch from its order, then the
//     kernel, in parallel on Workers goroutines);
//   - tempering's recorders and the phases see the step (Phase.After);
//   - tempering exchanges positions between rungs when a round is due
//     (tempering.PT.Communicate; the phases see each attempt, Phase.Swap);
//   - the phases end the step (Phase.End).
//
// Driver.RunUntil is the loop, with a function called after every step
// (a run's samples, metrics, checkpoints and progress; the benchmark's
// timers).
//
// # The phases
//
// Each adaptation of the burn-in is a Phase in its own file, attached to
// Driver.Phases in the order it runs, its estimates plain data in the
// state (tempering.PTState) so that a checkpoint saves them: StepHealth
// (health.go: each rung's health watch, after burn-in per coordinate too,
// and the noise-aware step that shrinks a rung's step while gradient
// noise dominates; its per-coordinate watch is armed after every phase's
// Before, as it takes the noise sums NoiseCorrection's clears), Mass (mass.go:
// the diagonal mass estimated over windows and frozen, adapt.Mass),
// NoiseCorrection (noise.go: the injected noise corrected by the
// estimated gradient noise, adapt.Noise), LadderTuning (ladder.go, with
// tune.go, trend.go, calibrate.go and saturation.go: the ladder tuned in
// rounds of doubling length from the communication barrier) and
// WindowRestart (window.go: the window statistics restarted at the end
// of burn-in).
package driver
