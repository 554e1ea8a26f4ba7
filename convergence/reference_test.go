package convergence

import (
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The reference computations of Vehtari et al. (2021), written from the
// paper's equations as Stan's posterior package and ArviZ implement them
// (equal-length chains): split the chains in halves (a middle draw of odd
// lengths dropped), rank-normalise z = Phi^-1((r - 3/8)/(S + 1/4)) with
// average ranks of ties, and fold the draws around the median of all the
// draws (averaging the middle two of an even number) for the tail R-hat.

func refSplit(x [][]float64) [][]float64 {
	var out [][]float64
	for _, c := range x {
		h := len(c) / 2
		out = append(out, c[:h], c[len(c)-h:])
	}
	return out
}

func refZ(x [][]float64) [][]float64 {
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	s := float64(len(all))
	out := make([][]float64, len(x))
	for m, c := range x {
		for _, v := range c {
			less, eq := 0, 0
			for _, u := range all {
				if u < v {
					less++
				} else if u == v {
					eq++
				}
			}
			r := float64(less) + float64(eq+1)/2
			out[m] = append(out[m], distuv.UnitNormal.Quantile((r-0.375)/(s+0.25)))
		}
	}
	return out
}

// refWVar returns W, the mean within-chain variance, and var+ = (N-1)/N W +
// B/N (eqs. 3-4).
func refWVar(x [][]float64) (w, varPlus float64, means []float64) {
	n := float64(len(x[0]))
	for _, c := range x {
		mu, v := stat.MeanVariance(c, nil)
		means = append(means, mu)
		w += v / float64(len(x))
	}
	_, bn := stat.MeanVariance(means, nil)
	return w, (n-1)/n*w + bn, means
}

func refRHat(x [][]float64) float64 {
	w, vp, _ := refWVar(x)
	return math.Sqrt(vp / w)
}

func refMedian(x [][]float64) float64 {
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	sort.Float64s(all)
	k := len(all)
	if k%2 == 1 {
		return all[k/2]
	}
	return (all[k/2-1] + all[k/2]) / 2
}

func refSplitRHat(x [][]float64) float64 {
	bulk := refRHat(refZ(refSplit(x)))
	med := refMedian(x)
	folded := make([][]float64, len(x))
	for m, c := range x {
		for _, v := range c {
			folded[m] = append(folded[m], math.Abs(v-med))
		}
	}
	return math.Max(bulk, refRHat(refZ(refSplit(folded))))
}

// refESS is eqs. 10-11 with Geyer's initial positive and monotone
// sequences: rho_t = 1 - (W - mean_m acov_m(t)) / var+, acov_m(t) the
// biased (1/N) autocovariance of chain m; the sum truncated at the first
// pair rho_{2k} + rho_{2k+1} that is negative (pairs up to lag N-2), the
// pairs made non-increasing, and the first negative pair's even term added
// once when it is positive; tau at least 1/log10(MN).
func refESS(x [][]float64) float64 {
	mc, n := len(x), len(x[0])
	w, vp, means := refWVar(x)
	rho := func(t int) float64 {
		ac := 0.0
		for m, c := range x {
			for i := 0; i+t < n; i++ {
				ac += (c[i] - means[m]) * (c[i+t] - means[m]) / float64(n) / float64(mc)
			}
		}
		return 1 - (w-ac)/vp
	}
	r := make([]float64, n)
	r[0], r[1] = 1, rho(1)
	even, odd := 1.0, r[1]
	t := 1
	for t < n-3 && even+odd > 0 {
		even, odd = rho(t+1), rho(t+2)
		if even+odd >= 0 {
			r[t+1], r[t+2] = even, odd
		}
		t += 2
	}
	maxT := t - 2
	if even > 0 {
		r[maxT+1] = even
	}
	for t := 1; t <= maxT-2; t += 2 {
		if r[t+1]+r[t+2] > r[t-1]+r[t] {
			r[t+1] = (r[t-1] + r[t]) / 2
			r[t+2] = r[t+1]
		}
	}
	sum := 0.0
	for _, v := range r[:maxT+1] {
		sum += v
	}
	tau := -1 + 2*sum + r[maxT+1]
	s := float64(mc * n)
	return s / math.Max(tau, 1/math.Log10(s))
}

// refChains are small fixed chains: an autocorrelated pair, a pair with
// ties, one of odd length, and a pair whose draws sit either side of an
// even-count median (where the folded ranks depend on taking the median
// as the average of the middle two).
var refChains = map[string][][]float64{
	"ar": {
		{0.3, 0.5, 0.9, 1.2, 1.0, 0.7, 0.2, -0.1, -0.4, -0.2, 0.1, 0.6, 0.8, 0.4, 0.0, -0.3},
		{-0.6, -0.2, 0.1, 0.5, 0.9, 1.4, 1.1, 0.8, 0.3, 0.4, 0.7, 0.2, -0.1, -0.5, -0.8, -0.4},
	},
	"ties": {
		{1, 2, 2, 3, 1, 1, 2, 3, 3, 2, 1, 2},
		{2, 2, 3, 3, 3, 2, 1, 1, 2, 2, 3, 1},
	},
	"odd": {
		{0.1, 1.3, -0.7, 0.4, 2.2, -1.1, 0.6, 0.9, -0.2, 1.7, 0.05},
		{1.1, 0.2, 0.8, -0.3, 1.9, 0.7, -0.9, 0.35, 1.25, 0.15, 0.45},
	},
	"median": {
		{0, 0.9, 1.1, 5, 0.95, 4, -3, 1.05},
		{2, -2, 0.97, 1.2, -1, 1.03, 3, 0.8},
	},
}

// TestReference checks SplitRHat and BulkESS against the reference
// computations on small fixed chains.
func TestReference(t *testing.T) {
	for name, x := range refChains {
		if got, want := SplitRHat(x), refSplitRHat(x); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: SplitRHat %.12g, reference %.12g", name, got, want)
		}
		if got, want := BulkESS(x), refESS(refZ(refSplit(x))); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: BulkESS %.12g, reference %.12g", name, got, want)
		}
	}
}
