package sampler

import (
	"fmt"
	"math"
)

// MassMatrix is a mass matrix M of the momentum, as the kernels use it.
//
// With momentum p ~ N(0, M T), SGNHT and SGHMC move theta by h M^-1 p and
// inject momentum noise of covariance M (M^1/2 z); the thermostat holds
// p'M^-1 p/D at T. State.P holds the momentum in units of its sd, q = L^-1 p
// for a factor L L' = M, so that the thermostat, the kinetic temperatures
// and the health watch read q'q/D as with unit mass. Write M^-1 = C C' with
// C = L^-T. Then the injected noise M^1/2 z is plain z in q, the position's
// velocity M^-1 p is C q, and the gradient's kick -h grad U/T on p is
// -h C' grad U/T on q. A MassMatrix is those two products:
//
//	Kick(dst, g)     = C' g   (the gradient in the momentum's units)
//	Velocity(dst, q) = C q    (M^-1 p, the position's velocity)
//
// DiagonalMass (C = M^-1/2), DenseMass (C the Cholesky factor of M^-1)
// and LowRankMass (C a diagonal times a rank-k update of the identity)
// implement it. Set one with State.SetMassMatrix. A MassMatrix is not
// changed by the kernels and may be shared by chains.
type MassMatrix interface {
	// Dim returns the dimension D.
	Dim() int
	// Kick sets dst = C' g. dst and g have length D and do not overlap.
	Kick(dst, g []float64)
	// Velocity sets dst = C q. dst and q have length D and do not overlap.
	Velocity(dst, q []float64)
}

// DiagonalMass is the diagonal mass M = diag(M): C = diag(M)^-1/2. The
// kernels step a diagonal mass (State.SetMass) in their own fused loop,
// bit for bit as before the MassMatrix interface; this type is the same
// mass through the interface (for a comparison, or a caller's own use).
type DiagonalMass []float64

// Dim returns len(m).
func (m DiagonalMass) Dim() int { return len(m) }

// Kick sets dst_i = g_i / sqrt(m_i).
func (m DiagonalMass) Kick(dst, g []float64) {
	for i, v := range m {
		dst[i] = g[i] * (1 / math.Sqrt(v))
	}
}

// Velocity sets dst_i = q_i / sqrt(m_i).
func (m DiagonalMass) Velocity(dst, q []float64) { m.Kick(dst, q) }

// DenseMass is a dense mass matrix given by the Cholesky factor C of its
// inverse, M^-1 = C C': the covariance the chain's momentum moves theta
// with (an estimate of the posterior's covariance, adapt.PrecondDense).
// Kick and Velocity are triangular products, D^2 multiply-adds each per
// step. Its fields are plain data (a checkpoint saves them).
type DenseMass struct {
	// N is the dimension D.
	N int
	// Chol is C, lower triangular, row-major N x N (the strict upper
	// triangle is zero).
	Chol []float64
}

// NewDenseMass returns the dense mass whose inverse is the symmetric
// positive-definite N x N matrix invMass (row-major; only its lower
// triangle is read), factorised by Cholesky.
func NewDenseMass(invMass []float64, n int) (*DenseMass, error) {
	if n < 1 || len(invMass) != n*n {
		return nil, fmt.Errorf("dense mass: %d values for a %d x %d matrix", len(invMass), n, n)
	}
	c := make([]float64, n*n)
	for j := 0; j < n; j++ {
		d := invMass[j*n+j]
		for k := 0; k < j; k++ {
			d -= c[j*n+k] * c[j*n+k]
		}
		if !(d > 0) || math.IsInf(d, 1) {
			return nil, fmt.Errorf("dense mass: inverse not positive definite (pivot %d is %v)", j, d)
		}
		d = math.Sqrt(d)
		c[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := invMass[i*n+j]
			for k := 0; k < j; k++ {
				s -= c[i*n+k] * c[j*n+k]
			}
			c[i*n+j] = s / d
		}
	}
	return &DenseMass{N: n, Chol: c}, nil
}

// Dim returns N.
func (m *DenseMass) Dim() int { return m.N }

// Kick sets dst = C' g: dst_j = sum_{i >= j} C_ij g_i.
func (m *DenseMass) Kick(dst, g []float64) {
	n := m.N
	clear(dst[:n])
	for i := 0; i < n; i++ {
		gi, row := g[i], m.Chol[i*n:i*n+i+1]
		for j, c := range row {
			dst[j] += c * gi
		}
	}
}

// Velocity sets dst = C q: dst_i = sum_{j <= i} C_ij q_j.
func (m *DenseMass) Velocity(dst, q []float64) {
	n := m.N
	for i := 0; i < n; i++ {
		s := 0.0
		for j, c := range m.Chol[i*n : i*n+i+1] {
			s += c * q[j]
		}
		dst[i] = s
	}
}

// check reports whether m is a usable factor: N x N, lower triangular,
// finite, with a positive diagonal.
func (m *DenseMass) check() error {
	if m.N < 1 || len(m.Chol) != m.N*m.N {
		return fmt.Errorf("dense mass: %d values for a %d x %d factor", len(m.Chol), m.N, m.N)
	}
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			c := m.Chol[i*m.N+j]
			switch {
			case math.IsNaN(c) || math.IsInf(c, 0):
				return fmt.Errorf("dense mass: factor entry (%d, %d) is %v", i, j, c)
			case j > i && c != 0:
				return fmt.Errorf("dense mass: factor entry (%d, %d) above the diagonal is %v", i, j, c)
			case j == i && !(c > 0):
				return fmt.Errorf("dense mass: factor's diagonal %d is %v", i, c)
			}
		}
	}
	return nil
}

