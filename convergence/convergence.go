package convergence

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// splitChains halves every chain (dropping a middle draw of odd lengths),
// truncated to the shortest chain's length.
func splitChains(chains [][]float64) [][]float64 {
	n := math.MaxInt
	for _, c := range chains {
		n = min(n, len(c))
	}
	half := n / 2
	if half < 2 {
		return nil
	}
	var out [][]float64
	for _, c := range chains {
		c = c[len(c)-n:]
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
	// folded: |x - median| for the tails
	var all []float64
	for _, c := range sp {
		all = append(all, c...)
	}
	sort.Float64s(all)
	med := all[len(all)/2]
	folded := make([][]float64, len(sp))
	for c, ch := range sp {
		for _, v := range ch {
			folded[c] = append(folded[c], math.Abs(v-med))
		}
	}
	return math.Max(bulk, rhat(rankNormalize(folded)))
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
	_, b := meanVar(means)
	varPlus := float64(n-1)/float64(n)*w + b
	if m == 1 {
		varPlus = w
	}
	if !(varPlus > 0) {
		return math.NaN()
	}
	// rho_t = 1 - (W - mean_c autocov_c(t)) / var+
	rho := func(t int) float64 {
		ac := 0.0
		for c, ch := range chains {
			s := 0.0
			for i := 0; i+t < n; i++ {
				s += (ch[i] - means[c]) * (ch[i+t] - means[c])
			}
			ac += s / float64(n) / float64(m)
		}
		// autocovariance at lag 0 uses the biased estimate; rescale W to match
		return 1 - (w*float64(n-1)/float64(n)-ac)/varPlus
	}
	sum := 0.0
	prev := math.Inf(1)
	for t := 0; t+1 < n; t += 2 {
		p := rho(t) + rho(t+1)
		if p < 0 {
			break
		}
		p = math.Min(p, prev) // initial monotone sequence
		prev = p
		sum += p
	}
	tau := -1 + 2*sum
	tau = math.Max(tau, 1/math.Log10(float64(m*n)))
	return float64(m*n) / tau
}
