package health

import (
	"fmt"
	"math"
	"sort"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// CoordWatch is the per-coordinate part of a chain's health watch after
// burn-in (issue 60). The window figures are sums over coordinates: one
// kinetic temperature, one gradient-noise share, one integration error.
// With a diagonal mass the minibatch noise per step, h^2 Var[g~_i]/m_i,
// differs between coordinates, and the one thermostat holds only their
// mean temperature, so a soft, noisy coordinate can run hot (its sd wide)
// while the totals read right; and the integration error of one stiff
// coordinate is diluted in the mean over all of them. The watch keeps,
// for each unit (a coordinate, the mass's eigen-directions since the mass
// is diagonal; or, with more than MaxCoordUnits coordinates, a group of
// coordinates of neighbouring masses), over every Stride-th step after
// burn-in: the sum of its end-of-step momentum q_i'^2; the kernel's own
// per-coordinate gradient-noise estimate (sampler.State.SumNoise: the
// momentum's heating beyond the injected noise less the kick's energy
// error, the estimate the noise correction uses); and its energy error,
// the heating q_i'^2 - exp(-2 xi h) q_i^2 - injected_i less that noise
// estimate (the coordinate's part of IntegrationError); the latter two
// also as means over blocks (the health windows), for their statistical
// tolerance. Checkpointed memory O(units); per observed step two passes
// over the momentum (one copy before the step, one sum after) and O(D)
// transient buffers. Plain data, checkpointed with the Health.
type CoordWatch struct {
	// Stride is the observed steps' spacing (CoordStride of the dimension,
	// fixed at the first observed step); Steps counts observed steps; Dim
	// is the chain's dimension.
	Stride, Steps, Dim int
	// The units: each one's coordinates (N), first and last in mass
	// order, smallest and largest mass (1 without a mass; Massed says
	// there is one), and the sum of its coordinates' squared injected-noise
	// scales (sampler.State.InjScale, a noise correction's; 1 each
	// without) over the observed steps (a tracking correction changes
	// them); Corrected says an observed step had a noise correction.
	N, First, Last []int
	MassLo, MassHi []float64
	Massed         bool
	InjSq          []float64
	Corrected      bool
	// InjPerStep says InjSq sums over the observed steps (false in
	// checkpoints from before it, whose InjSq summed the scales once, when
	// the watch started).
	InjPerStep bool
	// ScaleLo and ScaleHi are each unit's smallest and largest
	// injected-noise scale when the watch starts; Scaled says the chain
	// then had a noise correction, whose scales order the coordinates of
	// equal masses (unitsOf).
	ScaleLo, ScaleHi []float64
	Scaled           bool
	// Units holds each coordinate's unit, fixed when the watch starts
	// (from the masses and the noise correction's scales then): a
	// correction that tracks the noise (adapt.Noise.Track) changes the
	// scales, and must not regroup a resumed run's coordinates. (Nil in
	// checkpoints from before it: the units are then derived again.)
	Units []uint8
	// KinEnd sums each unit's q_i'^2 after each observed step; KinAll sums
	// q'q/D and KinMid the mid-step kinetic temperature
	// (sampler.State.Kinetic) over the same steps: a unit's temperature is
	// its mean KinEnd over KinAll times KinMid's mean (the end-of-step
	// momentum's temperature exceeds the configuration's by a factor
	// common to all coordinates).
	KinEnd         []float64
	KinAll, KinMid float64
	// Fric and Inj sum the friction per step xi h and the nominal injected
	// variance per step, sampler.InjectedVariance(A, h), over observed
	// steps.
	Fric, Inj float64
	// NoiseB and IntB are the current block's sums of each unit's noise
	// estimates and energy errors, over BlockSteps observed steps; the
	// Sum arrays sum the completed blocks', the Means and Sq arrays their
	// block means and squared block means, over Blocks blocks.
	NoiseB, IntB                  []float64
	NoiseSum, NoiseMeans, NoiseSq []float64
	IntSum, IntMeans, IntSq       []float64
	BlockSteps, Blocks            int

	// Dir is the energy error by direction of a chain of at most
	// MaxCoordUnits coordinates (observed every step).
	Dir DirWatch

	unitOf      []int32   // each coordinate's unit (from the mass order)
	prev, block []float64 // the momentum before the step; the kernel's noise sums
	// shared, when not nil, is the observed step's noise sums, a noise
	// correction's (sampler.State.NoiseSums, armed before the watch's
	// turn), whose per-unit totals before the step are before (after:
	// after it)
	shared        []float64
	before, after []float64
}

// CoordStride returns the spacing of the per-coordinate watch's observed
// steps for a chain of dim coordinates: every step up to 4,096
// coordinates, then one step in dim/4,096 (at most 16), so that its passes
// over the momentum cost about two passes over 4,096 coordinates per
// step. The momentum decorrelates over about 1/(2 xi h) steps (5 at the
// default friction), so a stride of a few steps loses little.
func CoordStride(dim int) int { return min(max(dim/4096, 1), 16) }

// CoordArmed reports whether the per-coordinate watch observes the step
// that follows step (steps taken so far) in a run with burnIn steps of
// burn-in: steps after burn-in, every Stride-th.
func (hl *Health) CoordArmed(step, burnIn, dim int) bool {
	if step < burnIn {
		return false
	}
	stride := hl.Coords.Stride
	if stride == 0 {
		stride = CoordStride(dim)
	}
	return (step-burnIn)%stride == 0
}

// ArmCoords prepares the per-coordinate watch for the step that follows
// step (steps taken so far) on chain s, after burn-in: when the watch
// observes it, it copies the momentum before the step and points the
// chain's per-coordinate noise sums at the watch's buffer, or, when a
// noise correction that goes on estimating after burn-in (adapt.Noise.Track)
// has armed its own sums, keeps each unit's total of those to read the
// step's noise from after it; otherwise it clears the sums if they are
// the watch's own. During burn-in it leaves the sums to the noise
// correction (adapt.Noise.Arm). A driver calls it before each step, after
// the noise correction's Arm.
func (hl *Health) ArmCoords(s *sampler.State, step, burnIn int) {
	if step < burnIn {
		return
	}
	c := &hl.Coords
	if !hl.CoordArmed(step, burnIn, len(s.P)) {
		if sums := s.NoiseSums(); len(sums) > 0 && len(c.block) == len(sums) && &sums[0] == &c.block[0] {
			s.SumNoise(nil)
		}
		s.SaveKick(nil)
		return
	}
	if c.Dim != len(s.P) {
		c.reset(s)
	}
	if len(c.unitOf) != len(s.P) { // resumed from a checkpoint
		c.unitOf = c.savedUnits()
		if c.unitOf == nil {
			c.unitOf = unitsOf(s.Mass, s.InjScale, len(c.N))
		}
		if c.unitOf == nil {
			c.unitOf = indexUnits(len(s.P), len(c.N))
		}
	}
	if len(c.block) != len(s.P) {
		c.prev, c.block = make([]float64, len(s.P)), make([]float64, len(s.P))
	}
	copy(c.prev, s.P)
	c.shared = nil
	if sums := s.NoiseSums(); len(sums) == len(s.P) && len(sums) > 0 && &sums[0] != &c.block[0] {
		c.shared = sums
		c.before = c.unitSums(sums, c.before)
	} else {
		s.SumNoise(c.block)
	}
	if c.dense() {
		c.Dir.arm(s, hl.PrevWork.Valid)
	}
}

// savedUnits returns each coordinate's unit from Units (nil when it does
// not hold them).
func (c *CoordWatch) savedUnits() []int32 {
	if len(c.Units) != c.Dim {
		return nil
	}
	out := make([]int32, len(c.Units))
	for i, u := range c.Units {
		out[i] = int32(u)
	}
	return out
}

// unitSums returns each unit's total of v in out (reallocated when short).
func (c *CoordWatch) unitSums(v, out []float64) []float64 {
	if len(out) != len(c.N) {
		out = make([]float64, len(c.N))
	}
	clear(out)
	for i, x := range v {
		out[c.unitOf[i]] += x
	}
	return out
}

// dense reports whether the watch measures the energy error by direction
// (DirWatch): at most MaxCoordUnits coordinates, every step observed.
func (c *CoordWatch) dense() bool { return c.Dim <= MaxCoordUnits && c.Stride == 1 }

// unitsOf returns each of d coordinates' unit, u of them, in the order of
// their masses and, among equal masses, of their noise correction's
// injected-noise scales from the largest (the quietest coordinates) to the
// smallest (the noisiest: a coordinate whose noise exceeds the injected
// variance keeps none), so that coordinates of like noise share a unit
// and those the correction cannot serve are not diluted among quiet ones;
// index order among equals, and nil when both are nil (index order): unit
// k holds the coordinates at positions k d/u to (k+1) d/u - 1 of that
// order.
func unitsOf(mass, scale []float64, u int) []int32 {
	d := max(len(mass), len(scale))
	if d == 0 {
		return nil
	}
	key := func(v []float64, i int) float64 {
		if v == nil {
			return 1
		}
		return v[i]
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if mi, mj := key(mass, i), key(mass, j); mi != mj {
			return mi < mj
		}
		return key(scale, i) > key(scale, j)
	})
	out := make([]int32, d)
	for k := 0; k < u; k++ {
		for _, i := range order[k*d/u : (k+1)*d/u] {
			out[i] = int32(k)
		}
	}
	return out
}

