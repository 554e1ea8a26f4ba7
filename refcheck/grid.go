package refcheck

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
)

// UserStep names a step of the user grid, each the omega h of the
// chain's stiffest direction under the stiffer of its own mass and unit
// mass (the burn-in's first window runs at unit mass, so a step its mass
// would allow but unit mass would not diverges there): the default
// (MinibatchOmegaH: gradient noise near NoiseShareTarget of the diffusion
// at its batch; StableOmegaH at full batch), stable (StableOmegaH at any
// batch: the full-batch step kept at a minibatch) or the largest that
// runs (EdgeOmegaH, just inside symplectic Euler's stability limit of 2).
type UserStep string

// The user grid's steps.
const (
	StepDefault UserStep = "default"
	StepStable  UserStep = "stable"
	StepLargest UserStep = "largest"
)

// omegaH returns the step's omega h at a batch of b of n examples.
func (s UserStep) omegaH(n, b int) float64 {
	switch s {
	case StepStable:
		return StableOmegaH
	case StepLargest:
		return EdgeOmegaH
	}
	return MinibatchOmegaH(n, b, 0.1)
}

// EdgeOmegaH is the omega h of the user grid's largest step: symplectic
// Euler is stable for omega h < 2 in every direction; 1.9 is the largest
// step that runs (with exact gradients) on the reference's curvature.
const EdgeOmegaH = 1.9

// GridSelect selects a subset of the user grid (UserGrid): each field
// lists the values kept, nil or empty meaning all of them.
type GridSelect struct {
	Kernels []string
	Precond []adapt.Preconditioner
	Scales  []adapt.MassScale
	NC      []bool // the noise correction off (false) and on (true)
	Batches []int  // percent of the data: 10, 20, 100 (full)
	Steps   []UserStep
	// Text is the selection as given to ParseGridSelect.
	Text string
}

// ParseGridSelect parses a selection such as
// "kernel=sgnht,sghmc;precond=rmsprop;scale=widest,stiffest;nc=off,on;batch=20,100;step=default,largest"
// (fields separated by ';', values by ','; a field left out keeps all its
// values; "" or "all" selects the whole grid).
func ParseGridSelect(s string) (GridSelect, error) {
	g := GridSelect{Text: s}
	if s == "" || s == "all" {
		return g, nil
	}
	for _, field := range strings.Split(s, ";") {
		key, vals, ok := strings.Cut(strings.TrimSpace(field), "=")
		if !ok {
			return g, fmt.Errorf("grid selection %q: field %q is not key=values", s, field)
		}
		for _, v := range strings.Split(vals, ",") {
			if err := g.add(strings.TrimSpace(key), strings.TrimSpace(v)); err != nil {
				return g, fmt.Errorf("grid selection %q: %w", s, err)
			}
		}
	}
	return g, nil
}

// add adds value v of field key.
func (g *GridSelect) add(key, v string) error {
	switch key {
	case "kernel":
		if v != "sgnht" && v != "sghmc" && v != "sgld" {
			return fmt.Errorf("kernel %q: expected sgnht, sghmc or sgld", v)
		}
		g.Kernels = append(g.Kernels, v)
	case "precond":
		p, err := adapt.ParsePreconditioner(v)
		if err != nil {
			return err
		}
		g.Precond = append(g.Precond, p)
	case "scale":
		m, err := adapt.ParseMassScale(v)
		if err != nil {
			return err
		}
		g.Scales = append(g.Scales, m)
	case "nc":
		if v != "on" && v != "off" {
			return fmt.Errorf("nc %q: expected on or off", v)
		}
		g.NC = append(g.NC, v == "on")
	case "batch":
		var b int
		if _, err := fmt.Sscanf(v, "%d", &b); err != nil || (b != 10 && b != 20 && b != 100) {
			return fmt.Errorf("batch %q: expected 10, 20 or 100 (percent of the data)", v)
		}
		g.Batches = append(g.Batches, b)
	case "step":
		if v != string(StepDefault) && v != string(StepStable) && v != string(StepLargest) {
			return fmt.Errorf("step %q: expected default, stable or largest", v)
		}
		g.Steps = append(g.Steps, UserStep(v))
	default:
		return fmt.Errorf("unknown field %q (kernel, precond, scale, nc, batch, step)", key)
	}
	return nil
}

