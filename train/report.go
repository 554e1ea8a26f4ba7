package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
	"github.com/ptsghmc/ptsghmc/sampler"
)

// Report is the evaluation of one or more runs' pooled samples on a test set.
type Report struct {
	Runs     []string  `json:"runs"`
	Ensemble Metrics   `json:"ensemble"`           // all pooled samples
	Single   Metrics   `json:"single"`             // the last sample of the first run
	Baseline *Metrics  `json:"baseline,omitempty"` // the sgd run given as baseline
	Curve    []CurvePt `json:"curve"`              // ensemble figures against the number of samples
	Dropped  int       `json:"dropped_records"`    // torn sample records ignored
	RHat     float64   `json:"rhat,omitempty"`     // split R-hat of the chains' held-out log-likelihood traces (several chains; else 0)
	ESS      float64   `json:"ess,omitempty"`      // bulk ESS of the same
	// HeldOut[c][s] is the mean log-likelihood of kept sample s of chain c
	// on the evaluation data: the trace R-hat and ESS are computed from.
	HeldOut   [][]float64  `json:"heldout_loglik"`
	Tempering []*Tempering `json:"tempering,omitempty"` // per chain, for PT runs (from its checkpoint)
	Reliab    Reliab       `json:"reliability"`
	Traces    []RunTraces  `json:"-"`
	TestCount int          `json:"test_examples"`

	// Health is each chain's dynamics verdict (from its checkpoint).
	Health []*HealthReport `json:"health,omitempty"`
}

// CurvePt is the ensemble's accuracy and NLL after its first Samples samples.
type CurvePt struct {
	Samples  int     `json:"samples"`
	Accuracy float64 `json:"accuracy"`
	NLL      float64 `json:"nll"`
}

// Reliab is a reliability diagram's data.
type Reliab struct {
	Count []int     `json:"count"`
	Conf  []float64 `json:"confidence"`
	Acc   []float64 `json:"accuracy"`
}

// RunTraces are a run's metrics traces.
type RunTraces struct {
	Dir   string
	Lines []MetricsLine
}

// ReadRunConfig reads the config saved in a run directory.
func ReadRunConfig(dir string) (Config, error) {
	var c Config
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return c, fmt.Errorf("run %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("run %s: %s: %w", dir, ConfigFile, err)
	}
	return c, nil
}