// indexUnits returns each of d coordinates' unit, u of them, in index
// order.
func indexUnits(d, u int) []int32 {
	out := make([]int32, d)
	for k := 0; k < u; k++ {
		for i := k * d / u; i < (k+1)*d/u; i++ {
			out[i] = int32(k)
		}
	}
	return out
}

// reset starts the watch for chain s: its units and their fixed figures.
func (c *CoordWatch) reset(s *sampler.State) {
	d := len(s.P)
	u := min(d, MaxCoordUnits)
	mk := func() []float64 { return make([]float64, u) }
	*c = CoordWatch{Stride: CoordStride(d), Dim: d, N: make([]int, u), First: make([]int, u), Last: make([]int, u),
		MassLo: mk(), MassHi: mk(), Massed: s.Mass != nil, InjSq: mk(), KinEnd: mk(), NoiseB: mk(), IntB: mk(),
		NoiseSum: mk(), NoiseMeans: mk(), NoiseSq: mk(), IntSum: mk(), IntMeans: mk(), IntSq: mk(),
		ScaleLo: mk(), ScaleHi: mk(), Scaled: s.InjScale != nil, InjPerStep: true}
	c.unitOf = unitsOf(s.Mass, s.InjScale, u)
	if c.unitOf == nil {
		c.unitOf = indexUnits(d, u)
	}
	c.Units = make([]uint8, d)
	for i, k := range c.unitOf {
		c.Units[i] = uint8(k)
		m, sc := 1.0, 1.0
		if s.Mass != nil {
			m = s.Mass[i]
		}
		if s.InjScale != nil {
			sc = s.InjScale[i]
		}
		if c.N[k] == 0 || m < c.MassLo[k] {
			c.MassLo[k] = m
		}
		if c.N[k] == 0 || m > c.MassHi[k] {
			c.MassHi[k] = m
		}
		if c.N[k] == 0 || sc < c.ScaleLo[k] {
			c.ScaleLo[k] = sc
		}
		if c.N[k] == 0 || sc > c.ScaleHi[k] {
			c.ScaleHi[k] = sc
		}
		if c.N[k] == 0 {
			c.First[k] = i
		}
		c.Last[k] = i
		c.N[k]++
	}
}

