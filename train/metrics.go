package train

import (
	"github.com/ptsghmc/ptsghmc/diagnose"
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
	m.HealthMetrics = diagnose.HealthMetricsOf(st)
	if tp := diagnose.TemperingOf(st, cfg); tp != nil {
		m.Temps, m.Walker = tp.Temps, append([]int(nil), st.Stats.Walker...)
		if tp.Complete {
			m.SwapAcceptance, m.Barrier, m.LocalBarrier = tp.SwapAcceptance, tp.Barrier, tp.LocalBarrier
			m.RecommendedRungs, m.WindowRoundTrips = tp.RecommendedRungs, tp.RoundTrips
		}
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
