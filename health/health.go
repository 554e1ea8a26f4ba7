// Package health watches the dynamics of one chain of a frictional
// stochastic-gradient kernel (sampler.Frictional: SGHMC, SGNHT) over
// windows of steps: its kinetic temperature, its thermostat, the gradient
// noise and the integration error that heat its momentum, its descent from
// its start, and its mixing after burn-in, graded ok, warn or fail with a
// cause (Health, HealthFigures, Health.Verdict); an SGLD chain, which has
// no momentum, is watched by its gradient noise and discretisation error
// per coordinate and direction instead (LangevinWatch,
// Health.ObserveLangevin). It reads a chain's State
// and kernel and changes neither: the kernels are package sampler's, and
// the driver that steps them (driver.Driver, its StepHealth phase) calls the watch after each
// step. Package diagnose turns its verdicts into advice.
package health

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ptsghmc/ptsghmc/convergence"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// DefaultHealthWindow is the number of steps of a health window when none
// is given.
const DefaultHealthWindow = 1000

// Health watches one chain of a sampler.Frictional kernel: over windows of steps it
// measures the kinetic temperature p'p/D (the dynamics hold it at 1 when
// they are in their regime), the thermostat's level and trend, and the
// gradient noise that enters the momentum each step, h^2 Var[grad U~]/T^2
// per coordinate, estimated from the momentum's own energy balance (see
// MomentumNoise). It is plain data: a driver.Driver run keeps one per rung
// in tempering.PTStats (and so in checkpoints), and a resumed run
// continues it exactly.
type Health struct {
	// Sums over the current window.
	Steps          int
	KinSum, XiFSum float64 // p'p/D, and the friction per step xi h
	XiF1, XiF2     float64 // xi h summed over the window's first and second halves
	NoiseSum       float64 // MomentumNoise terms
	InjSum         float64 // injected variance per step
	// PrevKin is p'p/D after the last step; Started says it is set.
	// KinSum sums the mid-step kinetic temperature sampler.State.Kinetic.
	PrevKin float64
	Started bool
	// Last holds the figures of the last complete window; Windows counts
	// complete windows, After those that ended after burn-in, Bad and
	// Warned those of them whose status was HealthFail and HealthWarn;
	// Worst is the worst status of a window after burn-in.
	Last                        HealthFigures
	Windows, After, Bad, Warned int
	Worst                       HealthStatus
	// WorstWindow holds the figures of the worst window after burn-in
	// (the first of the worst status).
	WorstWindow HealthFigures
	// StepScale multiplies the kernel's step (0 means 1): a noise-aware
	// run shrinks it during burn-in (see driver.StepHealth.NoiseTarget).
	StepScale float64
	// IntSum sums IntegrationError over the window's IntSteps steps;
	// PrevWork is the last observed step's kick terms (its Valid is false
	// when the next step cannot be paired with it: after an exchange, a
	// change of mass or step, or with Observe, which has none).
	IntSum   float64
	IntSteps int
	PrevWork sampler.StepWork
	// The window's IntegrationError terms in IntBlocks consecutive blocks
	// of IntBlockLen(window) steps, for the statistical tolerance of their
	// mean (HealthFigures.IntSDTol; batch means, since successive terms are
	// strongly anti-correlated, an energy error undone by the next step's):
	// IntBlockSum and IntBlockN over the current block, IntBlockMeans and
	// IntBlockSq the sum of the complete blocks' means and of their
	// squares. (Zero in checkpoints from before them: that window's
	// tolerance is computed from the blocks it has.)
	IntBlockSum, IntBlockMeans, IntBlockSq float64
	IntBlockN, IntBlocks                   int
	// The same for each step's gradient-noise term (its MomentumNoise
	// less the integration error paired with it), for GradNoise's
	// statistical tolerance (HealthFigures.NoiseTol). Zero in checkpoints
	// from before them.
	NoiseBlockSum, NoiseBlockMeans, NoiseBlockSq float64
	NoiseBlockN, NoiseBlocks                     int
	// The energy U/T (NotePotential) at the window's first and latest
	// step, and summed, with its squares, over its first and last
	// PotBlockLen steps (PotFirstN, PotLastN steps seen in each): the
	// window's descent (HealthFigures.Descent). PotSeen is whether the
	// kernel's caller reports it.
	PotStart, PotEnd                         float64
	PotFirst, PotFirstSq, PotLast, PotLastSq float64
	PotFirstN, PotLastN                      int
	PotSeen                                  bool
	// Pool sums the figures of the windows after burn-in, and Pooled is
	// their pooled figures (see PoolSums.figures): a persistent problem
	// too small for one window to tell from chance, with few
	// coordinates, shows in the pooled figures. Verdict grades both.
	Pool   PoolSums
	Pooled HealthFigures
	// Mix records the chain's draws after burn-in (NoteDraw): its energy
	// U/T and, when MixCoords, its coordinates, thinned by doubling; the
	// verdict grades their mixing (Mixing, MixFigures). Empty in
	// checkpoints from before it: not graded.
	Mix       convergence.Trace
	MixCoords bool
	// MixWatch says the coordinates are traced though not graded: a model
	// of at most MaxCoordUnits coordinates whose run does not grade them
	// (NoteDraw's coords false). Its verdict is not ok while its least
	// mixed coordinate is short of MinMixESS (MixFigures.Unsure): it warns
	// that it could not check its sds.
	MixWatch bool
	// Exact says the chain's gradients are exact (a full batch: set by
	// its driver, driver.StepHealth.ExactGradients): it can have no gradient
	// noise, and a heating its figures read as noise is the integrator's
	// (HealthFigures.Exact).
	Exact bool
	// Coords is the per-coordinate watch after burn-in (ArmCoords,
	// ObserveCoords), graded by the verdict (CoordVerdict). Empty in
	// checkpoints from before it: not graded.
	Coords CoordWatch
	// Langevin is the SGLD watch (ObserveLangevin): nil for the
	// frictional kernels, and in checkpoints from before it (a resumed
	// SGLD run then watches the steps after the resume).
	Langevin *LangevinWatch
	mixBuf   []float64
}

// PoolSums are sums over the windows after burn-in of their figures, and
// of the squares of those whose tolerance the pooled figures take from
// their spread between windows.
type PoolSums struct {
	Windows, Steps                int
	Kin, KinSq, Fric, Inj, Budget float64
	Noise, NoiseSq, Int, IntSq    float64
	IntMeasured                   bool
}