// ObserveCoords records the step just taken (step steps taken; the kernel
// k it stepped with, xiBefore the thermostat it used, s its state after
// it) in the per-coordinate watch, when ArmCoords armed it; windowEnded
// says the step ended a health window (the blocks then end).
func (hl *Health) ObserveCoords(k sampler.Frictional, xiBefore float64, s *sampler.State, step, burnIn int, windowEnded bool) {
	c := &hl.Coords
	if step <= burnIn || c.Dim != len(s.P) || len(c.block) != len(s.P) {
		return
	}
	if hl.CoordArmed(step-1, burnIn, len(s.P)) {
		h, a := k.Dynamics()
		inj := sampler.InjectedVariance(a, h)
		d2 := math.Exp(-2 * xiBefore * h)
		all := 0.0
		for i, q := range s.P {
			u, sc := c.unitOf[i], 1.0
			if s.InjScale != nil {
				sc = s.InjScale[i]
			}
			heat := q*q - d2*c.prev[i]*c.prev[i] - inj*sc*sc
			c.KinEnd[u] += q * q
			if c.InjPerStep {
				c.InjSq[u] += sc * sc
			}
			if c.shared == nil {
				c.NoiseB[u] += c.block[i]
				c.IntB[u] += heat - c.block[i]
				c.block[i] = 0
			} else {
				c.IntB[u] += heat
			}
			all += q * q
		}
		if c.shared != nil { // the step's noise: the correction's sums' growth
			c.after = c.unitSums(c.shared, c.after)
			for u, v := range c.after {
				c.NoiseB[u] += v - c.before[u]
				c.IntB[u] -= v - c.before[u]
			}
			c.shared = nil
		}
		c.Corrected = c.Corrected || s.InjScale != nil
		if c.dense() {
			c.Dir.observe(c.prev)
		}
		c.KinAll += all / float64(len(s.P))
		c.KinMid += s.Kinetic
		c.Fric += xiBefore * h
		c.Inj += inj
		c.Steps++
		c.BlockSteps++
	}
	if windowEnded && c.BlockSteps > 0 {
		c.endBlock()
	}
}

