package driver

import "math"

// SaturatedRejection is the pair rejection rate above which PairDistance
// measures a pair by its mean deltaE instead.
const SaturatedRejection = 0.9

// PairDistance returns a pair's increment of the communication barrier from
// its mean Metropolis-equivalent rejection reject and its mean estimated
// log swap ratio meanDeltaE. Below SaturatedRejection it is the rejection
// (the barrier's own estimator). Above, the rejection stops at 1 however far
// apart the rungs are, and a ladder widened on a transient (where swaps
// looked easy) would be narrowed by at most one rung's worth per round; there
// the increment is sqrt(mu/pi), mu = -meanDeltaE, when larger: under the
// Gaussian model deltaE ~ N(-mu, 2 mu) the rejection is erf(sqrt(mu)/2)
// and the barrier across the pair, lambda times the gap in beta, is
// sqrt(mu/pi) (exact for a Gaussian target whatever the gap), which keeps
// growing with the gap.
func PairDistance(reject, meanDeltaE float64) float64 {
	if !(reject > SaturatedRejection) || !(meanDeltaE < 0) {
		return reject
	}
	return math.Max(reject, math.Sqrt(-meanDeltaE/math.Pi))
}