// add adds window figures f.
func (p *PoolSums) add(f HealthFigures) {
	p.Windows++
	p.Steps += f.Steps
	p.Kin += f.Kinetic
	p.KinSq += f.Kinetic * f.Kinetic
	p.Fric += f.Friction
	p.Inj += f.Injected
	p.Budget += f.Budget
	p.Noise += f.GradNoise
	p.NoiseSq += f.GradNoise * f.GradNoise
	p.Int += f.Integration
	p.IntSq += f.Integration * f.Integration
	p.IntMeasured = p.IntMeasured || f.IntMeasured
}

// figures returns the pooled figures of the windows summed, last the last
// of them: each figure's mean over the windows, graded with tolerances of
// IntTolSE (gradient noise, integration error) and 4 (kinetic
// temperature) standard errors of that mean, from the figures' spread
// between windows (at least 2 windows; with one, last).
func (p PoolSums) figures(last HealthFigures) HealthFigures {
	n := p.Windows
	if n < 2 {
		return last
	}
	fn := float64(n)
	f := HealthFigures{Step: last.Step, Steps: p.Steps, Dim: last.Dim, Kinetic: p.Kin / fn, Friction: p.Fric / fn,
		Injected: p.Inj / fn, GradNoise: p.Noise / fn, Integration: p.Int / fn, Budget: p.Budget / fn, IntMeasured: p.IntMeasured,
		XiGain: last.XiGain}
	f.KineticTol = 4 * blockSE(p.Kin, p.KinSq, n)
	f.NoiseTol = IntTolSE * blockSE(p.Noise, p.NoiseSq, n)
	if total := f.Injected + math.Max(f.GradNoise, 0); total > 0 {
		f.Share = math.Max(f.GradNoise, 0) / total
	}
	if low := math.Max(f.GradNoise-f.NoiseTol, 0); f.Injected+low > 0 {
		f.ShareLow = low / (f.Injected + low)
	}
	if f.IntMeasured {
		if tot := f.Injected + math.Max(f.Integration, 0); tot > 0 {
			f.IntShare = math.Max(f.Integration, 0) / tot
		}
		f.IntSDError = IntSDWidening(f.Integration, f.Friction)
		se := blockSE(p.Int, p.IntSq, n)
		f.IntSDTol = IntSDWidening(math.Max(f.Integration, 0)+IntTolSE*se, f.Friction) - f.IntSDError
	}
	f.Status = f.grade()
	return f
}

// Verdict returns the chain's verdict after burn-in and the figures behind
// it: the worst window's status and figures, or the pooled figures'
// (Pooled) when they grade worse, with the chain's mixing (Mixing) in
// their Mix and its Exact: a chain whose graded coordinates have fewer
// than MinMixESS effective draws fails (cause CauseUnmixed, unless its
// dynamics fail for a cause of their own).
func (hl *Health) Verdict() (HealthStatus, HealthFigures) {
	if hl.Langevin != nil {
		return hl.langevinVerdict()
	}
	fig := hl.WorstWindow
	if hl.Pool.Windows >= 2 && hl.Pooled.Status > hl.Worst {
		fig = hl.Pooled
	}
	if hl.After == 0 { // no window after burn-in: nothing to judge
		return hl.Worst, fig
	}
	fig.Mix = hl.Mixing()
	fig.Exact = fig.Exact || hl.Exact
	fig.Coord = hl.CoordVerdict()
	if m := fig.Mix; m.Unsure() {
		fig.Coord.addUnchecked(unsureText(m))
	}
	fig.Status = max(fig.Status, fig.mixGrade(), fig.Coord.Status)
	return fig.Status, fig
}

// unsureText says what a chain whose mixing is Unsure could not check.
func unsureText(m MixFigures) string {
	return fmt.Sprintf("coordinate %d's sd within about 15%% (its ESS is %.0f in %d steps after burn-in, %d needed; the coordinates' mixing is graded only on request, driver.StepHealth.MixCoords)", m.Coord, m.ESS, m.Draws, MinMixESS)
}