// endBlock folds the current block into the sums.
func (c *CoordWatch) endBlock() {
	n := float64(c.BlockSteps)
	for u := range c.NoiseB {
		for _, a := range [2]struct{ b, sum, means, sq []float64 }{{c.NoiseB, c.NoiseSum, c.NoiseMeans, c.NoiseSq}, {c.IntB, c.IntSum, c.IntMeans, c.IntSq}} {
			a.sum[u] += a.b[u]
			m := a.b[u] / n
			a.means[u] += m
			a.sq[u] += m * m
			a.b[u] = 0
		}
	}
	c.Blocks++
	c.BlockSteps = 0
	c.Dir.endBlock()
}

// MaxCoordUnits is the most units the per-coordinate check grades (at most
// 256: CoordWatch.Units holds them as bytes): a chain
// with more coordinates is graded in this many groups of coordinates of
// neighbouring masses (the index order under unit mass), each group's
// figures the means of its coordinates'.
const MaxCoordUnits = 64

// CoordTolSE returns the number of standard errors of a unit's figures in
// their tolerance when n units are graded: IntTolSE (3, as the window's
// noise and integration error), or more with many units (sqrt(2 ln n) + 1,
// the largest of n standard normals' usual reach plus one: 3.9 for 64), so
// that the worst of many in-regime units does not read as a failure by
// chance.
func CoordTolSE(n int) float64 {
	return math.Max(IntTolSE, math.Sqrt(2*math.Log(float64(max(n, 1))))+1)
}

// CoordUnit is one graded unit of the per-coordinate check: a coordinate,
// or a group of N coordinates of neighbouring masses (Coord to Last in
// mass order).
type CoordUnit struct {
	Coord  int     `json:"coord"`   // the coordinate (a group: its first in mass order)
	Last   int     `json:"last"`    // a group's last coordinate in mass order
	N      int     `json:"n"`       // coordinates in the unit
	Massed bool    `json:"massed"`  // the chain has a mass: a group is of neighbouring masses
	MassLo float64 `json:"mass_lo"` // the unit's smallest and largest mass (1: unit mass)
	MassHi float64 `json:"mass_hi"`
	// Scaled: the chain had a noise correction when the watch started, and
	// a group is of neighbouring injected-noise scales (ScaleLo to ScaleHi
	// then) among equal masses.
	Scaled     bool    `json:"scaled"`
	ScaleLo    float64 `json:"scale_lo"`
	ScaleHi    float64 `json:"scale_hi"`
	Kinetic    float64 `json:"kinetic"`     // its kinetic temperature (1 in the regime)
	KineticTol float64 `json:"kinetic_tol"` // its statistical tolerance (CoordTolSE standard errors)
	Noise      float64 `json:"noise"`       // gradient noise per step and coordinate, h^2 Var[g~_i]/(m_i T^2)
	NoiseTol   float64 `json:"noise_tol"`   // its statistical tolerance
	Injected   float64 `json:"injected"`    // the injected variance per step there (nominal times InjScale^2)
	Nominal    float64 `json:"nominal"`     // the nominal injected variance per step, sampler.InjectedVariance(A, h)
	// Excess is Noise + Injected - Nominal, the gradient noise beyond
	// what a noise correction takes out of the injected noise there (the
	// heating beyond the nominal diffusion; Noise without a correction).
	Excess float64 `json:"excess"`
	// Share is Excess / (Excess + Nominal): the gradient noise's share of
	// the coordinate's diffusion as the window figures define it (against
	// the nominal injected variance, which a noise correction's total
	// keeps, so that the noise a correction takes out is no share).
	Share    float64 `json:"share"`
	ShareLow float64 `json:"share_low"` // the share of Excess - NoiseTol (at least 0)
	// Widening is sqrt(Kinetic) - 1, the sd's widening its temperature
	// makes, and WideningTol the widening KineticTol adds.
	Widening    float64 `json:"widening"`
	WideningTol float64 `json:"widening_tol"`
	// Integration is its energy error per step and coordinate (its part of
	// IntegrationError), IntSDError the widening of its sd that makes
	// (IntSDWidening), IntSDTol that widening's tolerance.
	Integration float64      `json:"integration"`
	IntSDError  float64      `json:"int_sd_error"`
	IntSDTol    float64      `json:"int_sd_tol"`
	Status      HealthStatus `json:"status"`
}

