package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptsghmc/ptsghmc/datasets"
	"github.com/ptsghmc/ptsghmc/nn"
)

// Report is the evaluation of one or more runs' pooled samples on a test set.
type Report struct {
	Runs      []string    `json:"runs"`
	Ensemble  Metrics     `json:"ensemble"`           // all pooled samples
	Single    Metrics     `json:"single"`             // the last sample of the first run
	Baseline  *Metrics    `json:"baseline,omitempty"` // the sgd run given as baseline
	Curve     []CurvePt   `json:"curve"`              // ensemble figures against the number of samples
	Dropped   int         `json:"dropped_records"`    // torn sample records ignored
	RHat      float64     `json:"rhat,omitempty"`     // split R-hat of the validation log-likelihood traces (several runs, each with a validation split; else 0)
	ESS       float64     `json:"ess,omitempty"`      // bulk ESS of the same
	Reliab    Reliab      `json:"reliability"`
	Traces    []RunTraces `json:"-"`
	TestCount int         `json:"test_examples"`
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
func Evaluate(runs []string, baseline string, test *datasets.Dataset) (*Report, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("evaluate: no runs")
	}
	rep := &Report{Runs: runs, TestCount: test.N}
	var ens *Ensemble
	var first nn.Spec
	var single []float64
	var cfgs []Config // each run's config, in the order of runs
	for ri, dir := range runs {
		cfg, spec, err := RunSpec(dir, test)
		if err != nil {
			return nil, err
		}
		cfgs = append(cfgs, cfg)
		if ri == 0 {
			first = spec
			if ens, err = NewEnsemble(spec, test); err != nil {
				return nil, err
			}
		} else if spec.Arch() != first.Arch() {
			return nil, fmt.Errorf("run %s has architecture %s, run %s has %s: cannot pool", dir, spec.Arch(), runs[0], first.Arch())
		}
		n := 0
		_, dropped, err := ReadSamples(filepath.Join(dir, SamplesFile), func(step int, theta []float64) error {
			if err := ens.Add(theta); err != nil {
				return err
			}
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
		lines, err := ReadMetrics(dir)
		if err != nil {
			return nil, err
		}
		rep.Traces = append(rep.Traces, RunTraces{Dir: dir, Lines: lines})
	}
	rep.Ensemble = ens.Metrics()
	rep.Single = Score(single, test.Labels, test.Classes)
	rep.Single.Samples = 1
	probs := ens.Probs()
	rep.Reliab.Count, rep.Reliab.Conf, rep.Reliab.Acc = Reliability(probs, test.Labels, test.Classes)
	if len(runs) > 1 {
		var chains [][]float64
		traced := true // every run has a validation trace
		for i, tr := range rep.Traces {
			cfg := cfgs[i]
			traced = traced && cfg.Validation > 0
			var c []float64
			for _, l := range tr.Lines {
				if l.Step > cfg.BurnIn {
					c = append(c, l.ValLogLik)
				}
			}
			chains = append(chains, c)
		}
		if traced {
			rep.RHat, rep.ESS = SplitRHat(chains), BulkESS(chains)
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