// HealthFigures are one window's measurements.
type HealthFigures struct {
	Step  int `json:"step"`  // the window's last step
	Steps int `json:"steps"` // steps in the window
	Dim   int `json:"dim"`   // D
	// Kinetic is the mean mid-step kinetic temperature (sampler.State.Kinetic): the
	// configuration's temperature, 1 in the dynamics' regime.
	Kinetic float64 `json:"kinetic"`
	// KineticTol is the statistical tolerance of Kinetic around 1 for a
	// chain in equilibrium: 4 standard errors of a window mean.
	KineticTol float64 `json:"kinetic_tol"`
	Friction   float64 `json:"friction"` // mean friction per step xi h (SGHMC: C h)
	XiTrend    float64 `json:"xi_trend"` // change of the mean xi h from the window's first half to its second, relative to the mean
	Injected   float64 `json:"injected"` // injected momentum variance per step and coordinate, sampler.InjectedVariance(A, h)
	// GradNoise is the estimated gradient-noise variance per step and
	// coordinate, h^2 Var[grad U~]/T^2: the momentum's heating
	// (MomentumNoise) less the integration error's part of it when that
	// was measured (IntMeasured).
	GradNoise float64 `json:"grad_noise"`
	// Share is GradNoise / (GradNoise + Injected), the gradient noise's
	// share in the momentum's diffusion.
	Share float64 `json:"share"`
	// NoiseTol is GradNoise's statistical tolerance: IntTolSE standard
	// errors of the window's mean, from the means of blocks of
	// IntBlockLen steps (successive terms are correlated over the
	// momentum's relaxation time). ShareLow is the share of GradNoise -
	// NoiseTol (at least 0): the share the window shows beyond chance,
	// which the grade compares with WarnShare and FailShare. With few
	// coordinates a window's GradNoise varies by several hundredths even
	// when there is no gradient noise at all (a full batch): p'p/D
	// fluctuates by sqrt(2/D) per step.
	NoiseTol float64 `json:"noise_tol"`
	ShareLow float64 `json:"share_low"`
	// Integration is the integration error's part of the momentum's
	// heating per step and coordinate, twice the mean energy error of the
	// steps' deterministic part (IntegrationError); IntShare is
	// Integration / (Integration + Injected). IntMeasured is false when
	// the window had no kick terms (Observe): then Integration is 0 and
	// GradNoise holds both.
	Integration float64 `json:"integration"`
	IntShare    float64 `json:"int_share"`
	IntMeasured bool    `json:"int_measured"`
	// IntSDError is the widening of the sds the integration error makes,
	// sqrt(1 + Integration / (1 - exp(-2 Friction))) - 1: the heating per
	// step over the share of the momentum's variance the friction removes
	// per step is the configuration's excess variance (on Gaussians with
	// exact gradients it predicts the measured widening within a fifth of
	// it, TestIntegrationShare). An average over coordinates: the stiff
	// ones are wider, the others not.
	IntSDError float64 `json:"int_sd_error"`
	// IntSDTol is IntSDError's statistical tolerance: the widening
	// IntTolSE standard errors of the window's mean integration error
	// add to it (intSDTol). The grade compares IntSDError - IntSDTol with
	// WarnIntSD and FailIntSD, so that a chain whose widening is below them
	// is not graded by a window that read high by chance (with a few
	// coordinates a window's reading varies by a tenth or more of itself).
	IntSDTol float64 `json:"int_sd_tol"`
	// Budget is (Injected + GradNoise + Integration)/2: the thermostat's level solves
	// 1 - exp(-xi h) = Budget (the friction per step that removes the
	// momentum variance each step adds, at unit configurational
	// temperature), so at a budget of 1 or more there is no level and xi
	// grows without bound, the momentum wiped every step; near 1 the
	// friction per step is several units and the same happens in effect.
	Budget float64 `json:"budget"`
	// XiGain is the thermostat's gain h^2/Q (sampler.SGNHT.ThermostatGain; 0 for
	// a kernel without a thermostat): the friction per step falls by at
	// most XiGain (1 - Kinetic) per step.
	XiGain float64 `json:"xi_gain"`
	// Descent is the momentum's heating per step and coordinate that the
	// potential's fall over the window supplies, 2 (U/T at its first step
	// - at its last) / (D (steps - 1)): in
	// equilibrium about 0 (U/T fluctuates by about sqrt(D/2)), in a chain
	// still descending from its start (a burn-in that ended inside the
	// start-up transient) positive. Beyond its tolerance (either sign) it
	// is taken out of GradNoise, which
	// without it read a full-batch chain's descent as gradient noise (issue
	// 43: shares of 80-98% in the windows after a burn-in of 250-1,000
	// steps from a far start). DescentTol is its tolerance, 3 standard
	// errors (Health.descent); DescentMeasured whether the window had U
	// (NotePotential).
	Descent         float64 `json:"descent"`
	DescentTol      float64 `json:"descent_tol"`
	DescentMeasured bool    `json:"descent_measured"`
	// Mix is the chain's mixing after burn-in, on the figures of a verdict
	// (Health.Verdict; zero on a window's): graded when its run traces
	// the coordinates (MixFigures.Short fails the verdict).
	Mix MixFigures `json:"mix"`
	// Exact says the gradients were exact (a full batch): the heating its
	// GradNoise reads cannot be gradient noise, and is named the
	// integrator's (an unstable step) by Cause and Problems.
	Exact bool `json:"exact"`
	// Coord is the per-coordinate check after burn-in, on the figures of a
	// verdict (Health.Verdict; zero on a window's): its Status enters the
	// verdict's.
	Coord CoordFigures `json:"coord"`
	// Langevin holds an SGLD chain's figures (Health.ObserveLangevin),
	// which then grade it in place of the momentum's (nil for the
	// frictional kernels).
	Langevin *LangevinFigures `json:"langevin,omitempty"`
	Status   HealthStatus     `json:"status"`
}

// descent returns the window's Descent and DescentTol: 2 (U/T at its
// first step - at its latest) / (D (steps - 1)), and 3 standard errors of
// it, from the equilibrium fluctuation of U/T (variance about D/2 at each
// end) and the spread of U/T over each end's PotBlockLen steps (a
// minibatch estimate's noise, and the fluctuation within the block).
func (hl *Health) descent(dim int) (float64, float64) {
	n1, n2 := float64(hl.PotFirstN), float64(hl.PotLastN)
	m1, m2 := hl.PotFirst/n1, hl.PotLast/n2
	v1 := math.Max(hl.PotFirstSq/n1-m1*m1, 0)
	v2 := math.Max(hl.PotLastSq/n2-m2*m2, 0)
	scale := 2 / (float64(dim) * math.Max(float64(hl.Steps-1), 1))
	return scale * (hl.PotStart - hl.PotEnd), 3 * scale * math.Sqrt(float64(dim)+v1+v2)
}

// descentBeyondChance returns Descent less its tolerance, at least 0.
func (f HealthFigures) descentBeyondChance() float64 {
	if !f.DescentMeasured {
		return 0
	}
	return math.Max(f.Descent-f.DescentTol, 0)
}

// DescentShare returns the descent's heating beyond its tolerance as a
// share of the momentum's diffusion (it plus the injected variance),
// which the grade compares with WarnShare and FailShare: a chain whose
// potential still falls this much is not sampling the posterior yet.
func (f HealthFigures) DescentShare() float64 {
	d := f.descentBeyondChance()
	if d+f.Injected <= 0 {
		return 0
	}
	return d / (d + f.Injected)
}

// PotBlockLen returns the steps at each end of a window of window steps
// whose energies' spread gives its descent's tolerance: a tenth of it (at
// least 1). With few coordinates and a small batch a minibatch estimate of
// U is noisy enough to read as a descent; the spread measures that.
func PotBlockLen(window int) int { return max(window/10, 1) }

// NotePotential records the energy U/T of the chain's state before the
// step it is called for (sampler.State.U over the rung's temperature), in a
// health window of window steps; driver.StepHealth calls it before each
// ObserveStep. Windows without it do not measure their descent.
func (hl *Health) NotePotential(uOverT float64, window int) {
	if math.IsNaN(uOverT) || math.IsInf(uOverT, 0) {
		return
	}
	if window <= 0 {
		window = DefaultHealthWindow
	}
	if hl.Steps == 0 {
		hl.PotFirst, hl.PotFirstSq, hl.PotLast, hl.PotLastSq, hl.PotFirstN, hl.PotLastN = 0, 0, 0, 0, 0, 0
		hl.PotStart, hl.PotSeen = uOverT, true
	}
	hl.PotEnd = uOverT
	l := PotBlockLen(window)
	if hl.Steps < l {
		hl.PotFirst += uOverT
		hl.PotFirstSq += uOverT * uOverT
		hl.PotFirstN++
	}
	if hl.Steps >= window-l {
		hl.PotLast += uOverT
		hl.PotLastSq += uOverT * uOverT
		hl.PotLastN++
	}
}

