package driver

import (
	"math"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// Why a ladder placed from its rejections missed its swap target (issue 32's
// 784-32-10 case, 4 rungs, --swap-target 0.3, --exchange 20, burn-in 6,000):
//
//   - The rejections tuning adds up are Metropolis rejections of each
//     exchange's estimated deltaE, a minibatch estimate whose noise (up to
//     the correction table's sigma, about 1 nat) adds a rejection that does
//     not vanish with the gap, while the corrected Barker test decides on
//     the true deltaE. So a pair's Barker acceptance is higher than the
//     Gaussian model maps from its measured rejection (after burn-in, 0.43
//     measured against 0.375 mapped from a rejection of 0.43, and about
//     +0.04 to +0.05 on every run examined), and a ladder placed for the
//     target's rejection is too narrow: every seed's pairs accepted more than
//     the 0.3 asked for.
//   - A network's rungs wander through slow energy fluctuations: with the
//     ladder fixed, a pair's acceptance over successive 1,000-step stretches
//     went 0.12, 0.16, 0.60, 0.44 (25 attempts each; binomial noise is 0.09).
//     A round of about a thousand steps, which is what a 6,000-step burn-in
//     leaves for the last rounds, measures each pair's share of the barrier
//     with that error, and the next ladder's gaps inherit it pair by pair.
//
// barkerScale answers the first: it rescales the rejections so that, over the
// stationary stretch, they map to the Barker acceptance the swaps actually
// had. flatIfConsistent answers the second where it can: when the pairs'
// barriers are consistent, within their noise, with one barrier per unit of
// log T (a Gaussian target's, and any target's over a ladder as narrow as a
// network's), the ladder is placed by that one density, measured on all
// pairs at once, instead of by each pair's own noisy share.

// stationaryStretch returns the rounds since the last one spoiled by a
// transient (rounds holds the finished rounds and the current one last).
func stationaryStretch(rounds []tempering.TuningRound) []tempering.TuningRound {
	for i := len(rounds) - 1; i >= 0; i-- {
		if rounds[i].Spoiled != "" {
			return rounds[i+1:]
		}
	}
	return rounds
}

// Clamps of barkerScale: the acceptance it maps (Barker's test accepts at
// most half of the swaps of equilibrium replicas), and the scale itself.
const (
	scaleMinAcceptance, scaleMaxAcceptance = 0.05, 0.45
	scaleMin, scaleMax                     = 0.5, 2
)

// barkerScale returns the factor that calibrates measured rejections to the
// swaps' own Barker acceptance: over the pairs that are not saturated in the
// stationary stretch's rounds that recorded their attempts, the
// Metropolis-equivalent rejection that their mean Barker acceptance maps to
// (tempering.BarkerToMetropolisRejection, the mapping the swap target goes through)
// divided by their mean measured rejection, weighted by attempts; clamped
// to [0.5, 2], and 1 without such pairs.
func barkerScale(rounds []tempering.TuningRound) float64 {
	acc, rej, n := 0.0, 0.0, 0.0
	for _, r := range stationaryStretch(rounds) {
		if len(r.Tries) != len(r.Reject) || len(r.Acceptance) != len(r.Reject) {
			continue
		}
		for p, rp := range r.Reject {
			if rp > SaturatedRejection || math.IsNaN(r.Acceptance[p]) {
				continue
			}
			t := float64(r.Tries[p])
			acc += t * r.Acceptance[p]
			rej += t * rp
			n += t
		}
	}
	if n == 0 || rej <= 0 || acc/n > scaleMaxAcceptance || acc/n < scaleMinAcceptance {
		return 1
	}
	want, _ := tempering.BarkerToMetropolisRejection(acc / n) // in (0.05, 0.45)
	return math.Min(math.Max(want/(rej/n), scaleMin), scaleMax)
}

// FlatSigmas is how far, in chi-square standard deviations above its mean,
// the pairs' barriers may scatter about one density per unit of log T for
// flatIfConsistent to place the ladder by that density.
const FlatSigmas = 3.0

// FlatInflation is the factor by which the variance of a pair's mean
// rejection over a round exceeds the binomial one, r (1-r)/tries: on issue
// 32's case the acceptance of a fixed pair over 1,000-step stretches
// scattered by 0.13 to 0.21 where the binomial standard error was 0.09, a
// variance 2 to 5 times larger.
const FlatInflation = 4.0

// flatIfConsistent returns the barrier increments of the pairs of ladder
// temps as one density per unit of log T, c ln(T_{p+1}/T_p) with c the
// increments' sum over ln(T_top), when the measured increments inc are
// consistent with it: their chi-square about it, with a variance per pair of
// FlatInflation max(r (1-r), 0.05)/tries (binomial, inflated for the slow
// fluctuations; r the pair's rejection), at most its degrees of
// freedom plus FlatSigmas standard deviations. Otherwise, or when a pair is
// saturated, inc itself.
func flatIfConsistent(temps, inc, reject []float64, tries []int) ([]float64, bool) {
	if len(inc) < 2 {
		return inc, false
	}
	sum, width := 0.0, 0.0
	for p := range inc {
		if reject[p] > SaturatedRejection || tries[p] == 0 {
			return inc, false
		}
		sum += inc[p]
		width += math.Log(temps[p+1] / temps[p])
	}
	c := sum / width
	chi := 0.0
	for p := range inc {
		v := FlatInflation * math.Max(reject[p]*(1-reject[p]), 0.05) / float64(tries[p])
		d := inc[p] - c*math.Log(temps[p+1]/temps[p])
		chi += d * d / v
	}
	k := float64(len(inc) - 1)
	if chi > k+FlatSigmas*math.Sqrt(2*k) {
		return inc, false
	}
	flat := make([]float64, len(inc))
	for p := range flat {
		flat[p] = c * math.Log(temps[p+1]/temps[p])
	}
	return flat, true
}
