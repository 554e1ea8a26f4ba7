// Package convergence measures how well MCMC chains of one scalar have
// mixed: the rank-normalised split R-hat and the bulk effective sample size
// of Vehtari et al. (2021), as Stan and ArviZ compute them (SplitRHat,
// BulkESS), and Trace, a bounded record of a chain's draws thinned by
// doubling, from which they can be computed at any time of a run.
//
// It is a leaf package (gonum only), so that the sampler's health check
// (package sampler) and the run diagnostics (package diagnose) share one
// implementation.
package convergence