// SettleSteps returns about how many more steps the thermostat needs to
// fall from the window's friction per step to its level, -log(1 - Budget)
// (the friction that removes the momentum's heating at temperature 1),
// when the window is cold because it is still falling from an overshoot
// (kinetic temperature below 1, friction above 1.2 times its level): the
// excess over XiGain (1 - Kinetic), its fall per step. 0 otherwise, or
// when the gain is unknown.
func (f HealthFigures) SettleSteps() int {
	if f.XiGain <= 0 || f.Kinetic >= 1 || f.Budget >= 1 {
		return 0
	}
	level := -math.Log1p(-math.Max(f.Budget, 0))
	if f.Friction <= 1.2*level {
		return 0
	}
	return int(math.Ceil((f.Friction - level) / (f.XiGain * (1 - f.Kinetic))))
}

// HealthStatus grades a window.
type HealthStatus int

// Health statuses, from good to bad.
const (
	HealthOK   HealthStatus = iota
	HealthWarn              // gradient noise large enough to bias the posterior's spread by a few percent
	HealthFail              // the dynamics left their regime: the samples are not from the posterior
)

// String returns ok, warn or fail.
func (s HealthStatus) String() string {
	switch s {
	case HealthOK:
		return "ok"
	case HealthWarn:
		return "warn"
	case HealthFail:
		return "fail"
	}
	return fmt.Sprintf("HealthStatus(%d)", int(s))
}

// MarshalJSON writes the status as its word, "ok", "warn" or "fail" (eval
// --json's health). A checkpoint's gob keeps the number: gob does not call
// it.
func (s HealthStatus) MarshalJSON() ([]byte, error) {
	if s < HealthOK || s > HealthFail {
		return nil, fmt.Errorf("health: no status %d", int(s))
	}
	return json.Marshal(s.String())
}

// UnmarshalJSON reads the word MarshalJSON writes.
func (s *HealthStatus) UnmarshalJSON(b []byte) error {
	var w string
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("health: status %s: expected \"ok\", \"warn\" or \"fail\"", b)
	}
	for st := HealthOK; st <= HealthFail; st++ {
		if w == st.String() {
			*s = st
			return nil
		}
	}
	return fmt.Errorf("health: status %q: expected \"ok\", \"warn\" or \"fail\"", w)
}

// Thresholds of the health grades (see docs/posterior-checks.md for the
// measurements behind them). On the linear-regression suite, whose exact
// posterior is known, SGNHT with epoch minibatches samples sds about
// 0.3 x Share too small; with-replacement minibatches about a tenth of that.
const (
	// WarnShare is the noise share above which a window warns.
	WarnShare = 0.1
	// FailShare is the noise share above which a window fails.
	FailShare = 0.3
	// FailBudget is the budget above which a window fails: the friction
	// per step needed to hold it exceeds -log(1-FailBudget), 2.3.
	FailBudget = 0.9
	// WarnIntSD is the integration error's estimated widening of the
	// sds (HealthFigures.IntSDError, IntSDWidening) above which a window
	// warns, and FailIntSD the one above which it fails. They are
	// tolerated biases of the sds, 5% and 10%, mapped to the measured
	// heating by the energy balance of IntSDWidening (validated within a
	// quarter of the widening, TestIntegrationShare): in terms of the
	// integration error's share of the momentum's diffusion, s =
	// Integration / (Integration + Injected), the widening is about
	// 1/sqrt(1 - s) - 1 at small friction per step, so 5% is a share of
	// 9% and 10% one of 17%; in terms of the step, a direction of
	// frequency omega is widened by about 1/sqrt(1 - (omega h)^2/4) - 1,
	// so 5% is omega h = 0.61 and 10% omega h = 0.83 when every
	// direction is that stiff. Below WarnIntSD a window is ok and its
	// figures still report the widening.
	WarnIntSD = 0.05
	FailIntSD = 0.1
	// KineticSlack is the kinetic temperature's allowed systematic error
	// (besides its statistical tolerance) before a window warns; four
	// times it fails.
	KineticSlack = 0.05
)

// MomentumNoise returns one step's estimate of the gradient noise that
// entered the momentum, per coordinate: the momentum's energy balance
// over a step p <- exp(-f) p - h grad U/T + sqrt(inj) N(0, I) + noise,
//
//	E[p'p/D after] = exp(-2 f) p'p/D before + inj + h^2 Var[grad U~]/T^2 + O((omega h)^4),
//
// so kinAfter - exp(-2 f) kinBefore - inj estimates h^2 Var[grad U~]/T^2
// (the force terms cancel in equilibrium to that order, omega h the step
// in units of the fastest oscillation). f = xi h is the friction the step
// used. The estimate needs no extra gradients, holds with the thermostat
// far from its level (it is a per-step balance, not a stationary one), and
// averages to the noise over a window; during burn-in the descent adds
// kinetic energy and it overestimates. With minibatches drawn in epochs
// (without replacement) successive noises are slightly anti-correlated and
// part of their heating cancels within the momentum's memory: the estimate
// is then the heating the momentum actually receives, below
// h^2 Var[grad U~] when 1/f approaches the number of batches per epoch.
func MomentumNoise(kinBefore, kinAfter, f, injected float64) float64 {
	return kinAfter - math.Exp(-2*f)*kinBefore - injected
}

// IntegrationError returns the energy error, per coordinate and doubled,
// of the deterministic part of step t (its kick and drift) from the kick
// terms (sampler.StepWork) of steps t and t+1: with k the kick h M^-1/2 grad U~/T
// and q' step t's new momentum, the drift changes U/T by about
// q”(k_t + k_{t+1})/2 (the trapezoid rule, exact on a quadratic U) and the
// kick changes the kinetic energy by -q”k_t - k_t'k_t/2, so
//
//	2 deltaH / D = (Before_{t+1} - After_t - Kick_t) / D.
//
// Its mean is the integration error's part of the momentum's heating
// MomentumNoise, and the gradient noise's part cancels in it: the noise of
// g_t enters q' (raising -After_t by h^2 Var) and k_t'k_t (lowering -Kick_t
// by the same), and the noise of g_{t+1} is independent of q' (with
// minibatches drawn in epochs slightly anti-correlated: the estimate then
// takes about 1/(batches per epoch - 1) of the noise for integration
// error). So the heating splits into integration error, this, and gradient
// noise, the rest, and a full-batch chain reads no gradient noise.
//
// On a Gaussian with exact gradients and friction 0.1 per step its mean
// gives, through IntSDWidening, sds 1.2% wide at omega h = 0.3, 3.7% at
// 0.5, 7.5% at 0.7 and 22% at 1.1, measured 1.2%, 3.4%, 7.1% and 21%
// (TestIntegrationShare).
func IntegrationError(prev, next sampler.StepWork, dim int) float64 {
	return (next.Before - prev.After - prev.Kick) / float64(dim)
}