// ReadMetrics reads a run's metrics.jsonl.
func ReadMetrics(dir string) ([]MetricsLine, error) {
	path := filepath.Join(dir, MetricsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	var out []MetricsLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var m MetricsLine
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// runTempering returns the tempering figures of a PT run from its
// checkpoint (nil for single-chain samplers).
func runTempering(dir string, cfg Config) (*Tempering, error) {
	temps, err := cfg.Temps()
	if err != nil || len(temps) < 2 {
		return nil, err
	}
	c, err := ReadCheckpoint(filepath.Join(dir, checkpointName))
	if err != nil {
		return nil, fmt.Errorf("run %s: tempering figures: %w", dir, err)
	}
	if c.Temps != nil {
		temps = c.Temps
	}
	if c.Stats.WinProposed == nil { // a checkpoint older than window statistics
		return nil, nil
	}
	tp := TemperingOf(&sampler.PTState{Temps: temps, Stats: c.Stats, Steps: c.Steps, Tuning: c.Tuning}, cfg)
	if tp != nil {
		tp.Run = dir
	}
	return tp, nil
}

// RunSpec returns the network spec of a run directory for data.
func RunSpec(dir string, data *datasets.Dataset) (Config, nn.Spec, error) {
	cfg, err := ReadRunConfig(dir)
	if err != nil {
		return cfg, nn.Spec{}, err
	}
	spec, err := cfg.Spec(data.D, data.Classes)
	if err != nil {
		return cfg, spec, fmt.Errorf("run %s: %w", dir, err)
	}
	return cfg, spec, nil
}

// Evaluate pools the samples of runs and scores them on test; baseline, if
// not empty, is an sgd run scored alongside.
//
// A run directory of several chains stands for all of them. With more than
// one chain, R-hat and ESS are those of the held-out log-likelihood of each
// kept sample on test (so runs without a validation split get them too).
func Evaluate(runs []string, baseline string, test *datasets.Dataset) (*Report, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("evaluate: no runs")
	}
	runs, err := RunDirs(runs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Runs: runs, TestCount: test.N}
	var ens *Ensemble
	var first nn.Spec
	var single []float64
	for ri, dir := range runs {
		cfg, spec, err := RunSpec(dir, test)
		if err != nil {
			return nil, err
		}
		if ri == 0 {
			first = spec
			if ens, err = NewEnsemble(spec, test); err != nil {
				return nil, err
			}
		} else if spec.Arch() != first.Arch() {
			return nil, fmt.Errorf("run %s has architecture %s, run %s has %s: cannot pool", dir, spec.Arch(), runs[0], first.Arch())
		}
		n := 0
		var trace []float64
		_, dropped, err := ReadSamples(filepath.Join(dir, SamplesFile), func(step int, theta []float64) error {
			if err := ens.Add(theta); err != nil {
				return err
			}
			ll := 0.0
			for i, y := range test.Labels {
				ll += math.Log(math.Max(ens.Last[i*test.Classes+y], 1e-300))
			}
			trace = append(trace, ll/float64(test.N))
			n++
			if ri == 0 {
				single = append(single[:0], ens.Last...)
			}
			m := Score(ens.Probs(), test.Labels, test.Classes)
			rep.Curve = append(rep.Curve, CurvePt{Samples: ens.Count, Accuracy: m.Accuracy, NLL: m.NLL})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if dropped {
			rep.Dropped++
		}
		if n == 0 {
			return nil, fmt.Errorf("run %s has no samples yet (burn-in not over?)", dir)
		}
		rep.HeldOut = append(rep.HeldOut, trace)
		lines, err := ReadMetrics(dir)
		if err != nil {
			return nil, err
		}
		rep.Traces = append(rep.Traces, RunTraces{Dir: dir, Lines: lines})
		tp, err := runTempering(dir, cfg)
		if err != nil {
			return nil, err
		}
		if tp != nil {
			rep.Tempering = append(rep.Tempering, tp)
		}
		hr, err := runHealth(dir, cfg)
		if err != nil {
			return nil, err
		}
		if hr != nil {
			rep.Health = append(rep.Health, hr)
		}
	}
	rep.Ensemble = ens.Metrics()
	rep.Single = Score(single, test.Labels, test.Classes)
	rep.Single.Samples = 1
	probs := ens.Probs()
	rep.Reliab.Count, rep.Reliab.Conf, rep.Reliab.Acc = Reliability(probs, test.Labels, test.Classes)
	if len(runs) > 1 {
		rep.RHat, rep.ESS = SplitRHat(rep.HeldOut), BulkESS(rep.HeldOut)
		if math.IsNaN(rep.RHat) {
			rep.RHat, rep.ESS = 0, 0 // chains too short
		}
	}
	if baseline != "" {
		_, spec, err := RunSpec(baseline, test)
		if err != nil {
			return nil, err
		}
		be, err := NewEnsemble(spec, test)
		if err != nil {
			return nil, err
		}
		if _, _, err := ReadSamples(filepath.Join(baseline, SamplesFile), func(_ int, theta []float64) error {
			// the baseline's prediction is its final weights alone
			be.Reset()
			return be.Add(theta)
		}); err != nil {
			return nil, err
		}
		if be.Count == 0 {
			return nil, fmt.Errorf("baseline %s has no saved weights (unfinished?)", baseline)
		}
		m := be.Metrics()
		rep.Baseline = &m
	}
	return rep, nil
}
