package diagnose

import "github.com/ptsghmc/ptsghmc/convergence"

// SplitRHat returns the rank-normalised split R-hat of Vehtari et al. (2021)
// (the larger of the bulk and the folded values), NaN when the chains are too
// short (convergence.SplitRHat).
func SplitRHat(chains [][]float64) float64 { return convergence.SplitRHat(chains) }

// BulkESS returns the bulk effective sample size of Vehtari et al. (2021)
// (convergence.BulkESS), NaN when the chains are too short.
func BulkESS(chains [][]float64) float64 { return convergence.BulkESS(chains) }
