package diagnose

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// HealthReport is a run's verdict on its dynamics: whether the kept
// samples can be called posterior samples, and if not, what to change.
type HealthReport struct {
	Run     string `json:"run,omitempty"` // the run directory (eval)
	Watched bool   `json:"watched"`       // the kernel is watched (sgnht, sghmc, ptsghmc; sgld by its own watch)
	// Langevin says the rungs are SGLD chains, graded by the SGLD watch
	// (health.LangevinWatch: gradient noise and discretisation error per
	// coordinate and direction, and mixing).
	Langevin    bool         `json:"langevin,omitempty"`
	AfterBurnIn bool         `json:"after_burn_in"` // windows after burn-in exist (else the last window of burn-in is judged)
	Rungs       []RungHealth `json:"rungs"`
	// Posterior is false when a rung left its regime (a failed window
	// after burn-in, or, with none yet, a failed last window).
	Posterior bool   `json:"posterior"`
	Warn      bool   `json:"warn"`   // some window warned: the spread may be biased by a few percent
	Reason    string `json:"reason"` // the worst window's problems, in words
	// Cause is the worst window's main cause: gradient noise, integration
	// error or thermostat (health.HealthFigures.Cause; empty when ok).
	Cause  string `json:"cause,omitempty"`
	Advice string `json:"advice"` // what to change, by roughly how much
}

// RungHealth is one rung's health over the run.
type RungHealth struct {
	Temp        float64              `json:"temp"`    // the rung's temperature: the posterior temperature times its ladder value
	Windows     int                  `json:"windows"` // complete windows
	After       int                  `json:"after"`   // complete windows after burn-in
	Bad         int                  `json:"bad"`     // failed windows after burn-in
	Warned      int                  `json:"warned"`  // warned windows after burn-in
	Worst       string               `json:"worst"`
	StepScale   float64              `json:"step_scale"`
	Last        health.HealthFigures `json:"last"`
	WorstWindow health.HealthFigures `json:"worst_window"` // after burn-in
	// Pooled are the windows after burn-in pooled (health.Health.Pooled):
	// a persistent problem too small for one window to tell from chance.
	Pooled health.HealthFigures `json:"pooled"`
	// Mix is the rung's mixing after burn-in (health.Health.Mixing):
	// its energy's ESS, and its coordinates' when the run grades them.
	Mix health.MixFigures `json:"mix"`
}

// HealthOf returns the health verdict of state st of a run configured by
// cfg.
func HealthOf(st *tempering.PTState, cfg runspec.Config) *HealthReport {
	rep := &HealthReport{Posterior: true}
	worst := -1
	var worstFig health.HealthFigures
	for j, hl := range st.Stats.Health {
		if hl.Windows == 0 {
			continue
		}
		rep.Watched = true
		rep.Langevin = rep.Langevin || hl.Langevin != nil
		sc := hl.StepScale
		if sc == 0 {
			sc = 1
		}
		rh := RungHealth{Temp: tempering.TemperedRung(cfg.PosteriorTemperature(), st.Temps[j]), Windows: hl.Windows, After: hl.After, Bad: hl.Bad, Warned: hl.Warned, Worst: hl.Worst.String(), StepScale: sc, Last: hl.Last, WorstWindow: hl.WorstWindow, Pooled: hl.Pooled, Mix: hl.Mixing()}
		rep.Rungs = append(rep.Rungs, rh)
		status, fig := hl.Verdict()
		if fig.Steps == 0 { // a checkpoint from before WorstWindow
			fig = hl.Last
		}
		if hl.After > 0 {
			rep.AfterBurnIn = true
		} else {
			status, fig = hl.Last.Status, hl.Last
		}
		if status == health.HealthFail {
			rep.Posterior = false
		}
		if status == health.HealthWarn {
			rep.Warn = true
		}
		if int(status) > worst || int(status) == worst && fig.Share > worstFig.Share {
			worst, worstFig = int(status), fig
		}
	}
	if !rep.Watched || worst == int(health.HealthOK) {
		return rep
	}
	rep.Reason = strings.Join(worstFig.Problems(), "; ")
	rep.Cause = string(worstFig.Cause())
	rep.Advice = HealthAdvice(worstFig, cfg)
	return rep
}

