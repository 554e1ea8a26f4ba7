// Package tempering runs the chains of package sampler's kernels as
// parallel tempering: PT-SGHMC (parallel tempering of SGNHT replicas with
// the corrected minibatch Barker exchange test of Seita et al. 2017, as in
// Luo, Zhang and Liu 2018), and a single chain as its one-rung case.
//
// # The loop
//
// PT steps one replica of its sampler.Kernel per rung of a temperature
// ladder; PT.Step is one step of every rung (each rung's minibatch drawn
// from its sampler.BatchOrder with the rung's stream, then the kernel's
// step) and an exchange round when one is due. PT.RunUntil is the one loop
// of every run: training runs and benchmarks attach Hooks to it (adapters
// before a step, observers after it), and PT.Run is RunUntil with an
// observer. The whole state is a PTState: the rungs' sampler.States, one
// sampler.Stream per rung plus one for exchanges, the step count, the
// current ladder and the statistics (PTStats, TuningState, one
// health.Health per rung), plain data for a checkpoint. The statistics
// the sampler does not adapt by are gathered by the Recorders a run
// attaches (PT.Record, as Pigeons.jl's recorders): swap counts and
// probabilities (SwapRecorder), round trips (RoundTripRecorder), the
// thermostat and kinetic means (EnergyRecorder); PT keeps the walkers,
// the window the ladder is tuned from and the rungs' health watch.
//
// # Ladders and exchanges
//
// Ladders are Ladder, GeometricLadder and LinearLadder (CheckLadder checks
// one). Every PT.Every steps pairs of rungs, chosen by the Scheme, try to
// swap their configurations with an ExchangeTest: Exchanger, the corrected
// minibatch Barker test (its Correction distribution is NewCorrection's),
// or BiasCorrectedExchange, an approximate Metropolis swap. DeltaE is the
// energy difference both decide on.
//
// # Adaptation
//
// During burn-in PT adapts and then freezes: LadderAdaptation tunes the
// ladder in rounds to equalise the communication Barrier between rungs
// (RungsFor and RecommendedRungs size it, RoundTrend checks that a round
// was stationary); a noise target (PT.NoiseTarget) shrinks each rung's
// step until the gradient noise's share falls to it. The adaptations that
// are not tempering's are package adapt's, which PT runs on every rung:
// the diagonal mass (PT.Precondition, adapt.Mass) and the noise correction
// (PT.NoiseCorrection, adapt.Noise).
package tempering