// CoordFigures are the per-coordinate check's figures after burn-in
// (Health.CoordVerdict): the worst graded unit by temperature, by noise
// share and by integration error, quantiles of the units' temperatures,
// and what the check could not tell.
type CoordFigures struct {
	// Recorded says the watch has observed steps after burn-in; Units is
	// the number of units graded (coordinates, or groups when more than
	// MaxCoordUnits), Steps the observed steps, Stride their spacing.
	Recorded bool `json:"recorded"`
	Units    int  `json:"units"`
	Steps    int  `json:"steps"`
	Stride   int  `json:"stride"`
	Dim      int  `json:"dim"`
	// Hot is the unit whose temperature is furthest from 1 beyond its
	// tolerance, Noisy the one with the largest noise share beyond chance,
	// Stiff the one whose integration error widens it most beyond its
	// tolerance.
	Hot   CoordUnit `json:"hot"`
	Noisy CoordUnit `json:"noisy"`
	Stiff CoordUnit `json:"stiff"`
	// Dir is the worst direction's energy error (DirWatch; measured on
	// chains of at most MaxCoordUnits coordinates).
	Dir DirFigures `json:"dir"`
	// KineticQ are the units' temperatures' 0, 10, 50, 90 and 100%
	// quantiles.
	KineticQ [5]float64 `json:"kinetic_q"`
	// MeanShare is the noise's share over all coordinates (the window
	// figures' GradNoise, per coordinate: the units' Excess).
	MeanShare float64 `json:"mean_share"`
	// Unchecked says what the check could not tell (empty: all of it):
	// a unit whose tolerance exceeds the warning threshold it is graded
	// by, or, on a verdict, a watched chain's mixing (MixFigures.Unsure).
	Unchecked string `json:"unchecked"`
	// Exact: the gradients are exact (no gradient noise to name).
	Exact bool `json:"exact"`
	// Corrected: the chain runs with a noise correction (its InjScale).
	Corrected bool         `json:"corrected"`
	Status    HealthStatus `json:"status"`
}