// HealthAdvice says what to change for fig's problems under cfg, by their
// cause (HealthFigures.Cause): for gradient noise, a preconditioner (when
// the run has none) or the batch or learning rate that brings the noise
// to half the warning share (the noise per step falls as 1/batch, and grows
// as lr at a fixed friction per step where the gradient's variance does not
// change; a smaller step can let a network's chain into sharper regions
// where it is larger: docs/experiments.md measured the share falling about
// as sqrt(lr), so the batch comes first); for integration error, the
// learning rate that brings the sds' widening to half its warning level
// (it grows about as lr) or a preconditioner. When the other cause is also
// beyond its warning level the advice says so and what it needs besides
// (a larger batch for the noise left at the smaller lr). Else the
// thermostat's settling.
func HealthAdvice(fig health.HealthFigures, cfg runspec.Config) string {
	precond := ""
	if cfg.PreconditionValue() == adapt.PrecondNone {
		precond = "precondition (--precondition rmsprop or variance: the stiff, noisy coordinates get heavier masses and move at the pace of the widest), or "
	}
	if c := fig.Cause(); fig.Langevin != nil && (c == health.CauseNoise || c == health.CauseIntegration) {
		return LangevinAdvice(*fig.Langevin, cfg)
	}
	if lf := fig.Langevin; lf != nil && fig.Cause() == health.CauseUnchecked && lf.Unsure != nil {
		return "cause: unchecked (SGLD's watch). " + strings.Join(lf.Problems(), "; ")
	}
	switch fig.Cause() {
	case health.CauseStartup:
		return fmt.Sprintf("cause: the start-up transient. The chain was still descending from its start in the window to step %d (its potential fell, heating the momentum by %.3g per step against %.3g injected): the burn-in ended inside the descent and its draws are not yet from the posterior. A --burnin past step %d (or a start nearer the posterior: --sgd-warmup)",
			fig.Step, fig.Descent, fig.Injected, fig.Step)
	case health.CauseNoise:
		target := health.WarnShare / 2
		r := fig.NoiseReduction(target)
		if fig.Budget >= health.FailBudget && r >= 1 { // the budget alone
			r = math.Min(r, health.FailBudget/2/fig.Budget)
		}
		b := int(math.Ceil(float64(cfg.Batch) / r))
		auto := fmt.Sprintf("or pass --noise-target %g to let burn-in shrink the step itself", target)
		if cfg.NoiseTarget > 0 {
			auto = "or a longer --burnin, so that --noise-target can shrink the step further (by at most 4x per health window)"
		}
		also := ""
		if fig.IntSDError > health.WarnIntSD {
			also = fmt.Sprintf(" (integration error also widens the sds by about %.0f%%: a larger --batch alone will not remove that, a smaller --lr does)", 100*fig.IntSDError)
		}
		batch := fmt.Sprintf("a larger --batch (about %d instead of %d)", b, cfg.Batch)
		if cfg.SGDWarmup > 0 && cfg.WarmupBatch == 0 {
			batch += fmt.Sprintf(" with --warmup-batch %d, so that the SGD warm-up keeps its batch,", cfg.Batch)
		}
		return fmt.Sprintf("cause: gradient noise%s. %sreduce the gradient noise per step about %.3g-fold: %s or a smaller --lr (about %.3g instead of %g, or smaller: the share falls as the lr only where the gradient's variance stays put, and on a Fashion-MNIST network it fell about as its square root), or both; %s",
			also, precond, 1/r, batch, cfg.LR*r, cfg.LR, auto)
	case health.CauseUnmixed:
		m := fig.Mix
		k := m.LongerFactor()
		return fmt.Sprintf("cause: not mixed. The dynamics are in their regime, but coordinate %d has about %.0f effective draws in the %d steps after burn-in, and an sd needs %d to be within about 15%%: run at least %.0f times longer after burn-in (--steps about %d; more if the chain has not yet crossed its posterior, whose unvisited part its ESS cannot see), or make it mix faster: a mass that speeds the wide coordinates up (--precondition rmsprop --mass-scale stiffest) or a larger --lr within the check's limits; several chains (--chains 4) add R-hat",
			m.Coord, m.ESS, m.Draws, health.MinMixESS, math.Ceil(k), cfg.BurnIn+int(math.Ceil(k*float64(m.Draws))))
	case health.CauseCoordNoise, health.CauseCoordTemp, health.CauseCoordInt, health.CauseUnchecked:
		return "cause: " + string(fig.Cause()) + ". " + strings.Join(fig.Coord.Problems(), "; ")
	case health.CauseIntegration:
		r := 1.0
		if fig.IntSDError > 0 {
			r = math.Min(health.WarnIntSD/2/fig.IntSDError, 1)
		}
		if fig.Exact && fig.ShareBeyondChance() > health.WarnShare {
			// an unstable step's heating, read as noise: it grows at
			// least as fast as the noise per step would with the lr
			r = math.Min(r, fig.NoiseReduction(health.WarnShare/2))
			return fmt.Sprintf("cause: integration error (the step is unstable: with exact gradients the momentum's heating beyond the injected noise is the integrator's, not gradient noise). %sa smaller --lr (about %.3g instead of %g or less; with a preconditioner, --mass-scale widest or a longer --burnin, so that no coordinate's mass is underestimated); a larger --batch cannot help (the batch is the full data set)",
				precond, cfg.LR*r, cfg.LR)
		}
		batch := "; a larger --batch will not help"
		if fig.ShareBeyondChance() > health.WarnShare {
			// the smaller lr also cuts the noise per step by r; the
			// batch takes the rest
			q := fig.NoiseReduction(health.WarnShare / 2)
			batch = fmt.Sprintf("; gradient noise is also %.0f%% of the momentum's diffusion: at that --lr, a larger --batch (about %d instead of %d) as well",
				100*fig.Share, int(math.Ceil(float64(cfg.Batch)*math.Max(r/q, 1))), cfg.Batch)
		}
		return fmt.Sprintf("cause: integration error (the step is too large for the stiffest directions). %sa smaller --lr (about %.3g instead of %g: the widening grows about as the learning rate)%s",
			precond, cfg.LR*r, cfg.LR, batch)
	}
	if n := fig.SettleSteps(); n > 0 {
		return fmt.Sprintf("cause: the thermostat. The burn-in ended inside the start-up transient: the kinetic temperature is %.2f with the thermostat's friction at %.3g per step, still falling from its overshoot by at most %.3g per step; it needs about %d more steps from step %d, so a --burnin of about %d (or more: the fall slows near the level)",
			fig.Kinetic, fig.Friction, fig.XiGain*(1-fig.Kinetic), n, fig.Step, fig.Step+n)
	}
	if fig.Kinetic < 1 {
		return "cause: the thermostat. The kinetic temperature is below 1 with little gradient noise or integration error: the thermostat has not settled (a longer --burnin, or the default --thermostat-inertia 0, which scales with the friction)"
	}
	return "cause: the thermostat. The kinetic temperature is off with little gradient noise or integration error: a longer --burnin"
}