// MaxMassRank is the largest rank of a LowRankMass.
const MaxMassRank = 64

// LowRankMass is a diagonal mass with a rank-k correction, for models too
// large for a dense one (adapt.PrecondLowRank): with S = diag(Scale) and
// U's columns u_1..u_k orthonormal,
//
//	M^-1 = S (I + sum_j (Lambda_j - 1) u_j u_j') S,
//
// the covariance whose standardised form (S^-1 M^-1 S^-1) has eigenvalue
// Lambda_j along u_j and 1 across the rest. Its factor is C = S R with the
// symmetric R = I + sum_j (sqrt(Lambda_j) - 1) u_j u_j', so Kick and
// Velocity cost 2 D k multiply-adds each (and D for S). Its fields are
// plain data (a checkpoint saves them).
type LowRankMass struct {
	// Scale is S's diagonal, positive (D values).
	Scale []float64
	// U holds the k directions, row-major D x k: U[i*k + j] is u_j's
	// coordinate i. Its columns must be orthonormal.
	U []float64
	// Lambda holds the k eigenvalues, positive.
	Lambda []float64
}

// Dim returns len(Scale).
func (m *LowRankMass) Dim() int { return len(m.Scale) }

// rank returns k.
func (m *LowRankMass) rank() int { return len(m.Lambda) }

// rotate sets dst = R x = x + U diag(sqrt(Lambda) - 1) U' x (dst may be x).
func (m *LowRankMass) rotate(dst, x []float64) {
	k := m.rank()
	var w [MaxMassRank]float64
	for i, xi := range x {
		for j, u := range m.U[i*k : i*k+k] {
			w[j] += u * xi
		}
	}
	for j, l := range m.Lambda {
		w[j] *= math.Sqrt(l) - 1
	}
	for i, xi := range x {
		s := xi
		for j, u := range m.U[i*k : i*k+k] {
			s += u * w[j]
		}
		dst[i] = s
	}
}

// Kick sets dst = C' g = R S g.
func (m *LowRankMass) Kick(dst, g []float64) {
	for i, s := range m.Scale {
		dst[i] = s * g[i]
	}
	m.rotate(dst, dst)
}

// Velocity sets dst = C q = S R q.
func (m *LowRankMass) Velocity(dst, q []float64) {
	m.rotate(dst, q)
	for i, s := range m.Scale {
		dst[i] *= s
	}
}

// check reports whether m is usable: D positive scales, k at most
// MaxMassRank positive eigenvalues, U of D x k finite values with
// orthonormal columns (to 1e-8).
func (m *LowRankMass) check() error {
	d, k := len(m.Scale), len(m.Lambda)
	if d < 1 || k > MaxMassRank || len(m.U) != d*k {
		return fmt.Errorf("low-rank mass: %d scales, %d eigenvalues (at most %d), %d direction values", d, k, MaxMassRank, len(m.U))
	}
	for i, s := range m.Scale {
		if !(s > 0) || math.IsInf(s, 1) {
			return fmt.Errorf("low-rank mass: scale %d is %v", i, s)
		}
	}
	for j, l := range m.Lambda {
		if !(l > 0) || math.IsInf(l, 1) {
			return fmt.Errorf("low-rank mass: eigenvalue %d is %v", j, l)
		}
	}
	for a := 0; a < k; a++ {
		for b := a; b < k; b++ {
			s := 0.0
			for i := 0; i < d; i++ {
				s += m.U[i*k+a] * m.U[i*k+b]
			}
			want := 0.0
			if a == b {
				want = 1
			}
			if !(math.Abs(s-want) <= 1e-8) {
				return fmt.Errorf("low-rank mass: directions %d and %d have inner product %v", a, b, s)
			}
		}
	}
	return nil
}

// SetMassMatrix sets the mass matrix of the momentum (nil: unit mass). A
// DiagonalMass is SetMass's diagonal mass; a *DenseMass or *LowRankMass
// (checked, and kept, not copied: the kernels do not change it) makes
// State.Mass nil and the kernels SGNHT, SGHMC and SGLD step with it
// (MassMatrix says how). Other implementations are used as given. The
// momentum P is in units of its sd and does not change.
func (s *State) SetMassMatrix(m MassMatrix) error {
	switch m := m.(type) {
	case nil:
		return s.SetMass(nil)
	case DiagonalMass:
		return s.SetMass(m)
	case *DenseMass:
		if m == nil {
			return s.SetMass(nil)
		}
		if err := m.check(); err != nil {
			return err
		}
	case *LowRankMass:
		if m == nil {
			return s.SetMass(nil)
		}
		if err := m.check(); err != nil {
			return err
		}
	}
	if m.Dim() != len(s.Theta) {
		return fmt.Errorf("mass of dimension %d for a state of dimension %d", m.Dim(), len(s.Theta))
	}
	s.Mass, s.invSqrtMass, s.factor = nil, nil, m
	return nil
}

// MassMatrix returns the state's mass matrix: nil for unit mass, a
// DiagonalMass (sharing State.Mass) for a diagonal one, or the
// non-diagonal mass SetMassMatrix set.
func (s *State) MassMatrix() MassMatrix {
	switch {
	case s.factor != nil:
		return s.factor
	case s.Mass != nil:
		return DiagonalMass(s.Mass)
	}
	return nil
}

// factorScratch returns the state's two scratch vectors for a
// non-diagonal mass's kick and velocity.
func (s *State) factorScratch() (kick, vel []float64) {
	if len(s.kickBuf) != len(s.Theta) {
		s.kickBuf, s.velBuf = make([]float64, len(s.Theta)), make([]float64, len(s.Theta))
	}
	return s.kickBuf, s.velBuf
}
