package train

import (
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// stateMetrics returns the metrics line of a run's sampler state st after
// its last step, with samples kept so far: every figure but those that
// need the model and the data (LogLik, ValLogLik, ValAcc).
func stateMetrics(st *tempering.PTState, cfg runspec.Config, samples int) rundir.MetricsLine {
	rung := st.Rungs[0]
	m := rundir.MetricsLine{Step: st.Steps, U: rung.U, SwapRate: swapRates(st.Stats), RoundTrips: st.Stats.RoundTrips,
		Grown: st.Stats.Grown, Exact: st.Stats.Exact, Early: st.Stats.Early, Samples: samples}
	for _, q := range st.Rungs {
		m.Xi = append(m.Xi, q.Xi)
		m.Kinetic = append(m.Kinetic, q.KineticTemperature())
	}
	m.HealthMetrics = healthMetrics(st)
	if w := tempering.Window(st, tempering.Scheme(cfg.Scheme)); w != nil {
		m.Temps, m.Walker = w.Temps, append([]int(nil), st.Stats.Walker...)
		if w.Complete {
			m.SwapAcceptance, m.Barrier, m.LocalBarrier = w.SwapAcceptance, w.Barrier, w.LocalBarrier
			m.RecommendedRungs, m.WindowRoundTrips = w.RecommendedRungs, w.RoundTrips
		}
	}
	return m
}

// healthMetrics returns the health figures of st's rungs for a metrics
// line: each rung's last health window (none before every rung has one,
// nor for SGLD's watch, whose figures are not the momentum's: its lines
// stay as they were before the watch).
func healthMetrics(st *tempering.PTState) rundir.HealthMetrics {
	var m rundir.HealthMetrics
	for _, hl := range st.Stats.Health {
		if hl.Windows == 0 || hl.Langevin != nil {
			return rundir.HealthMetrics{}
		}
		f := hl.Last
		m.Health = append(m.Health, f.Status.String())
		m.KinWindow = append(m.KinWindow, f.Kinetic)
		m.Friction = append(m.Friction, f.Friction)
		m.XiTrend = append(m.XiTrend, f.XiTrend)
		m.GradNoise = append(m.GradNoise, f.GradNoise)
		m.IntError = append(m.IntError, f.Integration)
		m.NoiseShare = append(m.NoiseShare, f.Share)
		m.Budget = append(m.Budget, f.Budget)
		sc := hl.StepScale
		if sc == 0 {
			sc = 1
		}
		m.StepScale = append(m.StepScale, sc)
	}
	return m
}

// swapRates returns each pair's swap acceptance so far (0 before a try).
func swapRates(s tempering.PTStats) []float64 {
	out := make([]float64, len(s.Proposed))
	for p := range out {
		if s.Proposed[p] > 0 {
			out[p] = s.AcceptanceRate(p)
		}
	}
	return out
}

// logMetrics writes the metrics line of the run's state: stateMetrics,
// with rung 1's minibatch log-likelihood per example and its fit to the
// validation set.
func (r *Run) logMetrics() error {
	rung := r.state.Rungs[0]
	m := stateMetrics(r.state, r.Cfg, r.samples.Count)
	m.LogLik = (r.Model.Layout.NegLogPrior(rung.Theta) - rung.U) / float64(r.Data.N)
	if r.Val != nil {
		var err error
		if m.ValLogLik, m.ValAcc, err = r.val.Fit(rung.Theta, r.Val); err != nil {
			return err
		}
	}
	n, err := rundir.WriteMetrics(r.metrics, m)
	if err != nil {
		return err
	}
	r.mbytes += int64(n)
	r.last = m
	return nil
}
