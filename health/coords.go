package health

import (
	"fmt"
	"math"
	"sort"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// CoordWatch is the per-coordinate part of a chain's health watch after
// burn-in (issue 60). The window figures are sums over coordinates: one
// kinetic temperature, one gradient-noise share. With a diagonal mass the
// minibatch noise per step, h^2 Var[g~_i]/m_i, differs between
// coordinates, and the one thermostat holds only their mean temperature,
// so a soft, noisy coordinate can run hot (its sd wide) while the totals
// read right. The watch keeps, for every coordinate i (the mass's
// eigen-directions: the mass is diagonal), the sum of its end-of-step
// momentum q_i'^2 and of the kernel's own per-coordinate gradient-noise
// estimate (sampler.State.SumNoise: the momentum's heating beyond the
// injected noise less the kick's integration part, the estimate the noise
// correction uses), over every Stride-th step after burn-in, and their
// means over blocks (the health windows) for the noise's statistical
// tolerance. Memory O(D); per observed step one pass over the momentum.
// Plain data, checkpointed with the Health.
type CoordWatch struct {
	// Stride is the observed steps' spacing (CoordStride of the dimension,
	// fixed at the first observed step); Steps counts observed steps.
	Stride, Steps int
	// KinEnd sums q_i'^2 after each observed step; KinAll sums q'q/D and
	// KinMid the mid-step kinetic temperature (sampler.State.Kinetic) over
	// the same steps: coordinate i's temperature is KinEnd_i/KinAll times
	// KinMid's mean (the end-of-step momentum's temperature exceeds the
	// configuration's by a factor common to all coordinates).
	KinEnd         []float64
	KinAll, KinMid float64
	// Fric and Inj sum the friction per step xi h and the nominal injected
	// variance per step, sampler.InjectedVariance(A, h), over observed
	// steps.
	Fric, Inj float64
	// Block is the current block's per-coordinate noise sums (the kernel
	// adds to it: sampler.State.SumNoise), over BlockSteps observed steps;
	// NoiseSum sums the completed blocks' sums, NoiseMeans and NoiseSq
	// their means and squared means, over Blocks blocks.
	Block, NoiseSum, NoiseMeans, NoiseSq []float64
	BlockSteps, Blocks                   int
	// InjScale is the chain's per-coordinate scale of the injected noise's
	// sd (sampler.State.InjScale, a noise correction's; nil: 1) and Mass
	// its diagonal mass (nil: unit), copied at the first observed step
	// (both are frozen after burn-in).
	InjScale, Mass []float64
}

// CoordStride returns the spacing of the per-coordinate watch's observed
// steps for a chain of dim coordinates: every step up to 4,096
// coordinates, then one step in dim/4,096 (at most 16), so that its pass
// over the momentum costs about one pass over 4,096 coordinates per step.
// The momentum decorrelates over about 1/(2 xi h) steps (5 at the default
// friction), so a stride of a few steps loses little.
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

// ArmCoords points chain s's per-coordinate noise sums at the watch's
// current block when the next step (after step steps) is observed, and
// clears them otherwise, after burn-in; during burn-in it leaves them to
// the noise correction (adapt.Noise.Arm). A driver calls it before each
// step, after the noise correction's Arm.
func (hl *Health) ArmCoords(s *sampler.State, step, burnIn int) {
	if step < burnIn {
		return
	}
	if !hl.CoordArmed(step, burnIn, len(s.P)) {
		s.SumNoise(nil)
		return
	}
	c := &hl.Coords
	if len(c.Block) != len(s.P) {
		c.reset(s)
	}
	s.SumNoise(c.Block)
}

// reset starts the watch for chain s.
func (c *CoordWatch) reset(s *sampler.State) {
	d := len(s.P)
	*c = CoordWatch{Stride: CoordStride(d), KinEnd: make([]float64, d), Block: make([]float64, d),
		NoiseSum: make([]float64, d), NoiseMeans: make([]float64, d), NoiseSq: make([]float64, d)}
	if s.InjScale != nil {
		c.InjScale = append([]float64(nil), s.InjScale...)
	}
	if s.Mass != nil {
		c.Mass = append([]float64(nil), s.Mass...)
	}
}

// ObserveCoords records the step just taken (step steps taken; the kernel
// k it stepped with, xiBefore the thermostat it used, s its state after
// it) in the per-coordinate watch, when ArmCoords armed it; windowEnded
// says the step ended a health window (the noise's block then ends).
func (hl *Health) ObserveCoords(k sampler.Frictional, xiBefore float64, s *sampler.State, step, burnIn int, windowEnded bool) {
	c := &hl.Coords
	if step <= burnIn || len(c.Block) != len(s.P) {
		return
	}
	if hl.CoordArmed(step-1, burnIn, len(s.P)) {
		h, a := k.Dynamics()
		all := 0.0
		for i, q := range s.P {
			c.KinEnd[i] += q * q
			all += q * q
		}
		c.KinAll += all / float64(len(s.P))
		c.KinMid += s.Kinetic
		c.Fric += xiBefore * h
		c.Inj += sampler.InjectedVariance(a, h)
		c.Steps++
		c.BlockSteps++
	}
	if windowEnded && c.BlockSteps > 0 {
		c.endBlock()
	}
}

// endBlock folds the current block into the noise's sums.
func (c *CoordWatch) endBlock() {
	n := float64(c.BlockSteps)
	for i, v := range c.Block {
		c.NoiseSum[i] += v
		m := v / n
		c.NoiseMeans[i] += m
		c.NoiseSq[i] += m * m
		c.Block[i] = 0
	}
	c.Blocks++
	c.BlockSteps = 0
}

// MaxCoordUnits is the most units the per-coordinate check grades: a chain
// with more coordinates is graded in this many groups of coordinates of
// neighbouring masses (the index order under unit mass), each group's
// figures the means of its coordinates'.
const MaxCoordUnits = 64

// CoordTolSE returns the number of standard errors of a unit's figures in
// their tolerance when n units are graded: 4, or more with many units
// (sqrt(2 ln n) + 1, the largest of n standard normals' usual reach plus
// one), so that the worst of many in-regime units does not read as a
// failure by chance.
func CoordTolSE(n int) float64 { return math.Max(4, math.Sqrt(2*math.Log(float64(max(n, 1))))+1) }

// CoordUnit is one graded unit of the per-coordinate check: a coordinate,
// or a group of coordinates (First..Last in the order of their masses,
// N of them).
type CoordUnit struct {
	Coord      int     // the coordinate (a group: its first in mass order)
	Last       int     // a group's last coordinate in mass order
	N          int     // coordinates in the unit
	Massed     bool    // the chain has a mass: a group is of neighbouring masses
	MassLo     float64 // the unit's smallest and largest mass (1: unit mass)
	MassHi     float64
	Kinetic    float64 // its kinetic temperature (1 in the regime)
	KineticTol float64 // its statistical tolerance (CoordTolSE standard errors)
	Noise      float64 // gradient noise per step, h^2 Var[g~_i]/(m_i T^2)
	NoiseTol   float64 // its statistical tolerance
	Injected   float64 // the injected variance per step there (nominal times InjScale^2)
	Nominal    float64 // the nominal injected variance per step, sampler.InjectedVariance(A, h)
	// Share is Noise / (Noise + Nominal): the gradient noise's share of
	// the coordinate's diffusion as the window figures define it (against
	// the nominal injected variance, which a noise correction's total
	// keeps).
	Share       float64
	ShareLow    float64 // the share of Noise - NoiseTol (at least 0)
	Widening    float64 // sqrt(Kinetic) - 1: the sd's widening its temperature makes
	WideningTol float64 // the widening KineticTol adds
	Status      HealthStatus
}

// CoordFigures are the per-coordinate check's figures after burn-in
// (Health.CoordVerdict): the worst graded unit by temperature and by
// noise share, quantiles of the units' temperatures, and what the check
// could not tell.
type CoordFigures struct {
	// Recorded says the watch has observed steps after burn-in; Units is
	// the number of units graded (coordinates, or groups when more than
	// MaxCoordUnits), Steps the observed steps, Stride their spacing.
	Recorded     bool
	Units, Steps int
	Stride       int
	Dim          int
	// Hot is the unit whose temperature is furthest from 1 beyond its
	// tolerance, Noisy the one with the largest noise share beyond chance.
	Hot, Noisy CoordUnit
	// KineticQ are the units' temperatures' 0, 10, 50, 90 and 100%
	// quantiles.
	KineticQ [5]float64
	// MeanShare is the noise's share over all coordinates (the window
	// figures' GradNoise, per coordinate).
	MeanShare float64
	// Unchecked says what the check could not tell (empty: all of it):
	// a unit whose tolerance exceeds the warning threshold it is graded by.
	Unchecked string
	// Exact: the gradients are exact (no gradient noise to name).
	Exact bool
	// Corrected: the chain runs with a noise correction (its InjScale).
	Corrected bool
	Status    HealthStatus
}

// CoordVerdict returns the per-coordinate check's figures, graded: a unit
// warns when its temperature widens (or narrows) its sd by more than
// WarnIntSD beyond its tolerance, or its noise share beyond chance exceeds
// WarnShare, and fails beyond FailIntSD or FailShare (the window check's
// thresholds, per unit); the check warns when it cannot tell a unit's
// widening within WarnIntSD (its tolerance is wider) and says so in
// Unchecked. Not Recorded (no observed step after burn-in, a checkpoint
// from before the watch): ok and not graded.
func (hl *Health) CoordVerdict() CoordFigures {
	c := hl.Coords
	out := CoordFigures{Steps: c.Steps, Stride: c.Stride, Dim: len(c.KinEnd), Exact: hl.Exact}
	if c.Steps < 2 || c.KinAll <= 0 {
		return out
	}
	out.Recorded = true
	units := c.units()
	out.Units = len(units)
	tolSE := CoordTolSE(len(units))
	n := float64(c.Steps)
	f := c.Fric / n
	eff := n * math.Min(1, math.Max(2*f*float64(max(c.Stride, 1)), 1/n))
	kinSE := math.Sqrt(2 / eff)
	noiseTot := 0.0
	temps := make([]float64, len(units))
	for u, idx := range units {
		cu := c.unit(idx, n, kinSE, tolSE)
		temps[u] = cu.Kinetic
		noiseTot += cu.Noise * float64(cu.N)
		cu.Status = cu.grade(hl.Exact)
		if u == 0 || cu.tempDev() > out.Hot.tempDev() {
			out.Hot = cu
		}
		if u == 0 || cu.ShareLow > out.Noisy.ShareLow {
			out.Noisy = cu
		}
		out.Status = max(out.Status, cu.Status)
		if cu.WideningTol > WarnIntSD && out.Unchecked == "" {
			out.addUnchecked(fmt.Sprintf("%s's kinetic temperature within %.0f%% of its sd (tolerance %.0f%%: %d observed steps after burn-in are too few)", cu.name(), 100*WarnIntSD, 100*cu.WideningTol, c.Steps))
		}
	}
	if noiseTot > 0 {
		out.MeanShare = noiseTot / (noiseTot + c.Inj/n*float64(len(c.KinEnd)))
	}
	out.Corrected = c.InjScale != nil
	sort.Float64s(temps)
	for q, p := range []float64{0, 0.1, 0.5, 0.9, 1} {
		out.KineticQ[q] = temps[int(math.Round(p*float64(len(temps)-1)))]
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

// units returns the graded units' coordinates: each coordinate alone, or
// MaxCoordUnits groups of coordinates in the order of their masses.
func (c CoordWatch) units() [][]int {
	d := len(c.KinEnd)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	if c.Mass != nil {
		sort.SliceStable(order, func(a, b int) bool { return c.Mass[order[a]] < c.Mass[order[b]] })
	}
	g := min(d, MaxCoordUnits)
	out := make([][]int, g)
	for u := range out {
		out[u] = order[u*d/g : (u+1)*d/g]
	}
	return out
}

// unit returns the figures of the unit of coordinates idx, over n
// observed steps, with kinSE a coordinate's kinetic temperature's
// standard error (relative) and tolSE the standard errors of a tolerance.
func (c CoordWatch) unit(idx []int, n, kinSE, tolSE float64) CoordUnit {
	cu := CoordUnit{Coord: idx[0], N: len(idx), MassLo: 1, MassHi: 1, Massed: c.Mass != nil, Last: idx[len(idx)-1]}
	inj := c.Inj / n
	kin, noise, injU, nse := 0.0, 0.0, 0.0, 0.0
	for k, i := range idx {
		kin += c.KinEnd[i]
		noise += (c.NoiseSum[i] + c.Block[i]) / n
		sc := 1.0
		if c.InjScale != nil {
			sc = c.InjScale[i]
		}
		injU += inj * sc * sc
		nse += blockSE(c.NoiseMeans[i], c.NoiseSq[i], c.Blocks)
		if c.Mass != nil {
			if k == 0 || c.Mass[i] < cu.MassLo {
				cu.MassLo = c.Mass[i]
			}
			if k == 0 || c.Mass[i] > cu.MassHi {
				cu.MassHi = c.Mass[i]
			}
		}
	}
	m := float64(len(idx))
	cu.Kinetic = kin / m / c.KinAll * (c.KinMid / n)
	cu.KineticTol = tolSE * kinSE * cu.Kinetic / math.Sqrt(m)
	cu.Noise, cu.Injected, cu.Nominal = noise/m, injU/m, inj
	cu.NoiseTol = tolSE * nse / m
	if c.Blocks < 5 { // too few blocks for their spread: the temperature's
		cu.NoiseTol = tolSE * -math.Expm1(-2*c.Fric/n) * kinSE * cu.Kinetic / math.Sqrt(m)
	}
	if t := inj + math.Max(cu.Noise, 0); t > 0 {
		cu.Share = math.Max(cu.Noise, 0) / t
	}
	if low := math.Max(cu.Noise-cu.NoiseTol, 0); inj+low > 0 {
		cu.ShareLow = low / (inj + low)
	}
	cu.Widening = math.Sqrt(cu.Kinetic) - 1
	cu.WideningTol = math.Sqrt(cu.Kinetic+cu.KineticTol) - math.Sqrt(cu.Kinetic)
	return cu
}

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
	switch dev := u.tempDev(); {
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
	if !u.Massed {
		return fmt.Sprintf("coordinates %d-%d", u.Coord, u.Last)
	}
	return fmt.Sprintf("the %d coordinates of masses %.3g-%.3g (coordinates %d to %d in mass order)", u.N, u.MassLo, u.MassHi, u.Coord, u.Last)
}

// Cause names the per-coordinate check's main cause: gradient noise in
// some coordinates (a unit's share beyond WarnShare, or a unit off in
// temperature whose noise share exceeds the mean), an uneven kinetic
// temperature (a unit off without more noise than the mean, or with exact
// gradients), or unchecked; CauseNone when ok or not recorded.
func (c CoordFigures) Cause() HealthCause {
	switch {
	case c.Status == HealthOK:
		return CauseNone
	case !c.Exact && c.Noisy.ShareLow > WarnShare:
		return CauseCoordNoise
	case c.Hot.tempDev() > WarnIntSD && !c.Exact && c.Hot.Share > c.MeanShare:
		return CauseCoordNoise
	case c.Hot.tempDev() > WarnIntSD:
		return CauseCoordTemp
	}
	return CauseUnchecked
}

// CoordFix is the per-coordinate check's advice for gradient noise in
// some coordinates (CoordFixCorrected with a noise correction on).
const (
	CoordFix          = "raise the batch (--batch), lower the step (--lr), or use --noise-correction (less injected noise where the gradient brings more) or --mass-scale stiffest"
	CoordFixCorrected = "raise the batch (--batch) or lower the step (--lr): the noise correction is on, and cannot take out more noise than it injects"
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
	return fmt.Sprintf("%.0f%% of the injected %.3g there", 100*u.Noise/u.Injected, u.Injected)
}

// String summarises the per-coordinate figures on one line.
func (c CoordFigures) String() string {
	if !c.Recorded {
		return "per coordinate: not recorded (not checked)"
	}
	return fmt.Sprintf("per coordinate (%d units, %d steps observed, every %d): %s, kinetic %.3f-%.3f (median %.3f), worst %s at %.3f +- %.3f, noisiest %s at share %.0f%% (beyond chance %.0f%%)",
		c.Units, c.Steps, c.Stride, c.Status, c.KineticQ[0], c.KineticQ[4], c.KineticQ[2], c.Hot.name(), c.Hot.Kinetic, c.Hot.KineticTol, c.Noisy.name(), 100*c.Noisy.Share, 100*c.Noisy.ShareLow)
}
