package driver

import (
	"fmt"
	"math"

	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// Trend thresholds: a tuning round is spoiled by a transient when some
// signal moved, between the first and the second half of the round, by
// more than its threshold and by more than TrendSigmas standard errors
// (estimated from the scatter of the block means about their half's mean,
// which absorbs the autocorrelation within a block, and at least its
// value for independent observations, which is steadier when there is
// none: a round tests several signals, and dozens of rounds
// are tested, so a false alarm must be rare).
const (
	// TrendRejection is the largest drift of a pair's mean
	// Metropolis-equivalent rejection, over its exchange attempts or as
	// implied by its log swap ratio from the rungs' energies.
	TrendRejection = 0.05
	// TrendSigmas is the significance a drift must also reach.
	TrendSigmas = 4.0
)

// newRoundTrend returns empty statistics for a round of steps (start, end]
// of a ladder of r rungs.
func newRoundTrend(start, end, r int) tempering.RoundTrend {
	p := max(r-1, 0)
	return tempering.RoundTrend{Start: start, End: end,
		DSum: make([]float64, p*tempering.TrendBlocks), DCount: make([]int, p*tempering.TrendBlocks), DSq: make([]float64, p),
		RSum: make([]float64, p*tempering.TrendBlocks), RCount: make([]int, p*tempering.TrendBlocks), RSq: make([]float64, p), XSum: make([]float64, p)}
}

// sized reports whether the statistics fit a ladder of r rungs.
func sized(t *tempering.RoundTrend, r int) bool {
	p := max(r-1, 0)
	return t.End > t.Start && len(t.DSum) == p*tempering.TrendBlocks && len(t.DCount) == p*tempering.TrendBlocks && len(t.DSq) == p &&
		len(t.RSum) == p*tempering.TrendBlocks && len(t.RCount) == p*tempering.TrendBlocks && len(t.RSq) == p && len(t.XSum) == p
}

// block returns the block of step (Start < step <= End), or -1 outside.
func block(t *tempering.RoundTrend, step int) int {
	if step <= t.Start || step > t.End {
		return -1
	}
	return (step - t.Start - 1) * tempering.TrendBlocks / (t.End - t.Start)
}

// observeStep adds the rungs' energies after a step at inverse
// temperatures betas.
func observeStep(t *tempering.RoundTrend, step int, betas []float64, rungs []*sampler.State) {
	b := block(t, step)
	if b < 0 {
		return
	}
	for j := 0; j+1 < len(rungs); j++ {
		d := tempering.DeltaE(rungs[j].U, rungs[j+1].U, 1/betas[j], 1/betas[j+1])
		t.DSum[j*tempering.TrendBlocks+b] += d
		t.DCount[j*tempering.TrendBlocks+b]++
		t.DSq[j] += d * d
	}
}

// observeSwap adds an exchange attempt at pair p: its estimated deltaE.
func observeSwap(t *tempering.RoundTrend, step, p int, deltaE float64) {
	b := block(t, step)
	if b < 0 {
		return
	}
	reject := tempering.MetropolisRejection(deltaE)
	t.RSum[p*tempering.TrendBlocks+b] += reject
	t.RCount[p*tempering.TrendBlocks+b]++
	t.RSq[p] += reject * reject
	t.XSum[p] += deltaE
}

// meanDeltaE returns pair p's mean estimated deltaE over the round's
// attempts (NaN before any).
func meanDeltaE(t *tempering.RoundTrend, p int) float64 {
	n := 0
	for b := 0; b < tempering.TrendBlocks; b++ {
		n += t.RCount[p*tempering.TrendBlocks+b]
	}
	return t.XSum[p] / float64(n)
}

// halfDrift returns the difference between the means of the second and the
// first half of the block means sum[i]/count[i] (i in [off, off+tempering.TrendBlocks)),
// its standard error, and whether every block had at least minCount
// observations (otherwise there is no verdict).
func halfDrift(sum []float64, count []int, off, minCount int) (drift, se float64, ok bool) {
	const half = tempering.TrendBlocks / 2
	var m [tempering.TrendBlocks]float64
	for b := 0; b < tempering.TrendBlocks; b++ {
		if count[off+b] < minCount {
			return 0, 0, false
		}
		m[b] = sum[off+b] / float64(count[off+b])
	}
	var mean [2]float64
	for b := 0; b < tempering.TrendBlocks; b++ {
		mean[b/half] += m[b] / half
	}
	ss := 0.0
	for b := 0; b < tempering.TrendBlocks; b++ {
		d := m[b] - mean[b/half]
		ss += d * d
	}
	s2 := ss / float64(tempering.TrendBlocks-2)
	return mean[1] - mean[0], math.Sqrt(s2 * 2 / half), true
}

// drifted reports whether a drift exceeds both its threshold and
// TrendSigmas standard errors.
func drifted(drift, se, threshold float64) bool {
	return math.Abs(drift) > threshold && math.Abs(drift) > TrendSigmas*se
}

// stationary returns "" when the round shows no trend, and otherwise says
// which signal moved and by how much: a pair's mean rejection over its
// exchange attempts (the deltaE trend), or its log swap ratio computed
// after every step from the rungs' own energy estimates (the energy trend).
// The energy trend is converted to the rejection it implies under the
// Gaussian model of deltaE (N(-mu, 2 mu), see BarkerToMetropolisRejection)
// and held to the same threshold, so that pairs that never swap (or always
// do) are not flagged for fluctuations that change nothing. betas are the
// round's inverse temperatures. Signals whose blocks hold fewer than 2
// observations give no verdict.
func stationary(t *tempering.RoundTrend, betas []float64) string {
	for p := 0; p+1 < len(betas); p++ {
		if d, se, ok := halfDrift(t.RSum, t.RCount, p*tempering.TrendBlocks, 2); ok && drifted(d, math.Max(se, independentSE(t.RSum, t.RCount, t.RSq, p)), TrendRejection) {
			se = math.Max(se, independentSE(t.RSum, t.RCount, t.RSq, p))
			return fmt.Sprintf("pair %d's swap rejection moved by %+.2f (%.1f standard errors) within the round", p+1, d, math.Abs(d)/se)
		}
		d, se, ok := halfDrift(t.DSum, t.DCount, p*tempering.TrendBlocks, 2)
		se = math.Max(se, independentSE(t.DSum, t.DCount, t.DSq, p))
		if !ok || math.Abs(d) <= TrendSigmas*se {
			continue
		}
		first, second := halfMean(t, t.DSum, t.DCount, p, 0), halfMean(t, t.DSum, t.DCount, p, 1)
		moved := tempering.MetropolisAcceptance(math.Max(-first, 0)) - tempering.MetropolisAcceptance(math.Max(-second, 0))
		if math.Abs(moved) > TrendRejection {
			return fmt.Sprintf("pair %d's log swap ratio from the rungs' energies moved from %.2f to %.2f nats (%.1f standard errors; a rejection change of %+.2f) within the round", p+1, first, second, math.Abs(d)/se, moved)
		}
	}
	return ""
}

// halfMean returns the mean of pair p's block means in half h (0 or 1).
func halfMean(t *tempering.RoundTrend, sum []float64, count []int, p, h int) float64 {
	const half = tempering.TrendBlocks / 2
	m := 0.0
	for b := h * half; b < (h+1)*half; b++ {
		m += sum[p*tempering.TrendBlocks+b] / float64(count[p*tempering.TrendBlocks+b]) / half
	}
	return m
}

// independentSE returns the standard error of the difference between the
// means of the two halves of pair p's observations (sums sum and count per
// block, sum of squares sq per pair), were they independent.
func independentSE(sum []float64, count []int, sq []float64, p int) float64 {
	const half = tempering.TrendBlocks / 2
	var n [2]int
	total := 0.0
	for b := 0; b < tempering.TrendBlocks; b++ {
		n[b/half] += count[p*tempering.TrendBlocks+b]
		total += sum[p*tempering.TrendBlocks+b]
	}
	all := n[0] + n[1]
	if n[0] == 0 || n[1] == 0 || all < 2 {
		return math.Inf(1)
	}
	mean := total / float64(all)
	v := math.Max(sq[p]/float64(all)-mean*mean, 0) * float64(all) / float64(all-1)
	return math.Sqrt(v * (1/float64(n[0]) + 1/float64(n[1])))
}
