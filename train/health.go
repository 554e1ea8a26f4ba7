package train

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/health"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// healthWindow returns the length of a run's health windows: five metrics
// intervals (1,000 steps at the default --log-every 200), so every metrics
// line reports a window at most that old.
func healthWindow(cfg runspec.Config) int { return 5 * cfg.LogEvery }

// warnedAt is what a run last warned about for one rung.
type warnedAt struct {
	windows int
	status  health.HealthStatus
}

// healthWarning returns a warning when a rung's health window ended at
// this step with a problem that is new (a worse status than last warned
// about, or 10 windows since), else "", and with a warning, rung 1's last
// window when it is not ok (nil otherwise): what the advice is about.
func (r *Run) healthWarning() (string, *health.HealthFigures) {
	hs := r.state.Stats.Health
	if len(r.warned) != len(hs) {
		r.warned = make([]warnedAt, len(hs))
		for j, hl := range hs { // on resume, no repeat of old windows
			r.warned[j] = warnedAt{windows: hl.Windows}
		}
		return "", nil
	}
	var msgs []string
	for j, hl := range hs {
		w := &r.warned[j]
		if hl.Windows == w.windows {
			continue
		}
		st := hl.Last.Status
		if st == health.HealthOK {
			w.windows, w.status = hl.Windows, st
			continue
		}
		if st > w.status || hl.Windows-w.windows >= 10 {
			msgs = append(msgs, fmt.Sprintf("step %d, rung %d (T=%.4g): %s", hl.Last.Step, j+1, tempering.TemperedRung(r.Cfg.PosteriorTemperature(), r.state.Temps[j]), hl.Last))
			w.windows, w.status = hl.Windows, st
		}
	}
	if len(msgs) == 0 {
		return "", nil
	}
	var unhealthy *health.HealthFigures
	if fig := hs[0].Last; fig.Status != health.HealthOK {
		unhealthy = &fig
	}
	return strings.Join(msgs, "\n"), unhealthy
}