// IntSDWidening returns the relative widening of the sds that an
// integration error heating the momentum by integ per step and coordinate
// makes at friction f per step (xi h):
//
//	sqrt(1 + integ / (1 - exp(-2 f))) - 1.
//
// The friction removes the share 1 - exp(-2 f) of the momentum's excess
// variance per step, so in equilibrium the heating holds an excess of
// integ/(1 - exp(-2 f)) in its variance, and the positions' variance
// follows (on Gaussians with exact gradients the prediction is within a
// quarter of the measured widening, TestIntegrationShare). It is an average
// over coordinates (integ is): the stiff directions are wider, the others
// not. 0 when integ <= 0 or f <= 0.
func IntSDWidening(integ, f float64) float64 {
	if integ <= 0 || f <= 0 {
		return 0
	}
	return math.Sqrt(1+integ/-math.Expm1(-2*f)) - 1
}

// IntTolSE is the number of standard errors of a window's mean
// integration error in HealthFigures.IntSDTol.
const IntTolSE = 3

// IntBlockLen returns the length of the blocks whose means give a
// window's integration error its standard error: a tenth of the window (0:
// DefaultHealthWindow), at least 1.
func IntBlockLen(window int) int {
	if window <= 0 {
		window = DefaultHealthWindow
	}
	return max(window/10, 1)
}

// intSDTol returns the widening that IntTolSE standard errors of the
// window's mean integration error m add to the widening of m at friction f
// per step; the standard error is the blocks' means' (n of them, summing
// to sum, their squares to sq) sd over sqrt(n). 0 with fewer than 2 blocks.
func intSDTol(m, sum, sq float64, n int, f float64) float64 {
	if n < 2 {
		return 0
	}
	se := blockSE(sum, sq, n)
	return IntSDWidening(math.Max(m, 0)+IntTolSE*se, f) - IntSDWidening(m, f)
}

// blockSE returns the standard error of the mean of n block means whose
// sum is sum and whose squares sum to sq: their sd over sqrt(n). 0 with
// fewer than 2 blocks.
func blockSE(sum, sq float64, n int) float64 {
	if n < 2 {
		return 0
	}
	mb := sum / float64(n)
	v := math.Max(sq/float64(n)-mb*mb, 0) * float64(n) / float64(n-1)
	return math.Sqrt(v / float64(n))
}

// Start sets the kinetic temperature p'p/D of the chain's initial momentum,
// which the first step's noise estimate needs (driver.StepHealth.Start calls
// it). Without it the first observed step only records its momentum and
// the first window is one step late.
func (hl *Health) Start(kin float64) { hl.PrevKin, hl.Started = kin, true }

// Observe records one step of kernel k: xiBefore is the thermostat the step
// used (sampler.State.Xi before it), kinEnd is p'p/D after it
// (sampler.State.KineticTemperature) and kinMid the step's mid-step kinetic
// temperature (sampler.State.Kinetic). At the end of a window
// of window steps (0: DefaultHealthWindow) it computes the window's figures
// into Last, grades them, and when afterBurnIn counts bad windows; it then
// returns true.
//
// Observe has no kick terms and so cannot tell integration error from
// gradient noise (it reports both as GradNoise); ObserveState can.
func (hl *Health) Observe(k sampler.Frictional, xiBefore, kinEnd, kinMid float64, dim, step, window int, afterBurnIn bool) bool {
	hl.PrevWork = sampler.StepWork{}
	return hl.observe(k, xiBefore, kinEnd, kinMid, sampler.StepWork{}, dim, step, window, afterBurnIn)
}

// ObserveState records one step of kernel k on state s as Observe does,
// reading kinEnd, kinMid and the dimension from s, and also its kick
// terms (sampler.State.Work), which measure the integration error separately from
// the gradient noise (IntegrationError).
func (hl *Health) ObserveState(k sampler.Frictional, xiBefore float64, s *sampler.State, step, window int, afterBurnIn bool) bool {
	return hl.observe(k, xiBefore, s.KineticAfterStep(), s.Kinetic, s.Work, len(s.P), step, window, afterBurnIn)
}

// ObserveStep records one step of kernel k as Observe does, with the
// step's kick terms w (not Valid: none), which measure the integration
// error separately from the gradient noise. kinEnd is p'p/D after the step
// (sampler.State.KineticAfterStep), kinMid the mid-step kinetic temperature
// (sampler.State.Kinetic) and dim the dimension. It returns true at the end of a
// window.
func (hl *Health) ObserveStep(k sampler.Frictional, xiBefore, kinEnd, kinMid float64, w sampler.StepWork, dim, step, window int, afterBurnIn bool) bool {
	return hl.observe(k, xiBefore, kinEnd, kinMid, w, dim, step, window, afterBurnIn)
}