// LangevinAdvice says what to change for an SGLD chain's figures lf
// (health.LangevinFigures) under cfg: for gradient noise the batch (or
// learning rate: the noise's part of the variance, Noise/Injected, grows
// as the lr and falls as 1/batch) that brings its widening to half
// health.WarnIntSD, or a preconditioner; for the discretisation the
// learning rate that does so (its widening, about a/4, grows as the lr).
func LangevinAdvice(lf health.LangevinFigures, cfg runspec.Config) string {
	u := lf.Worst
	want := health.WarnIntSD / 2
	if lf.Cause() == health.CauseNoise {
		r := math.Max(u.NoiseSD/want, 1)
		precond := ""
		if cfg.PreconditionValue() == adapt.PrecondNone {
			precond = "precondition (--precondition rmsprop or variance), or "
		}
		also := ""
		if u.IntSD > health.WarnIntSD {
			also = fmt.Sprintf(" (the discretisation also widens it by about %.0f%%: a smaller --lr removes that, a larger --batch does not)", 100*u.IntSD)
		}
		return fmt.Sprintf("cause: gradient noise (SGLD: no friction absorbs it; %s's sd about %.0f%% wide, noise share %.0f%%)%s. %suse a larger --batch (about %d instead of %d) or a smaller --lr (about %.3g instead of %g), or both",
			u.Name(), 100*u.SD, 100*u.Share, also, precond, int(math.Ceil(float64(cfg.Batch)*r)), cfg.Batch, cfg.LR/r, cfg.LR)
	}
	r := 1.0
	if u.IntSD > 0 {
		r = math.Min(want/u.IntSD, 1)
	}
	return fmt.Sprintf("cause: integration error (SGLD's discretisation: the step contracts %s by %.3g per step, its sd about %.0f%% wide). A smaller --lr (about %.3g instead of %g: the widening grows about as the lr), or a preconditioner whose mass slows the stiff direction; a larger --batch will not help",
		u.Name(), u.Contraction, 100*u.IntSD, cfg.LR*r, cfg.LR)
}