// keeps reports whether the selection keeps value v of a field whose kept
// values are sel (all when empty).
func keeps[T comparable](sel []T, v T) bool {
	if len(sel) == 0 {
		return true
	}
	for _, s := range sel {
		if s == v {
			return true
		}
	}
	return false
}

// UserGrid returns the settings a user can pick, on a posterior of n
// examples, selected by sel: kernel (sgnht, sghmc, sgld), preconditioner
// (none, rmsprop, variance), mass scale (widest, stiffest; one row for no
// mass), noise correction (off, on; sgnht and sghmc only), batch (10%, 20%
// of the data, full) and step (default and largest, UserStep, each under
// the chain's own mass and scale, StableLR), every chain for steps steps
// (burn-in a quarter).
func UserGrid(ref Reference, n, steps int, sel GridSelect) ([]Case, error) {
	var out []Case
	for _, k := range Kernels {
		for _, p := range Preconditioners {
			for _, sc := range []adapt.MassScale{adapt.MassScaleWidest, adapt.MassScaleStiffest} {
				if p == adapt.PrecondNone && sc != adapt.MassScaleWidest || !keeps(sel.Kernels, k) || !keeps(sel.Precond, p) || p != adapt.PrecondNone && !keeps(sel.Scales, sc) {
					continue
				}
				cs, err := userCases(ref, n, steps, sel, Case{Posterior: ref.Posterior, Kernel: k, Precond: p, MassScale: sc})
				if err != nil {
					return nil, err
				}
				out = append(out, cs...)
			}
		}
	}
	return out, nil
}

