// Package diagnose says whether a run's chains mix and its dynamics are
// healthy, from the sampler's state and the run's files: figures and
// advice about what to change, not scores of predictions (package
// evaluate).
//
// TemperingOf gives the tempering figures of a parallel-tempering state
// (Tempering: tempering.Window's swap acceptance per pair, communication
// barrier and round trips, with the verdict on whether PT pays and advice
// on the ladder; MinSwapAcceptance). HealthOf gives the verdict of each
// rung's dynamics (HealthReport: kinetic temperature, friction, gradient
// noise and the noise-aware step, health.Health's figures; HealthAdvice
// says what to change). SplitRHat and BulkESS (Vehtari et al. 2021) compare several chains
// of one scalar.
package diagnose