// String returns the verdict in words, one line per fact.
func (h *HealthReport) String() string {
	if !h.Watched {
		return "posterior check: no health window yet (or a kernel that is not watched: sgd)"
	}
	var b strings.Builder
	for j, r := range h.Rungs {
		scale := ""
		if r.StepScale != 1 {
			scale = fmt.Sprintf(", step x%.3g (noise-aware)", r.StepScale)
		}
		fmt.Fprintf(&b, "  rung %d (T=%.4g): %d health windows of %d steps, %d after burn-in (%d failed, %d warned)%s; last: %s\n",
			j+1, r.Temp, r.Windows, r.Last.Steps, r.After, r.Bad, r.Warned, scale, r.Last)
		if r.After > 0 && r.WorstWindow.Status != health.HealthOK && r.WorstWindow.Step != r.Last.Step {
			fmt.Fprintf(&b, "    worst window after burn-in (to step %d): %s\n", r.WorstWindow.Step, r.WorstWindow)
		}
		if r.After > 1 && r.Pooled.Status > r.WorstWindow.Status {
			fmt.Fprintf(&b, "    the %d windows after burn-in pooled: %s\n", r.After, r.Pooled)
		}
		if r.Mix.Draws > 0 {
			fmt.Fprintf(&b, "    %s\n", r.Mix)
		}
	}
	switch {
	case !h.Posterior:
		fmt.Fprintf(&b, "NOT A POSTERIOR (%s): the dynamics left their regime (%s); the kept samples are not samples of the posterior.\n  what to change: %s", h.Cause, h.Reason, h.Advice)
	case h.Warn:
		fmt.Fprintf(&b, "WARNING: %s; the posterior's spread may be biased by a few percent.\n  what to change: %s", h.Reason, h.Advice)
	case h.unjudged():
		b.WriteString("posterior check: not judged (no health window ended after burn-in: run past the burn-in by at least a window's steps, --steps)")
	default:
		if h.Langevin {
			fmt.Fprintf(&b, "posterior check: ok (SGLD: the gradient noise and the step's discretisation widen no coordinate's or direction's sd by more than %.0f%% beyond chance", 100*health.WarnIntSD)
		} else {
			b.WriteString("posterior check: ok (kinetic temperature at 1, gradient noise a small share of the diffusion, integration error small")
		}
		if h.mixGraded() {
			fmt.Fprintf(&b, ", at least %d effective draws in every coordinate", health.MinMixESS)
		}
		b.WriteString(")")
	}
	return b.String()
}

// unjudged reports whether a watched rung had no window end after
// burn-in: its verdict reads the burn-in's windows alone (an SGLD watch
// observes nothing before), so "ok" would say nothing of the samples.
func (h *HealthReport) unjudged() bool {
	for _, r := range h.Rungs {
		if r.After == 0 {
			return true
		}
	}
	return false
}

// mixGraded reports whether every watched rung graded its coordinates'
// mixing.
func (h *HealthReport) mixGraded() bool {
	for _, r := range h.Rungs {
		if !r.Mix.Graded {
			return false
		}
	}
	return len(h.Rungs) > 0
}

// RunHealth returns the health verdict of the run in dir from the
// statistics of its last checkpoint, st (nil without a checkpoint, when the
// checkpoint predates health watching or its kernel is not watched: sgd).
func RunHealth(dir string, st *tempering.PTState, cfg runspec.Config) (*HealthReport, error) {
	if st == nil {
		return nil, nil
	}
	temps := st.Temps
	if temps == nil {
		var err error
		if temps, err = cfg.Temps(); err != nil {
			return nil, err
		}
	}
	if len(st.Stats.Health) != len(temps) {
		return nil, nil
	}
	hr := HealthOf(&tempering.PTState{Temps: temps, Stats: st.Stats, Steps: st.Steps}, cfg)
	if !hr.Watched {
		return nil, nil
	}
	hr.Run = dir
	return hr, nil
}