// observe is Observe with the step's kick terms w (not Valid: none).
func (hl *Health) observe(k sampler.Frictional, xiBefore, kinEnd, kinMid float64, w sampler.StepWork, dim, step, window int, afterBurnIn bool) bool {
	if window <= 0 {
		window = DefaultHealthWindow
	}
	h, a := k.Dynamics()
	inj := sampler.InjectedVariance(a, h)
	f := xiBefore * h
	e := 0.0 // the integration error paired with this step (the previous step's)
	if hl.PrevWork.Valid && w.Valid {
		e = IntegrationError(hl.PrevWork, w, dim)
		hl.IntSum += e
		hl.IntSteps++
		hl.IntBlockSum += e
		if hl.IntBlockN++; hl.IntBlockN >= IntBlockLen(window) {
			m := hl.IntBlockSum / float64(hl.IntBlockN)
			hl.IntBlockMeans += m
			hl.IntBlockSq += m * m
			hl.IntBlocks++
			hl.IntBlockSum, hl.IntBlockN = 0, 0
		}
	}
	hl.PrevWork = w
	if !hl.Started {
		hl.PrevKin, hl.Started = kinEnd, true
		return false
	}
	hl.Steps++
	hl.KinSum += kinMid
	hl.XiFSum += f
	if hl.Steps <= window/2 {
		hl.XiF1 += f
	} else {
		hl.XiF2 += f
	}
	mn := MomentumNoise(hl.PrevKin, kinEnd, f, inj)
	hl.NoiseSum += mn
	hl.NoiseBlockSum += mn - e
	if hl.NoiseBlockN++; hl.NoiseBlockN >= IntBlockLen(window) {
		m := hl.NoiseBlockSum / float64(hl.NoiseBlockN)
		hl.NoiseBlockMeans += m
		hl.NoiseBlockSq += m * m
		hl.NoiseBlocks++
		hl.NoiseBlockSum, hl.NoiseBlockN = 0, 0
	}
	hl.InjSum += inj
	hl.PrevKin = kinEnd
	if hl.Steps < window {
		return false
	}
	hl.endWindow(hl.windowFigures(k, dim, step, window), afterBurnIn)
	return true
}

// windowFigures returns the figures of the window that ends at step (of
// the given length, for a chain of dim coordinates stepped by k), graded.
func (hl *Health) windowFigures(k sampler.Frictional, dim, step, window int) HealthFigures {
	n := float64(hl.Steps)
	fig := HealthFigures{Step: step, Steps: hl.Steps, Dim: dim, Kinetic: hl.KinSum / n, Friction: hl.XiFSum / n,
		Injected: hl.InjSum / n, GradNoise: hl.NoiseSum / n}
	n1, n2 := float64(window/2), n-float64(window/2)
	if fig.Friction != 0 {
		fig.XiTrend = (hl.XiF2/n2 - hl.XiF1/n1) / math.Abs(fig.Friction)
	}
	fig.Budget = (fig.Injected + math.Max(fig.GradNoise, 0)) / 2
	if hl.IntSteps > 0 {
		fig.IntMeasured = true
		fig.Integration = hl.IntSum / float64(hl.IntSteps)
		fig.GradNoise -= fig.Integration
		if tot := fig.Injected + math.Max(fig.Integration, 0); tot > 0 {
			fig.IntShare = math.Max(fig.Integration, 0) / tot
		}
		fig.IntSDError = IntSDWidening(fig.Integration, fig.Friction)
		fig.IntSDTol = intSDTol(fig.Integration, hl.IntBlockMeans, hl.IntBlockSq, hl.IntBlocks, fig.Friction)
	}
	if hl.PotSeen && hl.PotFirstN > 0 && hl.PotLastN > 0 {
		fig.DescentMeasured = true
		fig.Descent, fig.DescentTol = hl.descent(dim)
		if math.Abs(fig.Descent) > fig.DescentTol { // beyond chance: not noise
			fig.GradNoise -= fig.Descent
		}
	}
	if total := fig.Injected + math.Max(fig.GradNoise, 0); total > 0 {
		fig.Share = math.Max(fig.GradNoise, 0) / total
	}
	fig.NoiseTol = IntTolSE * blockSE(hl.NoiseBlockMeans, hl.NoiseBlockSq, hl.NoiseBlocks)
	if low := math.Max(fig.GradNoise-fig.NoiseTol, 0); fig.Injected+low > 0 {
		fig.ShareLow = low / (fig.Injected + low)
	}
	// p'p/D has variance 2/D per step and relaxes over about 1/(2 f)
	// steps; a window mean's standard error is about
	// sqrt(2/D / (window * min(1, 2 f))).
	eff := n * math.Min(1, math.Max(2*fig.Friction, 1/n))
	fig.KineticTol = 4 * math.Sqrt(2/float64(dim)/eff)
	if g, ok := k.(interface{ ThermostatGain() float64 }); ok {
		fig.XiGain = g.ThermostatGain()
	}
	fig.Status = fig.grade()
	return fig
}

// tally counts a window after burn-in in the verdict: failed, warned,
// the worst.
func (hl *Health) tally(fig HealthFigures) {
	hl.After++
	switch fig.Status {
	case HealthFail:
		hl.Bad++
	case HealthWarn:
		hl.Warned++
	}
	if hl.After == 1 || fig.Status > hl.Worst {
		hl.WorstWindow = fig
	}
	hl.Worst = max(hl.Worst, fig.Status)
}

// endWindow records the figures fig of the window that just ended (in the
// verdict after burn-in) and starts the next window's sums.
func (hl *Health) endWindow(fig HealthFigures, afterBurnIn bool) {
	hl.Last = fig
	hl.Windows++
	if afterBurnIn {
		hl.tally(fig)
		hl.Pool.add(fig)
		hl.Pooled = hl.Pool.figures(fig)
	}
	hl.Steps, hl.KinSum, hl.XiFSum, hl.XiF1, hl.XiF2, hl.NoiseSum, hl.InjSum = 0, 0, 0, 0, 0, 0, 0
	hl.IntSum, hl.IntSteps = 0, 0
	hl.IntBlockSum, hl.IntBlockMeans, hl.IntBlockSq, hl.IntBlockN, hl.IntBlocks = 0, 0, 0, 0, 0
	hl.NoiseBlockSum, hl.NoiseBlockMeans, hl.NoiseBlockSq, hl.NoiseBlockN, hl.NoiseBlocks = 0, 0, 0, 0, 0
}

// ShareBeyondChance returns the gradient noise's share beyond chance, ShareLow, or
// Share for figures without a tolerance (from before NoiseTol).
func (f HealthFigures) ShareBeyondChance() float64 {
	if f.NoiseTol == 0 {
		return f.Share
	}
	return f.ShareLow
}

// intSD returns the integration error's widening of the sds less its
// statistical tolerance, IntSDError - IntSDTol: the widening the window
// shows beyond chance, which the grade compares with WarnIntSD and
// FailIntSD.
func (f HealthFigures) intSD() float64 { return f.IntSDError - f.IntSDTol }

// grade returns the window's status: fail when the momentum's budget has
// no equilibrium, the noise share exceeds FailShare, the integration error
// widens the sds by more than FailIntSD beyond its tolerance or the kinetic
// temperature is off by more than 4 KineticSlack beyond its tolerance; warn
// for a share above WarnShare, an integration error above WarnIntSD or a kinetic temperature off by more than
// KineticSlack beyond its tolerance.
func (f HealthFigures) grade() HealthStatus {
	return max(f.gradeDynamics(), f.mixGrade())
}

