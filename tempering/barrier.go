package tempering

import (
	"fmt"
	"math"
	"sync"
)

// Barrier is the communication barrier of a temperature ladder (Syed,
// Bouchard-Cote, Deligiannidis and Doucet, JRSSB 2021): the cumulative
// Lambda(beta) = integral of the local barrier lambda over inverse
// temperatures from the ladder's top (hottest) rung up to beta, estimated by
// summing the adjacent pairs' swap rejection rates and interpolated
// monotonically in between (Fritsch-Carlson, as Pigeons.jl does).
//
// The rejection rates are Metropolis-equivalent, 1 - min(1, exp(deltaE))
// averaged over exchange attempts (see MetropolisRejection): the theory of
// the barrier is written for Metropolis swaps. Lambda(1) is the global
// barrier; non-reversible PT needs about 2 Lambda rungs, and its round-trip
// rate is at most 1/(2 + 2 Lambda) per exchange round.
type Barrier struct {
	Betas  []float64 // knots: inverse temperatures, increasing (hottest rung first, 1 last)
	Cum    []float64 // Lambda at the knots: 0 at Betas[0], the global barrier at 1
	slopes []float64 // the interpolant's derivatives at the knots
}

// MetropolisRejection returns the rejection probability of a Metropolis swap
// with log acceptance ratio deltaE: 1 - min(1, exp(deltaE)).
func MetropolisRejection(deltaE float64) float64 {
	if deltaE >= 0 {
		return 0
	}
	return -math.Expm1(deltaE)
}

// NewBarrier estimates the barrier of ladder temps (T_1 = 1 < ... < T_R)
// from reject[p], the mean Metropolis-equivalent rejection rate of the pair
// of rungs p and p+1.
func NewBarrier(temps, reject []float64) (*Barrier, error) {
	return newBarrier(temps, reject, 1)
}

// newBarrier is NewBarrier for barrier increments per pair in [0, maxInc]:
// rejection rates (maxInc 1), or pair distances that may exceed 1 (see
// driver.PairDistance).
func newBarrier(temps, inc []float64, maxInc float64) (*Barrier, error) {
	reject := inc
	if err := CheckLadder(temps); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	r := len(temps)
	if r < 2 || len(reject) != r-1 {
		return nil, fmt.Errorf("barrier: %d rejection rates for %d rungs (need one per adjacent pair, at least 2 rungs)", len(reject), r)
	}
	b := &Barrier{Betas: make([]float64, r), Cum: make([]float64, r)}
	for k := 0; k < r; k++ {
		b.Betas[k] = 1 / temps[r-1-k]
	}
	for k := 1; k < r; k++ {
		rj := reject[r-1-k] // pair (r-1-k, r-k) joins knots k-1 and k
		if math.IsNaN(rj) || rj < 0 || rj > maxInc {
			return nil, fmt.Errorf("barrier: rejection rate %v of pair %d is not in [0, %g]", rj, r-1-k, maxInc)
		}
		b.Cum[k] = b.Cum[k-1] + rj
	}
	b.slopes = fritschCarlsonSlopes(b.Betas, b.Cum)
	return b, nil
}

// Global returns Lambda(1), the ladder's global communication barrier.
func (b *Barrier) Global() float64 { return b.Cum[len(b.Cum)-1] }

// segment returns the knot interval holding beta (clamped to the ends).
func (b *Barrier) segment(beta float64) int {
	k := 0
	for k+2 < len(b.Betas) && beta > b.Betas[k+1] {
		k++
	}
	return k
}

// At returns Lambda(beta) for beta in [Betas[0], 1]; beyond the knots the
// interpolant is extended linearly with the end slopes.
func (b *Barrier) At(beta float64) float64 {
	v, _ := b.eval(beta)
	return v
}

// Local returns the local barrier lambda(beta) = dLambda/dbeta.
func (b *Barrier) Local(beta float64) float64 {
	_, d := b.eval(beta)
	return d
}

// eval returns the interpolant and its derivative at beta.
func (b *Barrier) eval(beta float64) (float64, float64) {
	n := len(b.Betas)
	if beta <= b.Betas[0] {
		return b.Cum[0] + b.slopes[0]*(beta-b.Betas[0]), b.slopes[0]
	}
	if beta >= b.Betas[n-1] {
		return b.Cum[n-1] + b.slopes[n-1]*(beta-b.Betas[n-1]), b.slopes[n-1]
	}
	k := b.segment(beta)
	return hermite(b.Betas[k], b.Betas[k+1], b.Cum[k], b.Cum[k+1], b.slopes[k], b.slopes[k+1], beta)
}

