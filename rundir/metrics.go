package rundir

import (
	"encoding/json"
	"fmt"
	"os"
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

// CreateMetrics creates an empty metrics file at path.
func CreateMetrics(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return f, nil
}

// OpenMetricsAt opens the metrics file at path for appending after its
// first n bytes (the length a checkpoint recorded), dropping any later
// ones, so a resumed run continues it as if never interrupted. A file
// shorter than n (or missing, with n > 0) lost lines the checkpoint
// counted: it is refused, as it is, rather than padded to n.
func OpenMetricsAt(path string, n int64) (*os.File, error) {
	flag := os.O_RDWR
	if n == 0 {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if st.Size() < n {
		f.Close()
		return nil, fmt.Errorf("metrics %s holds %d bytes, the checkpoint counts %d: the file lost lines the checkpoint vouches for", path, st.Size(), n)
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

// WriteMetrics appends m to f as one JSON line and returns the bytes
// written.
func WriteMetrics(f *os.File, m MetricsLine) (int, error) {
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

// HealthMetrics are the health figures a metrics line carries: per rung,
// those of the last complete health window (health.Health; empty for
// kernels without friction: SGLD, whose watch reports in the verdict only, and sgd).
type HealthMetrics struct {
	Health    []string  `json:"health,omitempty"`          // ok, warn or fail
	KinWindow []float64 `json:"kinetic_window,omitempty"`  // mean p'p/D over the window (1 in regime)
	Friction  []float64 `json:"friction_window,omitempty"` // mean friction per step xi h
	XiTrend   []float64 `json:"xi_trend,omitempty"`        // relative change of xi h across the window
	GradNoise []float64 `json:"grad_noise,omitempty"`      // h^2 Var[grad U~]/T^2 per step and coordinate, integration error excluded
	// IntError is the integration error's part of the momentum's heating
	// per step and coordinate (health.HealthFigures.Integration).
	IntError   []float64 `json:"integration_error,omitempty"`
	NoiseShare []float64 `json:"noise_share,omitempty"`  // gradient noise / (gradient noise + 2 A h)
	Budget     []float64 `json:"noise_budget,omitempty"` // (injected + gradient noise)/2: 1 - exp(-xi h) at the thermostat's level (none at 1)
	StepScale  []float64 `json:"step_scale,omitempty"`   // noise-aware step multiplier (1: the configured step)
}