// CoordVerdict returns the per-coordinate check's figures, graded: a unit
// warns when its temperature widens (or narrows) its sd by more than
// WarnIntSD beyond its tolerance, its integration error widens it by more
// than WarnIntSD beyond its tolerance, or its noise share beyond chance
// exceeds WarnShare, and fails beyond FailIntSD or FailShare (the window
// check's thresholds, per unit); the check warns when it cannot tell a
// unit's temperature within WarnIntSD (its tolerance is wider) and says so
// in Unchecked. Not Recorded (no observed step after burn-in, a
// checkpoint from before the watch): ok and not graded.
func (hl *Health) CoordVerdict() CoordFigures {
	c := hl.Coords
	out := CoordFigures{Steps: c.Steps, Stride: c.Stride, Dim: c.Dim, Exact: hl.Exact}
	if c.Steps < 2 || c.KinAll <= 0 || len(c.N) == 0 {
		return out
	}
	out.Recorded, out.Units = true, len(c.N)
	tolSE := CoordTolSE(out.Units)
	n := float64(c.Steps)
	noiseTot, temps := 0.0, make([]float64, out.Units)
	for u := range c.N {
		cu := c.unit(u, tolSE)
		temps[u] = cu.Kinetic
		noiseTot += cu.Excess * float64(cu.N)
		cu.Status = cu.grade(hl.Exact)
		if u == 0 || cu.tempDev() > out.Hot.tempDev() {
			out.Hot = cu
		}
		if u == 0 || cu.ShareLow > out.Noisy.ShareLow {
			out.Noisy = cu
		}
		if u == 0 || cu.intDev() > out.Stiff.intDev() {
			out.Stiff = cu
		}
		out.Status = max(out.Status, cu.Status)
		if cu.WideningTol > WarnIntSD && out.Unchecked == "" {
			out.addUnchecked(fmt.Sprintf("%s's kinetic temperature within %.0f%% of its sd (tolerance %.0f%%: %d observed steps after burn-in are too few)", cu.name(), 100*WarnIntSD, 100*cu.WideningTol, c.Steps))
		}
	}
	if noiseTot > 0 {
		out.MeanShare = noiseTot / (noiseTot + c.Inj/n*float64(c.Dim))
	}
	sort.Float64s(temps)
	for q, p := range []float64{0, 0.1, 0.5, 0.9, 1} {
		out.KineticQ[q] = temps[int(math.Round(p*float64(len(temps)-1)))]
	}
	out.Corrected = c.Corrected
	if dir, err := c.Dir.figures(c.Fric/n, CoordTolSE(c.Dim)); err == nil {
		out.Dir = dir
		out.Status = max(out.Status, dir.Status)
	} else {
		out.addUnchecked("the energy error by direction (" + err.Error() + ")")
	}
	return out
}

// addUnchecked adds what to the figures' Unchecked (a warning).
func (c *CoordFigures) addUnchecked(what string) {
	if c.Unchecked != "" {
		c.Unchecked += "; "
	}
	c.Unchecked += what
	c.Status = max(c.Status, HealthWarn)
}

// unit returns unit u's figures, with tolSE the standard errors of a
// tolerance: its kinetic temperature's from the momentum's relaxation (a
// coordinate's q^2 has variance 2 and decorrelates over about 1/(2 xi h)
// steps), the noise's and the integration error's from their block means
// (with fewer than 5 blocks, the noise's from the temperature's).
func (c CoordWatch) unit(u int, tolSE float64) CoordUnit {
	n, m := float64(c.Steps), float64(c.N[u])
	f, inj := c.Fric/n, c.Inj/n
	cu := CoordUnit{Coord: c.First[u], Last: c.Last[u], N: c.N[u], Massed: c.Massed, MassLo: c.MassLo[u], MassHi: c.MassHi[u], Nominal: inj}
	if c.Scaled && len(c.ScaleLo) == len(c.N) {
		cu.Scaled, cu.ScaleLo, cu.ScaleHi = true, c.ScaleLo[u], c.ScaleHi[u]
	}
	eff := n * math.Min(1, math.Max(2*f*float64(max(c.Stride, 1)), 1/n))
	kinSE := math.Sqrt(2/eff) / math.Sqrt(m)
	cu.Kinetic = c.KinEnd[u] / m / c.KinAll * (c.KinMid / n)
	cu.KineticTol = tolSE * kinSE * cu.Kinetic
	cu.Noise = (c.NoiseSum[u] + c.NoiseB[u]) / n / m
	cu.Injected = inj * c.InjSq[u] / m
	if c.InjPerStep {
		cu.Injected /= n
	}
	cu.NoiseTol = tolSE * blockSE(c.NoiseMeans[u], c.NoiseSq[u], c.Blocks) / m
	intSE := blockSE(c.IntMeans[u], c.IntSq[u], c.Blocks) / m
	if c.Blocks < 5 { // too few blocks for their spread: the temperature's
		cu.NoiseTol = tolSE * -math.Expm1(-2*f) * kinSE * cu.Kinetic
		intSE = cu.NoiseTol / tolSE
	}
	cu.Excess = cu.Noise + cu.Injected - inj
	if t := inj + math.Max(cu.Excess, 0); t > 0 {
		cu.Share = math.Max(cu.Excess, 0) / t
	}
	if low := math.Max(cu.Excess-cu.NoiseTol, 0); inj+low > 0 {
		cu.ShareLow = low / (inj + low)
	}
	cu.Widening = math.Sqrt(cu.Kinetic) - 1
	cu.WideningTol = math.Sqrt(cu.Kinetic+cu.KineticTol) - math.Sqrt(cu.Kinetic)
	cu.Integration = (c.IntSum[u] + c.IntB[u]) / n / m
	cu.IntSDError = IntSDWidening(cu.Integration, f)
	cu.IntSDTol = IntSDWidening(math.Max(cu.Integration, 0)+tolSE*intSE, f) - cu.IntSDError
	return cu
}

