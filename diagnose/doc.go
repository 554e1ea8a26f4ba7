// Package diagnose says whether a run's chains mix and its dynamics are
// healthy, from the sampler's state and the run's files: figures and
// advice about what to change, not scores of predictions (package
// evaluate).
//
// TemperingOf gives the tempering figures of a parallel-tempering state
// (Tempering: swap acceptance per pair, the communication barrier, round
// trips, the rungs a ladder of that barrier wants, and advice on the
// ladder; MinSwapAcceptance). HealthOf gives the verdict of each rung's
// dynamics (HealthReport: kinetic temperature, friction, gradient noise
// and the noise-aware step, sampler.Health's figures; HealthAdvice says
// what to change), and HealthMetricsOf the same figures for a metrics
// line. SplitRHat and BulkESS (Vehtari et al. 2021) compare several chains
// of one scalar.
package diagnose