// mixGrade returns fail when the figures' mixing is graded and short
// (MixFigures.Short), else ok.
func (f HealthFigures) mixGrade() HealthStatus {
	if f.Mix.Short() {
		return HealthFail
	}
	return HealthOK
}

// gradeDynamics grades the dynamics' figures alone (grade without the
// mixing).
func (f HealthFigures) gradeDynamics() HealthStatus {
	if f.Langevin != nil {
		return f.Langevin.Status
	}
	dev := math.Abs(f.Kinetic-1) - f.KineticTol
	switch {
	case f.Budget >= FailBudget, f.ShareBeyondChance() > FailShare, f.DescentShare() > FailShare, f.intSD() > FailIntSD, dev > 4*KineticSlack, math.IsNaN(f.Kinetic):
		return HealthFail
	case f.ShareBeyondChance() > WarnShare, f.DescentShare() > WarnShare, f.intSD() > WarnIntSD, dev > KineticSlack:
		return HealthWarn
	}
	return HealthOK
}

// NoiseReduction returns the factor by which the gradient noise per step
// (h^2 Var[grad U~], proportional to the learning rate h^2 and to 1/batch)
// must shrink, the injected noise per step held, for the share to fall to
// target: a value below 1 (1 when it is already there).
func (f HealthFigures) NoiseReduction(target float64) float64 {
	if f.GradNoise <= 0 || f.Share <= target {
		return 1
	}
	want := f.Injected * target / (1 - target)
	return want / f.GradNoise
}

// Problems returns the window's problems in words, empty when it is ok.
func (f HealthFigures) Problems() []string {
	var out []string
	if f.Langevin != nil {
		out = append(out, f.Langevin.Problems()...)
		return append(out, f.moreProblems()...)
	}
	if f.Budget >= FailBudget {
		noise := "gradient noise"
		if f.Exact {
			noise = "unexplained heating (exact gradients: not noise)"
		}
		out = append(out, fmt.Sprintf("the momentum receives %.3g of variance per step (injected %.3g + %s %.3g + integration error %.3g), more than friction can remove at temperature 1 (2): the thermostat grows without bound and the momentum is wiped every step", 2*f.Budget, f.Injected, noise, f.GradNoise, f.Integration))
	}
	if f.ShareBeyondChance() > WarnShare && f.Exact {
		out = append(out, fmt.Sprintf("the momentum is heated by %.3g +- %.2g per step beyond the injected %.3g and the integration error measured, with exact gradients (a full batch: no gradient noise): the integrator is unstable at this step (too large for the stiffest directions, or a mass too light for them), where the measured integration error no longer accounts for its heating", f.GradNoise, f.NoiseTol, f.Injected))
	} else if f.ShareBeyondChance() > WarnShare {
		out = append(out, fmt.Sprintf("gradient noise is %.0f%% of the momentum's diffusion (h^2 Var[grad U~] = %.3g +- %.2g per step against %.3g injected)", 100*f.Share, f.GradNoise, f.NoiseTol, f.Injected))
	}
	if f.DescentShare() > WarnShare {
		out = append(out, fmt.Sprintf("the chain is still descending from its start: its potential U/T fell by %.3g over the window, heating the momentum by %.3g per step against %.3g injected (the start-up transient)", f.Descent*float64(f.Dim)*float64(max(f.Steps-1, 1))/2, f.Descent, f.Injected))
	}
	if f.intSD() > WarnIntSD {
		out = append(out, fmt.Sprintf("integration error: the step is too large for the stiffest directions (energy error heats the momentum by %.3g per step against %.3g injected; sds about %.0f%% wide on average, more than the %.0f%% tolerated)", f.Integration, f.Injected, 100*f.IntSDError, 100*WarnIntSD))
	}
	if dev := math.Abs(f.Kinetic-1) - f.KineticTol; dev > KineticSlack {
		out = append(out, fmt.Sprintf("kinetic temperature %.3f, not 1 (tolerance %.3f)", f.Kinetic, f.KineticTol+KineticSlack))
	}
	if n := f.SettleSteps(); n > 0 && f.Status != HealthOK {
		out = append(out, fmt.Sprintf("thermostat still falling from an overshoot (friction per step %.3g, about %d more steps to its level)", f.Friction, n))
	}
	if f.Friction != 0 && math.Abs(f.XiTrend) > 0.1 && f.Kinetic > 1 {
		out = append(out, fmt.Sprintf("thermostat still rising (friction per step %.3g, %+.0f%% across the window)", f.Friction, 100*f.XiTrend))
	}
	return append(out, f.moreProblems()...)
}

// moreProblems returns the per-coordinate check's and the mixing's
// problems in words.
func (f HealthFigures) moreProblems() []string {
	out := f.Coord.Problems()
	if f.Mix.Short() {
		out = append(out, fmt.Sprintf("not mixed: coordinate %d has an effective sample size of %.0f in %d steps after burn-in, fewer than the %d that bound an sd within about 15%%", f.Mix.Coord, f.Mix.ESS, f.Mix.Draws, MinMixESS))
	}
	return out
}

// HealthCause names what put a window out of its regime.
type HealthCause string

// Causes of a window's problems.
const (
	CauseNone        HealthCause = ""
	CauseNoise       HealthCause = "gradient noise"    // fix: precondition, a larger batch or a smaller step
	CauseIntegration HealthCause = "integration error" // fix: a smaller step, or precondition
	CauseThermostat  HealthCause = "thermostat"        // fix: a longer burn-in
	// CauseStartup: the chain is still descending from its start (its
	// potential falls: HealthFigures.Descent); fix: a longer burn-in.
	CauseStartup HealthCause = "start-up transient"
	// CauseUnmixed: the dynamics are in their regime but the chain has
	// too few effective draws in a graded coordinate (MixFigures.Short)
	// for its sds to be bounded within about 15%; fix: a longer run, or
	// a kernel or mass that mixes faster.
	CauseUnmixed HealthCause = "not mixed"
	// CauseCoordNoise: the totals are in their regime but the gradient
	// noise is uneven across coordinates (CoordFigures): some run hot,
	// or their noise share is beyond WarnShare; fix: a larger batch, a
	// smaller step, the noise correction or a mass scaled to the
	// stiffest coordinate.
	CauseCoordNoise HealthCause = "gradient noise in some coordinates"
	// CauseCoordTemp: some coordinates' kinetic temperature is off
	// without gradient noise to explain it (exact gradients: the
	// integrator in the stiff coordinates); fix: a smaller step.
	CauseCoordTemp HealthCause = "uneven kinetic temperature"
	// CauseCoordInt: a coordinate's or a direction's integration error
	// widens its sd beyond the threshold while the mean over coordinates
	// does not;
	// fix: a smaller step.
	CauseCoordInt HealthCause = "integration error in some coordinates or directions"
	// CauseUnchecked: the per-coordinate check could not tell a
	// coordinate's temperature within its warning threshold
	// (CoordFigures.Unchecked); fix: a longer run after burn-in.
	CauseUnchecked HealthCause = "unchecked"
)