// Inverse returns the beta in [Betas[0], 1] with Lambda(beta) = l, by
// bisection on the monotone interpolant (l is clamped to [0, Global()]).
func (b *Barrier) Inverse(l float64) float64 {
	n := len(b.Betas)
	if l <= b.Cum[0] {
		return b.Betas[0]
	}
	if l >= b.Cum[n-1] {
		return b.Betas[n-1]
	}
	k := 0
	for k+2 < n && l > b.Cum[k+1] {
		k++
	}
	lo, hi := b.Betas[k], b.Betas[k+1]
	for i := 0; i < 100 && hi-lo > 1e-15*hi; i++ {
		mid := 0.5 * (lo + hi)
		if b.At(mid) < l {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

// EqualBarrierLadder returns r temperatures from 1 to the barrier's top
// temperature 1/Betas[0] placed at equal steps of Lambda, so that every
// adjacent pair has the same expected rejection rate Global()/(r-1): the
// ladder that maximises non-reversible PT's round-trip rate (Syed et al.
// 2021, section 5).
func (b *Barrier) EqualBarrierLadder(r int) ([]float64, error) {
	if r < 2 {
		return nil, fmt.Errorf("barrier: a ladder needs at least 2 rungs, got %d", r)
	}
	temps := make([]float64, r)
	temps[0], temps[r-1] = 1, 1/b.Betas[0]
	g := b.Global()
	for j := 1; j < r-1; j++ {
		// rung j sits (r-1-j)/(r-1) of the way from the top in Lambda
		temps[j] = 1 / b.Inverse(g*float64(r-1-j)/float64(r-1))
	}
	return temps, strictlyIncreasing(temps)
}

// Extended returns the barrier continued linearly, with the local barrier
// of its hottest knot, down to the inverse temperature beta < Betas[0], as a
// new barrier whose first knot is beta (Lambda measured from there).
func (b *Barrier) Extended(beta float64) *Barrier {
	return b.extendedWith(beta, b.slopes[0])
}

// extendedWith is Extended with the barrier extended at local barrier
// slope.
func (b *Barrier) extendedWith(beta, slope float64) *Barrier {
	if beta >= b.Betas[0] {
		return b
	}
	add := slope * (b.Betas[0] - beta)
	e := &Barrier{Betas: append([]float64{beta}, b.Betas...), Cum: []float64{0}}
	for _, c := range b.Cum {
		e.Cum = append(e.Cum, c+add)
	}
	e.slopes = fritschCarlsonSlopes(e.Betas, e.Cum)
	return e
}

// FreeTopLadder returns the widest ladder of r rungs whose every adjacent
// pair has Metropolis-equivalent rejection pairReject: the hottest rung sits
// where the barrier from it to beta = 1 is (r-1) pairReject, and the rungs
// between are equally spaced in Lambda. When the estimated barrier is too
// small to reach that width, it is extrapolated beyond the current top with
// the top's local barrier, but the top temperature at most quadruples per
// call (and stays below maxT), so repeated tuning rounds approach the width
// from estimates rather than from a long extrapolation.
func (b *Barrier) FreeTopLadder(r int, pairReject, maxT float64) ([]float64, error) {
	if r < 2 {
		return nil, fmt.Errorf("barrier: a ladder needs at least 2 rungs, got %d", r)
	}
	if !(pairReject > 0 && pairReject < 1) {
		return nil, fmt.Errorf("barrier: target rejection %v must be in (0, 1)", pairReject)
	}
	want := float64(r-1) * pairReject
	g := b.Global()
	ext := b
	if want > g {
		top := b.Betas[0]
		floor := math.Max(top/4, 1/maxT)
		beta := floor
		// the top's local barrier: the interpolant's end slope, or the top
		// pair's own mean density when larger (the shape-preserving end
		// slope falls to 0 when the top pair's increment is much smaller
		// than the next one's, and a top extrapolated on it runs away)
		s := math.Max(b.slopes[0], (b.Cum[1]-b.Cum[0])/(b.Betas[1]-b.Betas[0]))
		if s > 0 {
			beta = math.Max(top-(want-g)/s, floor)
		}
		ext = b.extendedWith(beta, s)
		g = ext.Global()
	}
	from := ext.Inverse(math.Max(g-want, 0)) // the new top rung's beta
	temps := make([]float64, r)
	temps[0], temps[r-1] = 1, 1/from
	span := ext.Global() - ext.At(from)
	for j := 1; j < r-1; j++ {
		temps[j] = 1 / ext.Inverse(ext.At(from)+span*float64(r-1-j)/float64(r-1))
	}
	return temps, strictlyIncreasing(temps)
}

// RecommendedRungs returns the number of rungs non-reversible PT needs for a
// global barrier lambda: about 2 Lambda (Syed et al. 2021; Pigeons.jl's rule
// of thumb), and at least 2.
func RecommendedRungs(lambda float64) int {
	return max(2, int(math.Ceil(2*lambda)))
}

func strictlyIncreasing(temps []float64) error {
	for j := 1; j < len(temps); j++ {
		if !(temps[j] > temps[j-1]) {
			return fmt.Errorf("barrier: adapted ladder %v is not strictly increasing (a flat barrier: no rejections to place rungs by)", temps)
		}
	}
	return nil
}

// fritschCarlsonSlopes returns derivatives at the knots (x increasing, y
// non-decreasing) that make the piecewise cubic Hermite interpolant monotone
// (Fritsch and Carlson 1980; weighted harmonic means inside, as in PCHIP,
// and a shape-preserving three-point formula at the ends).
func fritschCarlsonSlopes(x, y []float64) []float64 {
	n := len(x)
	m := make([]float64, n)
	if n == 2 {
		d := (y[1] - y[0]) / (x[1] - x[0])
		m[0], m[1] = d, d
		return m
	}
	h := make([]float64, n-1)
	d := make([]float64, n-1)
	for k := 0; k < n-1; k++ {
		h[k] = x[k+1] - x[k]
		d[k] = (y[k+1] - y[k]) / h[k]
	}
	for k := 1; k < n-1; k++ {
		if d[k-1] <= 0 || d[k] <= 0 {
			continue // a flat neighbour: a zero slope keeps the curve monotone
		}
		w1, w2 := 2*h[k]+h[k-1], h[k]+2*h[k-1]
		m[k] = (w1 + w2) / (w1/d[k-1] + w2/d[k])
	}
	end := func(h0, h1, d0, d1 float64) float64 {
		s := ((2*h0+h1)*d0 - h0*d1) / (h0 + h1)
		switch {
		case s <= 0:
			return 0
		case d1 <= 0 && s > 3*d0:
			return 3 * d0
		}
		return s
	}
	m[0] = end(h[0], h[1], d[0], d[1])
	m[n-1] = end(h[n-2], h[n-3], d[n-2], d[n-3])
	return m
}

// hermite evaluates the cubic Hermite segment between (x0, y0, m0) and
// (x1, y1, m1) at x, with its derivative.
func hermite(x0, x1, y0, y1, m0, m1, x float64) (float64, float64) {
	h := x1 - x0
	t := (x - x0) / h
	t2, t3 := t*t, t*t*t
	v := (2*t3-3*t2+1)*y0 + (t3-2*t2+t)*h*m0 + (-2*t3+3*t2)*y1 + (t3-t2)*h*m1
	dv := ((6*t2-6*t)*y0+(-6*t2+6*t)*y1)/h + (3*t2-4*t+1)*m0 + (3*t2-2*t)*m1
	return v, dv
}

// BarkerToMetropolisRejection maps a Barker swap acceptance rate a in
// (0, 1/2) to the Metropolis rejection rate of the same pair of rungs, under
// the standard model of a swap's log ratio between equilibrium replicas,
// deltaE ~ N(-mu, 2 mu) (exact for Gaussian energies, and the large-dimension
// limit in general). Barker's test accepts 1/(1+exp(-deltaE)), between half
// and all of Metropolis's min(1, exp(deltaE)), and never more than 1/2 on
// average, so a target of observed Barker acceptance is translated to the
// rejection that the barrier adds up.
func BarkerToMetropolisRejection(a float64) (float64, error) {
	if !(a > 0 && a < 0.5) {
		return 0, fmt.Errorf("Barker swap acceptance target %v must be in (0, 0.5): Barker's test accepts at most half of the swaps between equilibrium replicas", a)
	}
	if v, ok := barkerMemo.Load(a); ok { // tuning asks at every round
		return v.(float64), nil
	}
	v := barkerToMetropolisRejection(a)
	barkerMemo.Store(a, v)
	return v, nil
}

// barkerMemo caches BarkerToMetropolisRejection by target.
var barkerMemo sync.Map

func barkerToMetropolisRejection(a float64) float64 {
	lo, hi := 0.0, 1e4 // mu
	for i := 0; i < 200; i++ {
		mid := 0.5 * (lo + hi)
		if barkerAcceptance(mid) > a {
			lo = mid
		} else {
			hi = mid
		}
	}
	mu := 0.5 * (lo + hi)
	return 1 - MetropolisAcceptance(mu)
}

// MetropolisAcceptance returns E[min(1, exp(X))] for X ~ N(-mu, 2 mu):
// 2 Phi(-sqrt(mu/2)), a Metropolis swap's acceptance between equilibrium
// replicas whose log swap ratio has mean -mu.
func MetropolisAcceptance(mu float64) float64 {
	return math.Erfc(math.Sqrt(mu/2) / math.Sqrt2)
}

// barkerAcceptance returns E[1/(1+exp(-X))] for X ~ N(-mu, 2 mu), by the
// midpoint rule over +-10 standard deviations.
func barkerAcceptance(mu float64) float64 {
	if mu == 0 {
		return 0.5
	}
	sd := math.Sqrt(2 * mu)
	const n = 4000
	s := 0.0
	for i := 0; i < n; i++ {
		z := -10 + 20*(float64(i)+0.5)/n
		s += Logistic(-mu+sd*z) * math.Exp(-0.5*z*z)
	}
	return s * (20.0 / n) / math.Sqrt(2*math.Pi)
}
