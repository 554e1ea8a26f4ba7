package refcheck

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
)

// Budget is a posterior's share of the harness: the steps of each case,
// and the minibatch (10-20% of the data).
type Budget struct {
	Steps int
	Batch int
}

// Budgets are the harness's budgets, chosen so that each posterior's 18
// cases take at most about 20 minutes on one of the project's cores (the
// diamonds gradient, 5,000 x 24 at full batch, costs about 0.7 ms).
var Budgets = map[string]Budget{
	"sblrc-blr":            {Steps: 1600000, Batch: 20},
	"earnings-earn_height": {Steps: 400000, Batch: 238},
	"kidiq-kidscore_momiq": {Steps: 400000, Batch: 87},
	"mesquite-logmesquite": {Steps: 400000, Batch: 9},
	"diamonds-diamonds":    {Steps: 100000, Batch: 500},
}

// Kernels are the harness's kernels.
var Kernels = []string{"sgnht", "sghmc", "sgld"}

// Preconditioners are the harness's masses.
var Preconditioners = []adapt.Preconditioner{adapt.PrecondNone, adapt.PrecondRMSprop, adapt.PrecondVariance}

// StableOmegaH is the omega h of the grid's step (StableLR with unit
// mass): symplectic Euler widens the stiffest direction by 3% there.
const StableOmegaH = 0.5

// Grid returns the harness's cases on a posterior of n examples: every
// kernel with every preconditioner, full batch and at the budget's
// minibatch, all at one learning rate, the one a unit-mass full-batch
// chain is stable at (StableLR, omega h = StableOmegaH): the step a user
// finds with unit mass before adding a preconditioner or a minibatch.
func Grid(ref Reference, n int) ([]Case, error) {
	b, ok := Budgets[ref.Posterior]
	if !ok {
		return nil, fmt.Errorf("grid: no budget for %s", ref.Posterior)
	}
	lr, err := StableLR(ref, adapt.PrecondNone, adapt.MassScaleWidest, n, StableOmegaH)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, batch := range []int{0, b.Batch} {
		for _, k := range Kernels {
			for _, p := range Preconditioners {
				out = append(out, Case{Posterior: ref.Posterior, Kernel: k, Precond: p, Batch: batch, LR: lr, Steps: b.Steps})
			}
		}
	}
	return out, nil
}

// NoiseShareTarget is the gradient-noise share Recommended's minibatch
// step aims at (half the health check's warning share).
const NoiseShareTarget = 0.05

// MinibatchOmegaH returns the omega h at which a minibatch of b of n
// examples brings gradient noise of about NoiseShareTarget of the
// momentum's diffusion at friction f per step, for a regression whose
// minibatch gradient's variance is about (n/b - 1) times the curvature
// (the per-example Fisher information; drawn without replacement): the
// noise per step in the stiffest direction, (omega h)^2 (n/b - 1), against
// the injected 2 (1 - exp(-f)). At full batch StableOmegaH.
func MinibatchOmegaH(n, b int, f float64) float64 {
	if b <= 0 || b >= n {
		return StableOmegaH
	}
	inj := -2 * math.Expm1(-f)
	w := math.Sqrt(NoiseShareTarget / (1 - NoiseShareTarget) * inj / (float64(n)/float64(b) - 1))
	return math.Min(w, StableOmegaH)
}

// Recommended returns the harness's recommended preconditioned kernel on
// a posterior of n examples: SGNHT with the rmsprop mass normalised to the
// stiffest coordinate (adapt.MassScaleStiffest), full batch at the
// unit-mass stable step (omega h = StableOmegaH) and at the budget's
// minibatch at the step MinibatchOmegaH gives: the full-batch chain for
// the budget's steps, the minibatch chain, whose step is about 10 times
// smaller, for 10 times as many.
func Recommended(ref Reference, n int) ([]Case, error) {
	b, ok := Budgets[ref.Posterior]
	if !ok {
		return nil, fmt.Errorf("recommended: no budget for %s", ref.Posterior)
	}
	var out []Case
	for _, batch := range []int{0, b.Batch} {
		lr, err := StableLR(ref, adapt.PrecondRMSprop, adapt.MassScaleStiffest, n, MinibatchOmegaH(n, batch, 0.1))
		if err != nil {
			return nil, err
		}
		steps := b.Steps
		if batch > 0 {
			steps *= 10
		}
		out = append(out, Case{Posterior: ref.Posterior, Kernel: "sgnht", Precond: adapt.PrecondRMSprop,
			MassScale: adapt.MassScaleStiffest, Batch: batch, LR: lr, Steps: steps})
	}
	return out, nil
}

// TableHeader is the markdown header of Row's table.
const TableHeader = `| posterior | kernel | mass | batch | lr | steps | marginal sd / ref | eigen-direction sd / ref (largest first) | every-direction sd / ref (min-max) | worst mean error (ref sds) | ESS (per 1,000 steps) | health (windows failed/warned of after burn-in): cause |
|---|---|---|---:|---:|---:|---|---|---|---:|---:|---|`