// intDev returns the unit's integration widening beyond its tolerance.
func (u CoordUnit) intDev() float64 { return u.IntSDError - u.IntSDTol }

// tempDev returns the unit's sd widening (either sign) beyond its
// tolerance.
func (u CoordUnit) tempDev() float64 { return math.Abs(u.Widening) - u.WideningTol }

// grade returns the unit's status: its temperature's widening beyond its
// tolerance against WarnIntSD and FailIntSD, its noise share beyond
// chance against WarnShare and FailShare (not with exact gradients).
func (u CoordUnit) grade(exact bool) HealthStatus {
	share := u.ShareLow
	if exact {
		share = 0
	}
	switch dev := math.Max(u.tempDev(), u.intDev()); {
	case dev > FailIntSD, share > FailShare:
		return HealthFail
	case dev > WarnIntSD, share > WarnShare:
		return HealthWarn
	}
	return HealthOK
}

// name names the unit: "coordinate i", or the group of coordinates.
func (u CoordUnit) name() string {
	if u.N == 1 {
		return fmt.Sprintf("coordinate %d", u.Coord)
	}
	switch {
	case u.Scaled && u.Massed:
		return fmt.Sprintf("the %d coordinates of masses %.3g-%.3g and injected-noise scales %.3g-%.3g at the end of burn-in (indices %d to %d)", u.N, u.MassLo, u.MassHi, u.ScaleLo, u.ScaleHi, u.Coord, u.Last)
	case u.Scaled:
		return fmt.Sprintf("the %d coordinates of injected-noise scales %.3g-%.3g at the end of burn-in (indices %d to %d)", u.N, u.ScaleLo, u.ScaleHi, u.Coord, u.Last)
	case !u.Massed:
		return fmt.Sprintf("coordinates %d-%d", u.Coord, u.Last)
	}
	return fmt.Sprintf("the %d coordinates of masses %.3g-%.3g (coordinates %d to %d in mass order)", u.N, u.MassLo, u.MassHi, u.Coord, u.Last)
}

// Cause names the per-coordinate check's main cause: gradient noise in
// some coordinates (a unit's share beyond WarnShare, or a unit off in
// temperature whose noise share exceeds the mean), integration error in
// some coordinates (a unit's integration widening beyond WarnIntSD), an
// uneven kinetic temperature (a unit off otherwise), or unchecked;
// CauseNone when ok or not recorded.
func (c CoordFigures) Cause() HealthCause {
	switch {
	case c.Status == HealthOK:
		return CauseNone
	case !c.Exact && c.Noisy.ShareLow > WarnShare:
		return CauseCoordNoise
	case c.Hot.tempDev() > WarnIntSD && !c.Exact && c.Hot.Share > c.MeanShare:
		return CauseCoordNoise
	case c.Stiff.intDev() > WarnIntSD, c.Dir.IntSDError-c.Dir.IntSDTol > WarnIntSD:
		return CauseCoordInt
	case c.Hot.tempDev() > WarnIntSD:
		return CauseCoordTemp
	}
	return CauseUnchecked
}

// CoordFix is the per-coordinate check's advice for gradient noise in
// some coordinates (CoordFixCorrected with a noise correction on).
const (
	CoordFix          = "raise the batch (--batch), lower the step (--lr), or use --noise-correction (less injected noise where the gradient brings more) or --mass-scale stiffest"
	CoordFixCorrected = "raise the batch (--batch) or lower the step (--lr), or keep the noise correction's --noise-ceiling and --noise-track on (new runs' defaults): the correction cannot take out more noise than it injects, nor follow a noise that moves after burn-in, without them"
)

// fix returns the advice for gradient noise in some coordinates.
func (c CoordFigures) fix() string {
	if c.Corrected {
		return CoordFixCorrected
	}
	return CoordFix
}