// Cause returns the main cause of the figures' problems: the dynamics'
// (dynamicsCause), or, when the dynamics do not fail and the chain's
// graded coordinates have not mixed (MixFigures.Short), CauseUnmixed;
// CauseNone when ok.
//
// The per-coordinate check's cause (CoordFigures.Cause) comes after the
// dynamics' failure and before the mixing when it fails, and is named
// when it alone is not ok.
func (f HealthFigures) Cause() HealthCause {
	dyn := f.gradeDynamics()
	switch {
	case dyn == HealthFail:
		return f.dynamicsCause()
	case f.Coord.Status == HealthFail:
		return f.Coord.Cause()
	case f.Mix.Short():
		return CauseUnmixed
	case dyn == HealthOK && f.Coord.Status != HealthOK:
		return f.Coord.Cause()
	}
	return f.dynamicsCause()
}

// dynamicsCause returns the main cause of the dynamics' problems: gradient
// noise (its budget or share), integration error (IntSDError), whichever is
// further beyond its warning threshold when both are, or, with neither, the
// thermostat (kinetic temperature off) where the kernel has one (XiGain >
// 0), else the largest of the start-up, noise and integration readings;
// CauseNone when they are ok. With
// exact gradients (Exact) the heating read as gradient noise is the
// integrator's, and named integration error.
func (f HealthFigures) dynamicsCause() HealthCause {
	if f.Langevin != nil {
		return f.Langevin.Cause()
	}
	noise, integ, desc := f.ShareBeyondChance()/WarnShare, f.intSD()/WarnIntSD, f.DescentShare()/WarnShare
	if f.Budget >= FailBudget { // the heating's larger part is to blame
		switch {
		case f.descentBeyondChance() >= math.Max(f.GradNoise, f.Integration):
			desc = math.Max(desc, 1.01)
		case f.GradNoise >= f.Integration:
			noise = math.Max(noise, 1.01)
		default:
			integ = math.Max(integ, 1.01)
		}
	}
	if f.Exact { // no gradient noise: the unexplained heating is the integrator's
		integ, noise = math.Max(integ, noise), 0
	}
	switch {
	case desc > 1 && desc >= noise && desc >= integ:
		return CauseStartup
	case noise > 1 && noise >= integ:
		return CauseNoise
	case integ > 1:
		return CauseIntegration
	case f.gradeDynamics() == HealthOK:
		return CauseNone
	case f.XiGain > 0:
		return CauseThermostat
	}
	// A fixed friction (SGHMC: no thermostat to blame) with the kinetic
	// temperature off: the heating or cooling is the larger of the
	// measured sources, though neither passed its own threshold.
	switch {
	case desc >= noise && desc >= integ && desc > 0:
		return CauseStartup
	case noise >= integ && noise > 0:
		return CauseNoise
	}
	return CauseIntegration
}

// String summarises the figures on one line.
func (f HealthFigures) String() string {
	if f.Langevin != nil {
		return f.describeLangevin()
	}
	s := fmt.Sprintf("%s: kinetic %.3f, friction/step %.3g (trend %+.0f%%), gradient noise %.3g +- %.2g vs injected %.3g (share %.0f%%, beyond chance %.0f%%, budget %.2f)",
		f.Status, f.Kinetic, f.Friction, 100*f.XiTrend, f.GradNoise, f.NoiseTol, f.Injected, 100*f.Share, 100*f.ShareBeyondChance(), f.Budget)
	if f.DescentMeasured {
		s += fmt.Sprintf(", descent %.3g +- %.2g", f.Descent, f.DescentTol)
	}
	if f.IntMeasured {
		s += fmt.Sprintf(", integration error %.3g (sds +%.1f%% +- %.1f%%)", f.Integration, 100*f.IntSDError, 100*f.IntSDTol)
	}
	if p := f.Problems(); len(p) > 0 {
		s += ": " + strings.Join(p, "; ")
	}
	return s
}

// stepScale returns the multiplier of the kernel's step.
func (hl *Health) stepScale() float64 {
	if hl.StepScale == 0 {
		return 1
	}
	return hl.StepScale
}

// Multiplier returns the multiplier of the kernel's step: StepScale, or
// 1 when it is 0.
func (hl *Health) Multiplier() float64 { return hl.stepScale() }

// AdaptStep moves the step after a window toward the one whose noise
// share is target: when the share exceeds target, or falls below target/2
// while the step is below the configured one, the multiplier changes by
// the square root of the noise ratio (the gradient noise per step goes as
// h^2 at a fixed friction per step), by at most a factor 4 down or 2 up per
// window, and stays within [1/64, 1]. It returns the factor applied. A
// noise-aware run (driver.StepHealth.NoiseTarget) calls it at the end of every
// burn-in window.
//
// It reads the window's gradient noise with its descent (Descent) left in,
// as it did before the descent was measured, so noise-aware runs step as
// they did.
func (hl *Health) AdaptStep(target float64) float64 {
	f := hl.Last
	if f.DescentMeasured {
		f.GradNoise += f.Descent
		f.Share = 0
		if total := f.Injected + math.Max(f.GradNoise, 0); total > 0 {
			f.Share = math.Max(f.GradNoise, 0) / total
		}
	}
	if f.GradNoise <= 0 || f.Share <= target && (f.Share >= target/2 || hl.stepScale() >= 1) {
		return 1
	}
	want := f.Injected * target / (1 - target)
	g := math.Min(math.Max(math.Sqrt(want/f.GradNoise), 0.25), 2)
	sc := math.Min(math.Max(hl.stepScale()*g, 1.0/64), 1)
	g = sc / hl.stepScale()
	hl.StepScale = sc
	return g
}
