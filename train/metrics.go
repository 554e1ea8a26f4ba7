package train

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/ptsghmc/ptsghmc/tempering"
)

// MetricsLine is one line of metrics.jsonl. It holds no wall-clock times, so
// an interrupted and resumed run writes the same file as an uninterrupted one.
type MetricsLine struct {
	Step       int       `json:"step"`
	U          float64   `json:"u"`           // rung-1 minibatch potential
	LogLik     float64   `json:"loglik"`      // rung-1 minibatch mean log-likelihood per example
	ValLogLik  float64   `json:"val_loglik"`  // rung-1 mean log-likelihood on the validation set
	ValAcc     float64   `json:"val_acc"`     // rung-1 validation accuracy
	SwapRate   []float64 `json:"swap_rate"`   // per pair acceptance so far
	RoundTrips int       `json:"round_trips"` // replica round trips so far
	Xi         []float64 `json:"xi"`          // per rung thermostat
	Kinetic    []float64 `json:"kinetic"`     // per rung p'p/D
	Grown      int       `json:"grown"`       // exchanges that grew their batch
	Exact      int       `json:"exact"`       // exchanges on the whole data set
	Early      int       `json:"early"`       // exchanges decided early (Margin rule)
	Samples    int       `json:"samples"`
	// PT runs only: the ladder, the index process (Walker[r] is the label of
	// the replica at rung r) and the tempering figures of the window (after
	// burn-in; during burn-in, the current tuning round): see Tempering.
	Temps            []float64 `json:"temps,omitempty"`
	Walker           []int     `json:"walker,omitempty"`
	SwapAcceptance   []float64 `json:"swap_acceptance,omitempty"`
	Barrier          float64   `json:"barrier,omitempty"`
	LocalBarrier     []float64 `json:"local_barrier,omitempty"`
	RecommendedRungs int       `json:"recommended_rungs,omitempty"`
	WindowRoundTrips int       `json:"round_trips_window,omitempty"`
	// Each rung's dynamics: the last health window (see HealthMetrics).
	HealthMetrics
}

// stateMetrics returns the metrics line of a run's sampler state st after
// its last step, with samples kept so far: every figure but those that
// need the model and the data (LogLik, ValLogLik, ValAcc).
func stateMetrics(st *tempering.PTState, cfg Config, samples int) MetricsLine {
	rung := st.Rungs[0]
	m := MetricsLine{Step: st.Steps, U: rung.U, SwapRate: swapRates(st.Stats), RoundTrips: st.Stats.RoundTrips,
		Grown: st.Stats.Grown, Exact: st.Stats.Exact, Early: st.Stats.Early, Samples: samples}
	for _, q := range st.Rungs {
		m.Xi = append(m.Xi, q.Xi)
		m.Kinetic = append(m.Kinetic, q.KineticTemperature())
	}
	m.HealthMetrics = healthMetrics(st)
	if tp := TemperingOf(st, cfg); tp != nil {
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

// createMetrics creates an empty metrics file at path.
func createMetrics(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return f, nil
}

// openMetricsAt opens the metrics file at path for appending after its
// first n bytes (the length a checkpoint recorded), dropping any later
// ones, so a resumed run continues it as if never interrupted.
func openMetricsAt(path string, n int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := f.Truncate(n); err != nil {
		f.Close()
		return nil, fmt.Errorf("metrics: truncate %s: %w", path, err)
	}
	if _, err := f.Seek(n, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return f, nil
}

// writeMetrics appends m to f as one JSON line and returns the bytes
// written.
func writeMetrics(f *os.File, m MetricsLine) (int, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	b = append(b, '\n')
	if _, err := f.Write(b); err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	return len(b), nil
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
		if m.ValLogLik, m.ValAcc, err = r.val.fit(rung.Theta, r.Val); err != nil {
			return err
		}
	}
	n, err := writeMetrics(r.metrics, m)
	if err != nil {
		return err
	}
	r.mbytes += int64(n)
	r.last = m
	return nil
}
