package convergence

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// splitChains halves every chain (dropping a middle draw of odd lengths),
// truncated to the shortest chain's length.
func splitChains(chains [][]float64) [][]float64 {
	var out [][]float64
	for _, c := range truncated(chains) {
		n, half := len(c), len(c)/2
		if half < 2 {
			return nil
		}
		out = append(out, c[:half], c[n-half:])
	}
	return out
}

// rankNormalize replaces every draw by Phi^-1((r - 3/8)/(S + 1/4)), r its
// rank among all S draws (average rank for ties), as in Vehtari et al. 2021.
func rankNormalize(chains [][]float64) [][]float64 {
	type draw struct {
		v    float64
		c, i int
	}
	var all []draw
	for c, ch := range chains {
		for i, v := range ch {
			all = append(all, draw{v, c, i})
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].v < all[b].v })
	s := float64(len(all))
	out := make([][]float64, len(chains))
	for c, ch := range chains {
		out[c] = make([]float64, len(ch))
	}
	norm := distuv.UnitNormal
	for a := 0; a < len(all); {
		b := a
		for b < len(all) && all[b].v == all[a].v {
			b++
		}
		r := float64(a+b+1) / 2 // average 1-based rank of the tie group
		z := norm.Quantile((r - 0.375) / (s + 0.25))
		for k := a; k < b; k++ {
			out[all[k].c][all[k].i] = z
		}
		a = b
	}
	return out
}

func meanVar(x []float64) (float64, float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	v := 0.0
	for _, y := range x {
		v += (y - m) * (y - m)
	}
	return m, v / float64(len(x)-1)
}

// rhat returns the potential scale reduction of equal-length chains.
func rhat(chains [][]float64) float64 {
	n := float64(len(chains[0]))
	var means, vars []float64
	for _, c := range chains {
		m, v := meanVar(c)
		means = append(means, m)
		vars = append(vars, v)
	}
	_, b := meanVar(means) // B/n
	w := 0.0
	for _, v := range vars {
		w += v / float64(len(vars))
	}
	varPlus := (n-1)/n*w + b
	return math.Sqrt(varPlus / w)
}

// SplitRHat returns the rank-normalised split R-hat of Vehtari et al. (2021)
// (the larger of the bulk and the folded values), NaN when the chains are too
// short or hold a value that is not finite (no rank).
func SplitRHat(chains [][]float64) float64 {
	sp := splitChains(chains)
	if sp == nil || !allFinite(sp) {
		return math.NaN()
	}
	bulk := rhat(rankNormalize(sp))
	// folded: |x - median| for the tails, the median of all the draws (the
	// middle one of an odd length too; the mean of the middle two of an
	// even number), as Stan and ArviZ fold them before splitting
	med := median(truncated(chains))
	folded := make([][]float64, len(sp))
	for c, ch := range sp {
		for _, v := range ch {
			folded[c] = append(folded[c], math.Abs(v-med))
		}
	}
	return math.Max(bulk, rhat(rankNormalize(folded)))
}

// truncated returns every chain's last draws, as many as the shortest
// chain has (those splitChains halves).
func truncated(chains [][]float64) [][]float64 {
	n := math.MaxInt
	for _, c := range chains {
		n = min(n, len(c))
	}
	out := make([][]float64, len(chains))
	for i, c := range chains {
		out[i] = c[len(c)-n:]
	}
	return out
}

// median returns the median of all the draws of chains (not empty), the
// mean of the middle two of an even number.
func median(chains [][]float64) float64 {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	sort.Float64s(all)
	k := len(all)
	if k%2 == 1 {
		return all[k/2]
	}
	return (all[k/2-1] + all[k/2]) / 2
}

// BulkESS returns the bulk effective sample size (Vehtari et al. 2021): the
// ESS of the rank-normalised split chains with Geyer's initial monotone
// sequence estimator of the autocorrelation sum; NaN when the chains are
// too short or hold a value that is not finite.
func BulkESS(chains [][]float64) float64 {
	sp := splitChains(chains)
	if sp == nil || !allFinite(sp) {
		return math.NaN()
	}
	return ess(rankNormalize(sp))
}

// allFinite reports whether every draw of chains is a finite number (a NaN
// has no rank: rankNormalize's tie groups never end on one).
func allFinite(chains [][]float64) bool {
	for _, c := range chains {
		for _, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

// ess returns the effective sample size of equal-length chains, as Stan and
// ArviZ compute it (Vehtari et al. 2021, eqs. 10-11): rho_t = 1 - (W -
// mean_c acov_c(t)) / var+, acov_c the biased (1/n) autocovariance of chain
// c, summed by Geyer's initial positive and monotone sequences.
func ess(chains [][]float64) float64 {
	m := len(chains)
	n := len(chains[0])
	var means, vars []float64
	for _, c := range chains {
		mu, v := meanVar(c)
		means = append(means, mu)
		vars = append(vars, v)
	}
	w := 0.0
	for _, v := range vars {
		w += v / float64(m)
	}
	varPlus := float64(n-1) / float64(n) * w
	if m > 1 {
		_, b := meanVar(means)
		varPlus += b
	}
	if !(varPlus > 0) {
		return math.NaN()
	}
	rho := func(t int) float64 {
		ac := 0.0
		for c, ch := range chains {
			s := 0.0
			for i := 0; i+t < n; i++ {
				s += (ch[i] - means[c]) * (ch[i+t] - means[c])
			}
			ac += s / float64(n) / float64(m)
		}
		return 1 - (w-ac)/varPlus
	}
	// The pairs P_k = rho_2k + rho_2k+1 (rho_0 = 1) are computed while the
	// last was positive, up to lag n-2. Those before the last computed are
	// summed, made non-increasing (Geyer's initial monotone sequence); of
	// the last, rho_2k alone is added, when positive or when P_k is not
	// negative.
	even, odd := 1.0, rho(1)
	sum, bound := 0.0, math.Inf(1)
	for t := 2; even+odd > 0 && t+1 <= n-2; t += 2 {
		p := math.Min(even+odd, bound)
		sum += p
		bound = p
		even, odd = rho(t), rho(t+1)
	}
	tau := -1 + 2*sum
	if even > 0 || even+odd >= 0 {
		tau += even
	}
	tau = math.Max(tau, 1/math.Log10(float64(m*n)))
	return float64(m*n) / tau
}
