// Package tempering is what parallel tempering adds to chains of package
// sampler's kernels: PT-SGHMC's ladder and exchanges (parallel tempering
// of SGNHT replicas with the corrected minibatch Barker exchange test of
// Seita et al. 2017, as in Luo, Zhang and Liu 2018). Package driver steps
// the replicas; a single chain is the one-rung case.
//
// # Ladders and exchanges
//
// Ladders are Ladder, GeometricLadder and LinearLadder (CheckLadder checks
// one). PT is the tempering of a run: its ladder, and every PT.Every
// steps an exchange round (PT.Communicate) in which pairs of rungs, chosen
// by the Scheme, try to swap their configurations with an ExchangeTest:
// Exchanger, the corrected minibatch Barker test (its Correction
// distribution is NewCorrection's), or BiasCorrectedExchange, an
// approximate Metropolis swap. DeltaE is the energy difference both
// decide on.
//
// # The state and the statistics
//
// The whole state of a run is a PTState: the rungs' sampler.States, one
// sampler.Stream per rung plus one for exchanges, the step count, the
// current ladder and the statistics (PTStats, TuningState, one
// health.Health per rung), plain data for a checkpoint (Snapshot). The
// statistics the sampler does not adapt by are gathered by the Recorders
// a run attaches (PT.Record, as Pigeons.jl's recorders): swap counts and
// probabilities (SwapRecorder), round trips (RoundTripRecorder), the
// thermostat and kinetic means (EnergyRecorder); PT keeps the walkers and
// the window of swap figures (Window) the ladder is tuned from.
//
// # The barrier
//
// The communication Barrier between rungs (NewBarrier, from the pairs'
// rejections) places ladders: LadderAdaptation.NextLadder equalises it
// (driver.LadderTuning runs the tuning rounds during burn-in), RungsFor
// and RecommendedRungs size a ladder from it.
package tempering