// Problems returns the per-coordinate check's problems in words, with the
// fix: empty when it is ok.
func (c CoordFigures) Problems() []string {
	if c.Status == HealthOK {
		return nil
	}
	var out []string
	h := c.Hot
	if h.tempDev() > WarnIntSD {
		s := fmt.Sprintf("%s's kinetic temperature %.3f +- %.3f (its sd about %+.0f%%; over the %d units %.3f to %.3f, median %.3f), gradient noise %s (share %.0f%%; %.0f%% over all coordinates)",
			h.name(), h.Kinetic, h.KineticTol, 100*h.Widening, c.Units, c.KineticQ[0], c.KineticQ[4], c.KineticQ[2], h.ofInjected(), 100*h.Share, 100*c.MeanShare)
		switch {
		case c.Exact:
			s += ": with exact gradients the integrator heats it (a step too large for its curvature under this mass): lower the step (--lr)"
		case h.Share > c.MeanShare:
			s += ": the one thermostat holds only the mean temperature, and the minibatch noise is uneven across coordinates: " + c.fix()
		default:
			s += ": not more noise there than elsewhere (integration error or a coupling to stiffer coordinates): lower the step (--lr)"
		}
		out = append(out, s)
	}
	if n := c.Noisy; !c.Exact && n.ShareLow > WarnShare {
		out = append(out, fmt.Sprintf("%s's gradient noise %.3g +- %.2g per step, %s (share %.0f%%, beyond chance %.0f%%; %.0f%% over all coordinates): %s",
			n.name(), n.Noise, n.NoiseTol, n.ofInjected(), 100*n.Share, 100*n.ShareLow, 100*c.MeanShare, c.fix()))
	}
	if st := c.Stiff; st.intDev() > WarnIntSD {
		out = append(out, fmt.Sprintf("%s's integration error %.3g per step against %.3g injected: its sd about %.0f%% +- %.0f%% wide (over all coordinates the error is diluted): the step is too large for its curvature under this mass: lower the step (--lr)",
			st.name(), st.Integration, st.Nominal, 100*st.IntSDError, 100*st.IntSDTol))
	}
	if dr := c.Dir; dr.IntSDError-dr.IntSDTol > WarnIntSD {
		out = append(out, fmt.Sprintf("%s's integration error %.3g per step: its sd about %.0f%% +- %.0f%% wide (a direction mixing several coordinates: diluted in each coordinate's figures and in their mean): the step is too large for its curvature under this mass: lower the step (--lr)",
			dr.describe(), dr.Integration, 100*dr.IntSDError, 100*dr.IntSDTol))
	}
	if c.Unchecked != "" {
		out = append(out, "could not check "+c.Unchecked+": run longer after burn-in (--steps), or make the chain faster (--mass-scale stiffest)")
	}
	return out
}

// ofInjected describes the unit's gradient noise against the noise
// injected there.
func (u CoordUnit) ofInjected() string {
	if u.Injected <= 0 {
		return "with no noise injected there (a noise correction removed it all: the gradient noise alone exceeds the diffusion)"
	}
	if math.Abs(u.Injected-u.Nominal) > 1e-9*u.Nominal { // a noise correction
		return fmt.Sprintf("%.0f%% of the %.3g still injected there (%.3g per step beyond what the correction takes out of the nominal %.3g)", 100*u.Noise/u.Injected, u.Injected, u.Excess, u.Nominal)
	}
	return fmt.Sprintf("%.0f%% of the injected %.3g there", 100*u.Noise/u.Injected, u.Injected)
}

// String summarises the per-coordinate figures on one line.
func (c CoordFigures) String() string {
	if !c.Recorded {
		return "per coordinate: not recorded (not checked)"
	}
	return fmt.Sprintf("per coordinate (%d units, %d steps observed, every %d): %s, kinetic %.3f-%.3f (median %.3f), worst %s at %.3f +- %.3f, noisiest %s at share %.0f%% (beyond chance %.0f%%), stiffest %s at sd +%.1f%% +- %.1f%% from integration error, worst direction +%.1f%% +- %.1f%%",
		c.Units, c.Steps, c.Stride, c.Status, c.KineticQ[0], c.KineticQ[4], c.KineticQ[2], c.Hot.name(), c.Hot.Kinetic, c.Hot.KineticTol, c.Noisy.name(), 100*c.Noisy.Share, 100*c.Noisy.ShareLow, c.Stiff.name(), 100*c.Stiff.IntSDError, 100*c.Stiff.IntSDTol, 100*c.Dir.IntSDError, 100*c.Dir.IntSDTol)
}