// Row returns the result as a row of the markdown table of TableHeader.
// Ratios are given with the Monte Carlo standard error of an sd ratio at
// the chain's ESS, 1/sqrt(2 ESS) (the bulk ESS); the every-direction
// range (DirectionSD) has no such error: its noise is about sqrt(d/ESS).
func (r Result) Row() string {
	c := r.Case
	mass := c.Precond.String()
	if c.Precond == adapt.PrecondLowRank {
		r := c.Rank
		if r == 0 {
			r = adapt.DefaultMassRank
		}
		mass += fmt.Sprintf(" %d", r)
	}
	if c.MassScale != adapt.MassScaleWidest {
		mass += ", " + c.MassScale.String()
	}
	lead := fmt.Sprintf("| %s | %s | %s | %d | %.3g | %d |", c.Posterior, c.Kernel, mass, r.Batch, c.LR, c.Steps)
	if r.Err != nil {
		msg := r.Err.Error()
		if r.Diverged() {
			msg = "diverged: " + firstClause(msg)
		}
		return lead + " - | - | - | - | - | " + msg + " |"
	}
	se := 1 / math.Sqrt(2*math.Max(r.ESS, 1))
	_, _, worstMean := r.WorstErrors()
	return fmt.Sprintf("%s %s | %s | %.2f-%.2f | %.2f | %.0f (%.3g) | %s |", lead, rangeOf(r.MarginalSD, se), list(r.EigenSD, se),
		r.DirectionSD[0], r.DirectionSD[1], worstMean, r.ESS, r.ESSPer1000, r.HealthText())
}

// HealthText is the health check's verdict in a few words: the worst
// status after burn-in, the counts, and the worst window's cause and main
// figure.
func (r Result) HealthText() string {
	if r.Health.Windows == 0 {
		return "(not watched)"
	}
	hl := r.Health
	status, w := hl.Verdict()
	s := fmt.Sprintf("**%v** (%d/%d of %d)", status, hl.Bad, hl.Warned, hl.After)
	if status == health.HealthOK {
		return s
	}
	if hl.Pool.Windows >= 2 && hl.Pooled.Status > hl.Worst && w.Cause() != health.CauseUnmixed {
		s += ", pooled"
	}
	return s + ": " + string(w.Cause()) + " (" + keyFigure(w) + ")"
}

// keyFigure names the figure behind a window's cause.
func keyFigure(w health.HealthFigures) string {
	if c := w.Cause(); w.Langevin != nil && (c == health.CauseNoise || c == health.CauseIntegration) {
		return w.Langevin.Key()
	}
	if x := w.Langevin; x != nil && x.Unsure != nil && w.Cause() == health.CauseUnchecked {
		return fmt.Sprintf("%s: sd %+.0f%% read, %+.0f%% beyond chance", x.Unsure.Name(), 100*x.Unsure.SD, 100*x.Unsure.SDLow)
	}
	switch w.Cause() {
	case health.CauseNoise:
		return fmt.Sprintf("share %.0f%%, beyond chance %.0f%%, budget %.2f", 100*w.Share, 100*w.ShareBeyondChance(), w.Budget)
	case health.CauseIntegration:
		if w.Exact && w.IntSDError-w.IntSDTol <= health.WarnIntSD {
			return fmt.Sprintf("unstable: full batch, unexplained heating %.0f%% of the diffusion, budget %.2f", 100*w.Share, w.Budget)
		}
		return fmt.Sprintf("sds +%.0f%%", 100*w.IntSDError)
	case health.CauseUnmixed:
		return fmt.Sprintf("ESS %.0f in %d steps: at least %.0fx longer", w.Mix.ESS, w.Mix.Draws, w.Mix.LongerFactor())
	case health.CauseCoordNoise, health.CauseCoordTemp:
		u := w.Coord.Hot
		if w.Coord.Noisy.ShareLow > health.WarnShare {
			u = w.Coord.Noisy
		}
		return fmt.Sprintf("coordinate %d: kinetic %.2f, noise share %.0f%%", u.Coord, u.Kinetic, 100*u.Share)
	case health.CauseCoordInt:
		return fmt.Sprintf("coordinate %d: sd +%.0f%%; worst direction +%.0f%%", w.Coord.Stiff.Coord, 100*w.Coord.Stiff.IntSDError, 100*w.Coord.Dir.IntSDError)
	case health.CauseUnchecked:
		if w.Mix.Unsure() {
			return fmt.Sprintf("coordinate %d's sd: ESS %.0f, %d needed; mixing not graded", w.Mix.Coord, w.Mix.ESS, health.MinMixESS)
		}
		return fmt.Sprintf("%s: kinetic %.2f +- %.2f", "coordinate temperatures", w.Coord.Hot.Kinetic, w.Coord.Hot.KineticTol)
	}
	s := fmt.Sprintf("kinetic %.2f, friction/step %.3g", w.Kinetic, w.Friction)
	if n := w.SettleSteps(); n > 0 {
		s += fmt.Sprintf(", %d steps to settle", n)
	}
	return s
}

// langevin returns the SGLD watch's figures of the row's verdict (nil for
// a frictional kernel's).
func (r Result) langevin() *health.LangevinFigures {
	_, w := r.Health.Verdict()
	return w.Langevin
}

// rangeOf returns "lo-hi" of v, with the standard error.
func rangeOf(v []float64, se float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return fmt.Sprintf("%.2f-%.2f (+-%.2f)", lo, hi, se)
}

// list returns v's values, or their range when there are more than 6.
func list(v []float64, se float64) string {
	if len(v) > 6 {
		return rangeOf(v, se)
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ") + fmt.Sprintf(" (+-%.2f)", se)
}

// firstClause returns the message after its last "step N, rung ...:"
// prefix, short.
func firstClause(msg string) string {
	if i := strings.Index(msg, "sampler diverged"); i >= 0 {
		msg = msg[:i] + "non-finite state"
	}
	return msg
}
