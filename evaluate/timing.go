package evaluate

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// PredictorInfo says what a predictor of eval averages: how many networks
// (chains or runs) and weight samples, and the wall-clock train took to
// make them.
type PredictorInfo struct {
	Runs     []string `json:"runs,omitempty"` // the run directories given
	Networks int      `json:"networks"`       // chains pooled (an sgd chain is one network)
	Samples  int      `json:"samples"`        // weight samples averaged
	Sampler  string   `json:"sampler"`        // the runs' sampler ("mixed" when they differ)
	// WallSeconds is the wall-clock of the train sessions that made the
	// runs, from their TimingFile (chains trained in one process share the
	// top directory's); null when a run has none.
	WallSeconds *float64 `json:"wall_seconds"`
}

// predictorInfo returns the PredictorInfo of chain directories dirs.
func predictorInfo(dirs []string, samples int) (PredictorInfo, error) {
	info := PredictorInfo{Networks: len(dirs), Samples: samples}
	read := map[string]bool{}
	total, complete := 0.0, true
	for _, d := range dirs {
		cfg, err := rundir.ReadRunConfig(d)
		if err != nil {
			return info, err
		}
		if info.Sampler == "" {
			info.Sampler = cfg.Sampler
		} else if info.Sampler != cfg.Sampler {
			info.Sampler = "mixed"
		}
		t, ok, err := rundir.ReadTiming(d)
		if err != nil {
			return info, err
		}
		src := d
		if !ok && cfg.Chain > 0 { // a chain of a --chains K process: the top directory's
			src = filepath.Dir(d)
			if t, ok, err = rundir.ReadTiming(src); err != nil {
				return info, err
			}
		}
		if !ok {
			complete = false
			continue
		}
		if !read[src] {
			read[src] = true
			total += t.WallSeconds
		}
	}
	if complete {
		info.WallSeconds = &total
	}
	return info, nil
}

// String describes what a predictor averages and how long its runs took
// to train: "2 networks (sgd), 2 samples, trained in 1.3s".
func (in PredictorInfo) String() string {
	nets := "networks"
	if in.Networks == 1 {
		nets = "network"
	}
	wall := "wall-clock not recorded"
	if in.WallSeconds != nil {
		d := time.Duration(*in.WallSeconds * float64(time.Second))
		if d < time.Minute {
			d = d.Round(100 * time.Millisecond)
		} else {
			d = d.Round(time.Second)
		}
		wall = "trained in " + d.String()
	}
	samples := "samples"
	if in.Samples == 1 {
		samples = "sample"
	}
	return fmt.Sprintf("%d %s (%s), %d %s, %s", in.Networks, nets, in.Sampler, in.Samples, samples, wall)
}