// userCases returns base's cases over the noise correction, batch and
// step.
func userCases(ref Reference, n, steps int, sel GridSelect, base Case) ([]Case, error) {
	var out []Case
	for _, nc := range []bool{false, true} {
		if nc && base.Kernel == "sgld" || !keeps(sel.NC, nc) {
			continue
		}
		for _, pct := range []int{10, 20, 100} {
			if !keeps(sel.Batches, pct) {
				continue
			}
			for _, st := range []UserStep{StepDefault, StepStable, StepLargest} {
				if !keeps(sel.Steps, st) || pct == 100 && st == StepStable {
					continue // at full batch the default is the stable step
				}
				c := base
				c.NoiseCorrection, c.Steps, c.Step = nc, steps, st
				if pct < 100 {
					c.Batch = max(1, int(math.Round(float64(n)*float64(pct)/100)))
				}
				lr, err := userLR(ref, base, n, st.omegaH(n, c.Batch))
				if err != nil {
					return nil, err
				}
				c.LR = lr
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// userLR returns the learning rate at which the stiffest direction has
// omega h = omega under both c's own mass and unit mass (the smaller of
// StableLR's two).
func userLR(ref Reference, c Case, n int, omega float64) (float64, error) {
	own, err := StableLR(ref, c.Precond, c.MassScale, n, omega)
	if err != nil {
		return 0, err
	}
	unit, err := StableLR(ref, adapt.PrecondNone, adapt.MassScaleWidest, n, omega)
	if err != nil {
		return 0, err
	}
	return math.Min(own, unit), nil
}

// Classification is a row's verdict judged by issue 60's aim against its
// errors (the worst eigen-direction or marginal sd error, and the worst
// mean error in reference sds).
type Classification string

// Classifications.
const (
	// ClassRight: the verdict is consistent with the errors.
	ClassRight Classification = "right"
	// ClassFalseOK: ok while an sd is more than 10% off or a mean more
	// than 0.2 sd.
	ClassFalseOK Classification = "FALSE OK"
	// ClassMissedFail: not fail while an sd is more than 15% off.
	ClassMissedFail Classification = "MISSED FAIL"
	// ClassFalseFail: fail while every sd is within 5% and every mean
	// within 0.2 sd.
	ClassFalseFail Classification = "false fail"
	// ClassFalseFailUnsure: a false fail by the figures, on a chain whose
	// sd ratios have a standard error (1/sqrt(2 ESS)) above 5%: its
	// figures cannot tell within 5% from 15% off (an unmixed chain's sds
	// read near 1 by chance as often as not), or whose ESS is NaN (no
	// standard error at all).
	ClassFalseFailUnsure Classification = "false fail? (se > 5%)"
	// ClassUnwatched: a chain without a health watch (no window: a kernel
	// that is not watched, such as sgd, or a run too short for one).
	ClassUnwatched Classification = "-"
	// ClassDiverged: the run diverged (a non-finite state stops it: no
	// draws to take for the posterior's).
	ClassDiverged Classification = "diverged"
)

// WorstErrors returns the worst relative sd error over the eigen-directions
// and the marginals, and the worst mean error in reference sds. A ratio or
// error that is not finite (NaN: no sd to compare) counts as +Inf, the
// worst.
func (r Result) WorstErrors() (eig, marg, mean float64) {
	for _, v := range r.EigenSD {
		eig = math.Max(eig, finiteOrInf(math.Abs(v-1)))
	}
	for _, v := range r.MarginalSD {
		marg = math.Max(marg, finiteOrInf(math.Abs(v-1)))
	}
	for _, m := range r.MeanErr {
		mean = math.Max(mean, finiteOrInf(math.Abs(m)))
	}
	return eig, marg, mean
}

// finiteOrInf returns x, or +Inf when x is NaN or infinite.
func finiteOrInf(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.Inf(1)
	}
	return x
}

// Classify classifies the row's verdict by issue 60's aim: no ok while any
// sd is more than 10% off (or a mean 0.2 sd), none short of fail while
// more than 15% off, no fail while all within 5%. The sds are the 2d
// measured directions (MarginalSD, EigenSD), not DirectionSD. A false fail
// whose ESS is NaN (no ESS to judge the sds by) is unsure.
func (r Result) Classify() Classification {
	if r.Err != nil {
		return ClassDiverged
	}
	if r.Health.Windows == 0 {
		return ClassUnwatched
	}
	status, _ := r.Health.Verdict()
	eig, marg, mean := r.WorstErrors()
	worst := math.Max(eig, marg)
	switch {
	case status == health.HealthOK && (worst > 0.10 || mean > 0.2):
		return ClassFalseOK
	case status != health.HealthFail && worst > 0.15:
		return ClassMissedFail
	case status == health.HealthFail && worst <= 0.05 && mean <= 0.2:
		if math.IsNaN(r.ESS) || 1/math.Sqrt(2*math.Max(r.ESS, 1)) > 0.05 {
			return ClassFalseFailUnsure
		}
		return ClassFalseFail
	}
	return ClassRight
}

// UserTableHeader is the markdown header of UserRow's table.
const UserTableHeader = `| kernel | mass | nc | batch | step (lr) | worst eigen-direction sd error | worst marginal sd error | every-direction sd / ref (min-max) | worst mean error (sd) | ESS (sd's se) | verdict: cause | per-coordinate | aim |
|---|---|---|---:|---|---:|---:|---|---:|---:|---|---|---|`

// UserRow returns the result as a row of UserTableHeader's table.
func (r Result) UserRow() string {
	c := r.Case
	mass := c.Precond.String()
	if c.Precond != adapt.PrecondNone {
		mass += ", " + c.MassScale.String()
	}
	nc := "off"
	if c.NoiseCorrection {
		nc = "on"
	}
	lead := fmt.Sprintf("| %s | %s | %s | %d | %s (%.3g) |", c.Kernel, mass, nc, r.Batch, c.Step, c.LR)
	if r.Err != nil {
		return lead + " - | - | - | - | - | " + firstClause(r.Err.Error()) + " | - | - |"
	}
	eig, marg, mean := r.WorstErrors()
	se := 1 / math.Sqrt(2*math.Max(r.ESS, 1))
	coord := "-"
	if lf := r.langevin(); lf != nil {
		coord = fmt.Sprintf("sgld: int. %+.0f%%, noise share %.0f%% (%s)", 100*lf.Stiffest.IntSD, 100*lf.Noisiest.Share, lf.Worst.Name())
	} else {
		_, w := r.Health.Verdict()
		coord = fmt.Sprintf("%s, T %.2f-%.2f, int. +%.0f%%, dir. +%.0f%%", w.Coord.Status, w.Coord.KineticQ[0], w.Coord.KineticQ[4], 100*w.Coord.Stiff.IntSDError, 100*w.Coord.Dir.IntSDError)
		if !w.Coord.Recorded {
			coord = "not recorded"
		}
	}
	return fmt.Sprintf("%s %.0f%% | %.0f%% | %.2f-%.2f | %.2f | %.0f (%.2f) | %s | %s | %s |", lead, 100*eig, 100*marg, r.DirectionSD[0], r.DirectionSD[1], mean, r.ESS, se, r.HealthText(), coord, r.Classify())
}
