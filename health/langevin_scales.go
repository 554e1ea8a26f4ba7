package health

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// LangevinScales is the number of block lengths, 4^0 to 4^(LangevinScales-1)
// steps, over which the SGLD watch measures the gradient noise's long-run
// variance (ScaleSums).
const LangevinScales = 6

// ScaleSums are the SGLD watch's sums over blocks of L steps of the
// whitened gradient G at each step's start and of the position y there:
// the blocks' sums' outer products (D x D for chains of at most
// MaxCoordUnits coordinates, else their diagonals) and sums. With the
// measured curvature H, the blocks' sums of G - H y are the gradient
// noise's sums over L steps, whose variance over L is the noise's variance
// per step as a chain relaxing over about L/2 steps feels it: with
// minibatches drawn in epochs successive noises are anti-correlated (an
// epoch's sum to the full gradient), and a direction that relaxes over
// many batches sees far less of them than their per-step variance.
type ScaleSums struct {
	L, Blocks, N int
	BG, BY       []float64 // the current block's sums
	GG, GY, YY   []float64 // sums of the complete blocks' outer products
	MG, MY       []float64 // sums of the complete blocks' sums
}

// newScales returns the watch's scale sums for d coordinates.
func newScales(d int) []ScaleSums {
	m := d
	if d <= MaxCoordUnits {
		m = d * d
	}
	out := make([]ScaleSums, LangevinScales)
	for k := range out {
		out[k] = ScaleSums{L: 1 << (2 * k), BG: make([]float64, d), BY: make([]float64, d), GG: make([]float64, m), GY: make([]float64, m),
			YY: make([]float64, m), MG: make([]float64, d), MY: make([]float64, d)}
	}
	return out
}

// add adds a step's G and y (at its start).
func (s *ScaleSums) add(g, y []float64) {
	for i, v := range g {
		s.BG[i] += v
		s.BY[i] += y[i]
	}
	if s.N++; s.N < s.L {
		return
	}
	d := len(g)
	dense := len(s.GG) == d*d && d > 1
	for a, ga := range s.BG {
		ya := s.BY[a]
		s.MG[a] += ga
		s.MY[a] += ya
		if !dense {
			s.GG[a] += ga * ga
			s.GY[a] += ga * ya
			s.YY[a] += ya * ya
			continue
		}
		row := a * d
		for b := 0; b < d; b++ {
			s.GG[row+b] += ga * s.BG[b]
			s.GY[row+b] += ga * s.BY[b]
			s.YY[row+b] += ya * s.BY[b]
		}
	}
	for i := range s.BG {
		s.BG[i], s.BY[i] = 0, 0
	}
	s.N = 0
	s.Blocks++
}

// centered returns the centered outer-product sum m - u v'/n (D x D or
// its diagonal).
func centered(m, u, v []float64, n float64) []float64 {
	out := append([]float64(nil), m...)
	d := len(u)
	if len(m) == d*d && d > 1 {
		for a := range u {
			for b := range v {
				out[a*d+b] -= u[a] * v[b] / n
			}
		}
		return out
	}
	for a := range u {
		out[a] -= u[a] * v[a] / n
	}
	return out
}

// noise returns the gradient noise's long-run covariance per step at
// this scale, (sums of (B_G - H B_y)(B_G - H B_y)' centered)/((blocks -
// 1) L), with the curvature h (D x D), or its diagonal with hd (large
// chains: then only the diagonal, and the other coordinates' part of a
// coordinate's gradient reads as noise), and the position's block sums'
// covariance over L, by which an error dH of the curvature adds dH^2 times
// it to the noise; nil with fewer than 8 blocks.
func (s *ScaleSums) noise(h *mat.SymDense, hd []float64) (noise, ycov []float64) {
	if s.Blocks < 8 {
		return nil, nil
	}
	nb := float64(s.Blocks)
	gg, gy, yy := centered(s.GG, s.MG, s.MG, nb), centered(s.GY, s.MG, s.MY, nb), centered(s.YY, s.MY, s.MY, nb)
	scale := 1 / ((nb - 1) * float64(s.L))
	ycov = make([]float64, len(yy))
	for i, v := range yy {
		ycov[i] = v * scale
	}
	d := len(s.MG)
	if h == nil {
		out := make([]float64, d)
		for i, hi := range hd {
			out[i] = (gg[i] - 2*hi*gy[i] + hi*hi*yy[i]) * scale
		}
		return out, ycov
	}
	GG, GY, YY := mat.NewDense(d, d, gg), mat.NewDense(d, d, gy), mat.NewDense(d, d, yy)
	var t, r mat.Dense
	t.Mul(GY, h) // sum B_G (H B_y)'
	r.Sub(GG, &t)
	r.Sub(&r, t.T())
	t.Mul(h, YY)
	t.Mul(&t, h)
	r.Add(&r, &t)
	r.Scale(scale, &r)
	return r.RawMatrix().Data, ycov
}

// longRun returns a unit's gradient-noise variance per step as a chain of
// contraction a feels it: the long-run variance at block length L =
// (2 - a)/a (the exponential weights (1 - a)^|k| of the noise's
// autocovariances that a stationary AR(1) of contraction a applies sum to
// it, as the blocks' triangular weights sum to L), interpolated in log L
// between the scales measured, from per(k), the unit's variance at scale
// k (NaN: not measured), and its relative standard error sqrt(2/blocks);
// ok false when no scale is measured. per also returns the unit's
// position's block-sum variance over L at scale k, which leak multiplies
// into the noise's tolerance (leak: the curvature's squared tolerance);
// the tolerance's statistical part is tolSE standard errors.
func longRun(a, leak, tolSE float64, scales []ScaleSums, per func(k int) (float64, float64)) (v, tol float64, ok bool) {
	want := math.Log(math.Max(LangevinMaxL(), 1))
	if a > 0 && a < 2 {
		want = math.Log(math.Min(math.Max((2-a)/a, 1), LangevinMaxL()))
	}
	lo, hi := -1, -1
	for k := range scales {
		if n, _ := per(k); math.IsNaN(n) {
			continue
		}
		if math.Log(float64(scales[k].L)) <= want {
			lo = k
		} else if hi < 0 {
			hi = k
		}
	}
	switch {
	case lo < 0 && hi < 0:
		return 0, 0, false
	case lo < 0:
		lo = hi
	case hi < 0:
		hi = lo
	}
	vl, yl := per(lo)
	vh, yh := per(hi)
	x := 0.0
	if lo != hi {
		x = (want - math.Log(float64(scales[lo].L))) / (math.Log(float64(scales[hi].L)) - math.Log(float64(scales[lo].L)))
	}
	v = vl + x*(vh-vl)
	tol = tolSE*math.Sqrt(2/float64(scales[hi].Blocks))*math.Abs(v) + leak*math.Max(yl, yh)
	return v, tol, true
}

// LangevinMaxL returns the longest block length of the scales, 4^(LangevinScales-1).
func LangevinMaxL() float64 { return float64(int(1) << (2 * (LangevinScales - 1))) }
