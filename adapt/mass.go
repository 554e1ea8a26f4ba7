package adapt

import (
	"fmt"
	"math"
	"slices"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// Preconditioner is how Mass estimates a diagonal mass matrix M = diag(m)
// for each chain during burn-in (sampler.State.SetMass). The mass is re-estimated at the
// end of windows of doubling length, ending at 10%, 20%, 40% and 80% of
// the burn-in (MassWindowEnds), and then frozen: the last 20% of burn-in
// and the whole sampling phase run one fixed M, so the kept samples come
// from a chain that is exact (to the integrator's order) for that M.
// Nothing adapts after burn-in, so no correction term (Li et al. 2016's
// Gamma for pSGLD's always-adapting preconditioner) is needed.
type Preconditioner int

const (
	// PrecondNone keeps unit mass: the zero value, and what runs that do
	// not record a preconditioner resume with.
	PrecondNone Preconditioner = iota
	// PrecondRMSprop estimates m_i from the window's mean squared
	// stochastic gradient, E[g~_i^2] (pSGLD's and RMSprop's second moment,
	// used whole rather than its square root: at equilibrium E[g_i^2] is
	// the mean curvature of U/T in coordinate i, plus the gradient noise's
	// variance, so noisy coordinates get heavier).
	PrecondRMSprop
	// PrecondVariance estimates m_i as 1/Var[theta_i] over the window,
	// as Stan's warm-up does.
	PrecondVariance
	// PrecondDense estimates a dense mass, M^-1 the covariance of theta
	// over the window (shrunk toward its diagonal), as Stan's dense
	// metric does (DenseMassFrom): for models of up to a few hundred
	// coordinates (D^2 multiply-adds a step, twice; the estimate D^2/2 a
	// step in burn-in and an eigen-decomposition and a Cholesky
	// factorisation, D^3, per window).
	PrecondDense
	// PrecondLowRank estimates a diagonal mass, 1/Var[theta_i] as
	// PrecondVariance, with a rank-k correction along the top k
	// eigen-directions of the window's correlation matrix
	// (LowRankMassFrom), for large models: 4 D k multiply-adds a step,
	// and in burn-in a subspace iteration on the draws of 2 D (k + 10) a
	// step (Subspace).
	PrecondLowRank
)

// String returns "none", "rmsprop", "variance", "dense" or "lowrank".
func (p Preconditioner) String() string {
	switch p {
	case PrecondNone:
		return "none"
	case PrecondRMSprop:
		return "rmsprop"
	case PrecondVariance:
		return "variance"
	case PrecondDense:
		return "dense"
	case PrecondLowRank:
		return "lowrank"
	}
	return fmt.Sprintf("Preconditioner(%d)", int(p))
}

// ParsePreconditioner returns the Preconditioner named "none",
// "rmsprop", "variance", "dense" or "lowrank" ("" is none).
func ParsePreconditioner(name string) (Preconditioner, error) {
	switch name {
	case "none", "":
		return PrecondNone, nil
	case "rmsprop":
		return PrecondRMSprop, nil
	case "variance":
		return PrecondVariance, nil
	case "dense":
		return PrecondDense, nil
	case "lowrank":
		return PrecondLowRank, nil
	}
	return 0, fmt.Errorf("preconditioner %q: expected none, rmsprop, variance, dense or lowrank", name)
}

// Diagonal reports whether p's mass is diagonal (or unit: none).
func (p Preconditioner) Diagonal() bool { return p != PrecondDense && p != PrecondLowRank }

// MassScale is how an estimated mass is normalised: which coordinates
// keep unit mass.
type MassScale int

const (
	// MassScaleWidest (the zero value, what runs that do not record a
	// scale ran with) gives the widest coordinates unit mass and every
	// other a heavier one (MassFromPrecision): at the same learning rate no
	// coordinate moves faster than with unit mass, and the step must grow
	// for the mass to speed anything up; but the burn-in's first window,
	// before any estimate, runs at unit mass with that step, so it cannot
	// grow past the unit-mass chain's stable step within a run.
	MassScaleWidest MassScale = iota
	// MassScaleStiffest gives the stiffest coordinates unit mass and every
	// other a lighter one (MassFromPrecisionStiffest): the learning rate
	// keeps its unit-mass meaning (a step stable with unit mass keeps the
	// stiffest coordinates where they were), and every other coordinate
	// moves at the stiffest one's pace. On issue 43's posteriordb
	// regressions, whose coordinates' sds are 10^2 to 10^5 apart, it is
	// what lets a diagonal mass speed the chain up (docs/posterior-checks.md).
	MassScaleStiffest
)

// String returns "widest" or "stiffest".
func (s MassScale) String() string {
	switch s {
	case MassScaleWidest:
		return "widest"
	case MassScaleStiffest:
		return "stiffest"
	}
	return fmt.Sprintf("MassScale(%d)", int(s))
}

// ParseMassScale returns the MassScale named "widest" or "stiffest" (""
// is widest).
func ParseMassScale(name string) (MassScale, error) {
	switch name {
	case "widest", "":
		return MassScaleWidest, nil
	case "stiffest":
		return MassScaleStiffest, nil
	}
	return 0, fmt.Errorf("mass scale %q: expected widest or stiffest", name)
}

// MassFrom returns the mass of per-coordinate curvature estimates v under
// the scale s: MassFromPrecision or MassFromPrecisionStiffest.
func (s MassScale) MassFrom(v []float64) []float64 {
	if s == MassScaleStiffest {
		return MassFromPrecisionStiffest(v)
	}
	return MassFromPrecision(v)
}

// MassWindowEnds returns the steps at which the mass is re-estimated for a
// burn-in of burnIn steps: 10%, 20%, 40% and 80% of it (windows of 10%,
// 10%, 20% and 40%), those that are at least a step past the previous one.
func MassWindowEnds(burnIn int) []int {
	var ends []int
	prev := 0
	for _, f := range []float64{0.1, 0.2, 0.4, 0.8} {
		e := int(f * float64(burnIn))
		if e >= prev+2 {
			ends = append(ends, e)
			prev = e
		}
	}
	return ends
}

// MassEstimate is one rung's running estimate of its mass over the current
// window: plain data, checkpointed with the run. Count steps are summed:
// for PrecondRMSprop, SumSq sums the squared stochastic gradient; for
// PrecondVariance, PrecondDense, PrecondLowRank, and for PrecondRMSprop
// under MassScaleStiffest (its lower bound, CurvatureFloor), Mean and M2
// are Welford's running mean and sum of squared deviations of theta. For
// PrecondDense, Cross is the sum of the deviations' products (the
// co-moment, lower triangle packed by rows: D (D+1)/2 values); for
// PrecondLowRank, Sub is the subspace iteration's state. In a dense
// mass's first windows (GradientWindows) GradCross sums the outer
// products of the stochastic gradients, g g' (packed as Cross).
type MassEstimate struct {
	Count     int
	SumSq     []float64 `json:",omitempty"`
	Mean, M2  []float64 `json:",omitempty"`
	Cross     []float64 `json:",omitempty"`
	GradCross []float64 `json:",omitempty"`
	Sub       *Subspace `json:",omitempty"`

	// the last step's deviations, x - Mean before it: scratch
	delta []float64
}

// reset starts a window of an estimate of dim coordinates; bounded adds
// the positions' variance to an rmsprop estimate (boundsMass); rank is a
// low-rank mass's k.
func (e *MassEstimate) reset(p Preconditioner, dim int, bounded bool, rank int) {
	e.Count = 0
	e.SumSq, e.Mean, e.M2, e.Cross, e.GradCross, e.Sub = nil, nil, nil, nil, nil, nil
	switch p {
	case PrecondRMSprop:
		e.SumSq = make([]float64, dim)
		if bounded {
			e.Mean, e.M2 = make([]float64, dim), make([]float64, dim)
		}
	case PrecondVariance:
		e.Mean, e.M2 = make([]float64, dim), make([]float64, dim)
	case PrecondDense:
		e.Mean, e.M2 = make([]float64, dim), make([]float64, dim)
		e.Cross = make([]float64, dim*(dim+1)/2)
	case PrecondLowRank:
		e.Mean, e.M2 = make([]float64, dim), make([]float64, dim)
		e.Sub = newSubspace(dim, sketchCols(dim, rank))
	}
}

// CurvatureFloor returns the window's lower bound on each coordinate's
// mean squared gradient of U at temperature temp, temp^2 / Var[theta_i]
// (+Inf for a coordinate that did not move; nil without the positions'
// variance or with fewer than 2 steps). It holds for any smooth posterior
// in equilibrium: E[theta_i d_i log p] = -1 (integration by parts), so by
// Cauchy-Schwarz Var[theta_i] E[(d_i log p)^2] >= 1, with equality only
// when theta_i is uncorrelated with the rest (and Gaussian); minibatch
// noise only adds to E[g~_i^2]. Out of equilibrium it errs the safe way: a
// coordinate that has not yet spread over its posterior, whose gradients
// are small and whose rmsprop estimate is too low (issue 43: earnings'
// coefficients, masses 40 times too light), has a small Var[theta_i] and
// so a high floor.
func (e *MassEstimate) CurvatureFloor(temp float64) []float64 {
	if e.Count < 2 || len(e.M2) == 0 {
		return nil
	}
	f := make([]float64, len(e.M2))
	for i, m2 := range e.M2 {
		f[i] = temp * temp * float64(e.Count-1) / m2
	}
	return f
}

// observe adds position theta to a variance estimate.
func (e *MassEstimate) observe(theta []float64) {
	e.Count++
	n := float64(e.Count)
	for i, x := range theta {
		d := x - e.Mean[i]
		e.Mean[i] += d / n
		e.M2[i] += d * (x - e.Mean[i])
	}
}

// precision returns the window's per-coordinate estimate v of the
// curvature, up to a common factor: E[g~_i^2] or 1/Var[theta_i] (+Inf for
// a coordinate that did not move).
func (e *MassEstimate) precision(p Preconditioner) []float64 {
	var v []float64
	switch p {
	case PrecondRMSprop:
		v = make([]float64, len(e.SumSq))
		for i, s := range e.SumSq {
			v[i] = s / float64(e.Count)
		}
	case PrecondVariance:
		v = make([]float64, len(e.M2))
		for i, m2 := range e.M2 {
			v[i] = float64(e.Count-1) / m2
		}
	}
	return v
}

// MaxMass caps a coordinate's mass (a coordinate whose estimate is 0 or
// infinite gets 1 or MaxMass).
const MaxMass = 1e12

// MassFromPrecision returns the diagonal mass of per-coordinate curvature
// estimates v: m_i = v_i / v_ref, at least 1 and at most MaxMass, where
// v_ref is the 1st percentile of the positive finite v (their smallest
// below 100 coordinates). So the widest coordinates keep unit mass and
// every other coordinate is slowed to their frequency: in the coordinates
// phi = M^1/2 theta the curvatures are v_ref-like in every direction, and
// at the same step the preconditioned chain's step is, in every
// coordinate, at most the unit-mass chain's (its integration error and
// gradient noise per step no larger); the step can then grow until the
// widest directions' omega h, no longer the stiffest's, reaches its limit.
// Normalising to the smallest rather than the largest is what lets the
// stiff, noisy coordinates of a minibatch chain take the gradient noise at
// the step the wide ones need.
func MassFromPrecision(v []float64) []float64 {
	var pos []float64
	for _, x := range v {
		if x > 0 && !math.IsInf(x, 1) {
			pos = append(pos, x)
		}
	}
	m := make([]float64, len(v))
	if len(pos) == 0 {
		for i := range m {
			m[i] = 1
		}
		return m
	}
	slices.Sort(pos)
	ref := pos[len(pos)/100]
	for i, x := range v {
		switch {
		case math.IsNaN(x) || x <= 0:
			m[i] = 1
		default:
			m[i] = math.Min(math.Max(x/ref, 1), MaxMass)
		}
	}
	return m
}

// MassFromPrecisionStiffest returns the diagonal mass of per-coordinate
// curvature estimates v normalised to the stiffest: m_i = v_i / v_ref, at
// least 1/MaxMass and at most 1, where v_ref is the 99th percentile of the
// positive finite v (their largest below 100 coordinates). So the
// stiffest coordinates keep unit mass and every other is sped up to their
// frequency; a coordinate whose estimate is not positive (it never moved,
// or its gradient was 0) or not finite keeps unit mass.
func MassFromPrecisionStiffest(v []float64) []float64 {
	return MassFromPrecisionStiffestFloor(v, nil)
}

// MassFromPrecisionStiffestFloor is MassFromPrecisionStiffest with each
// coordinate's estimate raised to at least floor_i (floor nil: none)
// before it is normalised: m_i = max(v_i, floor_i) / v_ref, at most 1,
// with v_ref taken from v alone. So a floor can make a coordinate heavier
// (slower, at most as fast as the stiffest) but never changes the
// reference or lightens anything: a coordinate whose estimate is at or
// above its floor gets exactly MassFromPrecisionStiffest's mass.
// Mass.Update applies the window's CurvatureFloor to rmsprop masses under
// MassScaleStiffest, which trusts an estimate's low values: normalised to
// the stiffest, an underestimated curvature makes its coordinate too fast
// for the step (issue 43: earnings diverged, sds +1,692%).
func MassFromPrecisionStiffestFloor(v, floor []float64) []float64 {
	var pos []float64
	for _, x := range v {
		if x > 0 && !math.IsInf(x, 1) {
			pos = append(pos, x)
		}
	}
	m := make([]float64, len(v))
	for i := range m {
		m[i] = 1
	}
	if len(pos) == 0 {
		return m
	}
	slices.Sort(pos)
	ref := pos[len(pos)-1-len(pos)/100]
	for i, x := range v {
		if x > 0 && !math.IsInf(x, 1) {
			if i < len(floor) && floor[i] > x { // NaN floors are ignored
				x = floor[i]
			}
			m[i] = math.Min(math.Max(x/ref, 1/MaxMass), 1)
		}
	}
	return m
}

// Mass is the burn-in's estimation of each chain's mass (diagonal, dense
// or low-rank: see Preconditioner): its settings, and what a driver
// stepping the chains (driver.Mass, a driver.Driver phase) calls around
// each step. The zero Mass estimates nothing.
type Mass struct {
	// Precondition is the estimate (PrecondNone: none, unit mass).
	Precondition Preconditioner
	// Scale is how the estimated mass is normalised (the zero value,
	// MassScaleWidest: the widest coordinates keep unit mass).
	Scale MassScale
	// Rank is k, the number of eigen-directions of a low-rank mass
	// (PrecondLowRank), at most sampler.MaxMassRank; 0 means
	// DefaultMassRank. Other preconditioners ignore it.
	Rank int
	// BurnIn is the length of the burn-in, whose windows the mass is
	// estimated over (MassWindowEnds).
	BurnIn int
}

// Validate checks that the preconditioner and the scale are known and
// that kernel k can step at a mass (SGNHT, SGHMC or SGLD).
func (m Mass) Validate(k sampler.Kernel) error {
	switch m.Precondition {
	case PrecondNone:
	case PrecondRMSprop, PrecondVariance, PrecondDense, PrecondLowRank:
		switch k.(type) {
		case sampler.SGNHT, sampler.SGHMC, sampler.SGLD:
		default:
			return fmt.Errorf("preconditioner %v needs an sgnht, sghmc or sgld kernel, not %s", m.Precondition, k.Name())
		}
	default:
		return fmt.Errorf("unknown preconditioner %v", m.Precondition)
	}
	if m.Scale != MassScaleWidest && (m.Scale != MassScaleStiffest || m.Precondition == PrecondNone) {
		return fmt.Errorf("mass scale %v needs a preconditioner (and is widest or stiffest)", m.Scale)
	}
	if m.Rank < 0 || m.Rank > sampler.MaxMassRank {
		return fmt.Errorf("mass rank %d: expected 1 to %d (0: %d)", m.Rank, sampler.MaxMassRank, DefaultMassRank)
	}
	return nil
}

// MaxDenseDim is the largest model a dense mass is estimated for: its
// factor and its estimate hold D^2 and D^2/2 values, and a step costs
// 2 D^2 multiply-adds (at 2,048 parameters 50 MB and about 8 million).
const MaxDenseDim = 2048

// CheckDim reports whether the mass suits a model of dim parameters: a
// dense one needs at most MaxDenseDim (a low-rank one is meant for more).
func (m Mass) CheckDim(dim int) error {
	if m.Precondition == PrecondDense && dim > MaxDenseDim {
		return fmt.Errorf("a dense mass for %d parameters (at most %d: its factor holds D^2 values and a step costs 2 D^2 multiply-adds); use the low-rank mass (precondition lowrank)", dim, MaxDenseDim)
	}
	return nil
}

// DefaultMassRank is a low-rank mass's k when Mass.Rank is 0.
const DefaultMassRank = 4

// rank returns the low-rank mass's k.
func (m Mass) rank() int {
	if m.Rank == 0 {
		return DefaultMassRank
	}
	return m.Rank
}

// Start returns the estimates of chains at their first step, one per
// chain (nil without a preconditioner, or with a burn-in too short for a
// window).
func (m Mass) Start(chains []*sampler.State) []MassEstimate {
	if m.Precondition == PrecondNone || len(MassWindowEnds(m.BurnIn)) == 0 {
		return nil
	}
	est := make([]MassEstimate, len(chains))
	for j := range est {
		m.resetWindow(&est[j], 0, len(chains[j].Theta))
	}
	return est
}

// GradientWindows is how many of a dense or low-rank mass's windows
// (MassWindowEnds) come first and estimate the mass from the stochastic
// gradients rather than the draws: at most the windows before the last
// two. A dense mass's are DenseMassFromGradients, a low-rank mass's
// PrecondRMSprop's diagonal mass (floored under MassScaleStiffest). The
// draws a covariance is estimated from must have explored the posterior;
// a chain at unit mass and a step stable in its stiffest direction moves
// little along its widest (on earnings, whose covariance's eigenvalues
// are 2e11 apart, the first windows' dense estimates from draws grew by
// about 10^3 a window), while the gradients see the curvature at once.
const GradientWindows = 2

// window returns the index of the window holding step (after step steps;
// 0 before the first) among ends.
func window(ends []int, step int) int {
	i := 0
	for i < len(ends) && step > ends[i] {
		i++
	}
	return i
}

// gradWindow reports whether the window holding step estimates a dense
// or low-rank mass from the gradients (GradientWindows).
func (m Mass) gradWindow(step int) bool {
	if m.Precondition.Diagonal() {
		return false
	}
	ends := MassWindowEnds(m.BurnIn)
	return window(ends, step) < min(GradientWindows, len(ends)-2)
}

// windowKind returns the preconditioner whose estimate the window holding
// step makes: the run's own, or for a low-rank mass PrecondRMSprop in its
// gradient windows.
func (m Mass) windowKind(step int) Preconditioner {
	if m.Precondition == PrecondLowRank && m.gradWindow(step) {
		return PrecondRMSprop
	}
	return m.Precondition
}

// resetWindow starts the estimate e of a chain of dim coordinates for the
// window holding step.
func (m Mass) resetWindow(e *MassEstimate, step, dim int) {
	kind := m.windowKind(step)
	if kind == PrecondDense && m.gradWindow(step) {
		e.reset(PrecondNone, dim, false, 0)
		e.GradCross = make([]float64, dim*(dim+1)/2)
		return
	}
	e.reset(kind, dim, m.bounded(kind), m.rank())
}

// Check reports whether est are the estimates of n chains of dimension
// dim at step (for states restored from checkpoints): none are needed
// once the masses are frozen.
func (m Mass) Check(step int, est []MassEstimate, n, dim int) error {
	ends := MassWindowEnds(m.BurnIn)
	if m.Precondition == PrecondNone || len(ends) == 0 || step >= ends[len(ends)-1] {
		return nil
	}
	if len(est) != n {
		return fmt.Errorf("%d mass estimates for %d rungs (preconditioner %v)", len(est), n, m.Precondition)
	}
	kind := m.windowKind(step + 1) // the window the next step joins
	for j, e := range est {
		k := len(e.SumSq)
		if kind != PrecondRMSprop {
			k = len(e.M2)
			if len(e.Mean) != k {
				k = -1
			}
		}
		grad := kind == PrecondDense && m.gradWindow(step+1)
		switch {
		case grad && len(e.GradCross) != dim*(dim+1)/2:
			k = -1
		case grad:
			k = dim
		case !grad && kind == PrecondDense && len(e.Cross) != dim*(dim+1)/2:
			k = -1
		case kind == PrecondLowRank && e.Sub.check(dim, sketchCols(dim, m.rank())) != nil:
			k = -1
		}
		if k != dim || e.Count < 0 {
			return fmt.Errorf("rung %d's mass estimate has %d coordinates (count %d), the model has %d", j, k, e.Count, dim)
		}
	}
	return nil
}

// Update runs the mass adaptation for the step just taken, step: it adds
// the chains' positions to variance estimates, and at the end of a window
// sets each chain's mass from its estimate (temp(j) is chain j's
// temperature, which the rmsprop estimate's floor needs) and starts the
// next window (or stops estimating after the last). It reports whether the
// masses changed (a driver's health watch then pairs no kick terms across
// the change).
func (m Mass) Update(step int, chains []*sampler.State, est []MassEstimate, temp func(j int) float64) (changed bool, err error) {
	if m.Precondition == PrecondNone {
		return false, nil
	}
	ends := MassWindowEnds(m.BurnIn)
	if len(ends) == 0 || step > ends[len(ends)-1] {
		return false, nil
	}
	last := ends[len(ends)-1]
	kind, next := m.windowKind(step), m.windowKind(step+1)
	grad := m.gradWindow(step)
	for j, s := range chains {
		e := &est[j]
		switch {
		case grad && kind == PrecondDense:
			e.observeGrad(s.Grad) // counts the step
		case !kind.Diagonal():
			e.observeFull(s.Theta, s.Grad) // counts the step
		case kind == PrecondVariance || len(e.Mean) == len(s.Theta) && len(e.M2) == len(s.Theta):
			e.observe(s.Theta) // counts the step
		default:
			e.Count++
		}
		if !slices.Contains(ends, step) {
			if e.Sub != nil && blockEnd(ends, step) {
				e.nextBlock()
			}
			continue
		}
		if !kind.Diagonal() {
			if err := m.setFull(s, e, step); err != nil {
				return changed, fmt.Errorf("rung %d: mass at step %d: %w", j, step, err)
			}
			changed = true
			continue
		}
		v := e.precision(kind)
		mass := m.Scale.MassFrom(v)
		if m.bounded(kind) {
			mass = MassFromPrecisionStiffestFloor(v, e.CurvatureFloor(temp(j)))
		}
		if err := s.SetMass(mass); err != nil {
			return changed, fmt.Errorf("rung %d: mass at step %d: %w", j, step, err)
		}
		changed = true
		switch {
		case step == last:
			*e = MassEstimate{}
			s.SumGradSq(nil)
		case next != kind: // a low-rank mass's first window from the draws
			s.SumGradSq(nil)
			m.resetWindow(e, step+1, len(s.Theta))
		default:
			e.reset(kind, len(s.Theta), m.bounded(kind), m.rank())
		}
	}
	return changed, nil
}

// bounded reports whether the estimates of a window of kind (windowKind)
// carry a lower bound: an rmsprop mass normalised to the stiffest
// coordinate is floored by the window's CurvatureFloor
// (MassFromPrecisionStiffestFloor).
func (m Mass) bounded(kind Preconditioner) bool {
	return kind == PrecondRMSprop && m.Scale == MassScaleStiffest
}

// Arm points each chain's gradient sums at its rmsprop estimate while one
// is running, before a step (states restored from a checkpoint are
// re-armed here).
func (m Mass) Arm(chains []*sampler.State, est []MassEstimate) {
	if m.Precondition != PrecondRMSprop && m.Precondition.Diagonal() {
		return
	}
	for j, s := range chains {
		if !m.Precondition.Diagonal() { // the step's gradient is read
			s.KeepGrad(j < len(est) && (est[j].GradCross != nil || est[j].Sub != nil))
		}
		if j < len(est) && est[j].SumSq != nil && len(est[j].SumSq) == len(s.Theta) {
			s.SumGradSq(est[j].SumSq)
		} else {
			s.SumGradSq(nil)
		}
	}
}
