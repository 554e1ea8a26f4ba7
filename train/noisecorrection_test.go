package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/driver"
	"github.com/ptsghmc/ptsghmc/rundir"
	"github.com/ptsghmc/ptsghmc/runspec"
)

// noiseCorrectionOf returns the run's noise-correction phase (nil: none).
func noiseCorrectionOf(r *Run) *driver.NoiseCorrection {
	for _, p := range r.drv.Phases {
		if n, ok := p.(*driver.NoiseCorrection); ok {
			return n
		}
	}
	return nil
}

// TestNoiseCorrectionSettings checks what a run records and runs of the
// noise correction's ceiling and tracking (issue 60): a new run with
// --noise-correction records and runs the defaults (ceiling 0.25,
// tracked); one without the correction records neither; one given
// --noise-ceiling 0 --noise-track=false runs the correction of older
// runs; at full batch (170 of the 200 examples, 30 held out) the
// correction is left out, the gradients being exact, unless it is the
// older one; and a run whose config.json and checkpoint predate the settings
// (no noise_ceiling, no noise_track: what their zero values read) resumes
// with the older correction, untracked and without a ceiling.
func TestNoiseCorrectionSettings(t *testing.T) {
	data := smallData(t)
	for _, c := range []struct {
		name        string
		mod         func(*runspec.Config)
		phase       bool
		ceiling     float64
		track       bool
		wantInJSON  []string
		notInJSON   []string
		resumeSteps int
	}{
		{"defaults", func(c *runspec.Config) { c.NoiseCorrection = true }, true, 0.25, true, []string{`"noise_ceiling": 0.25`, `"noise_track": true`}, nil, 0},
		{"no correction", func(c *runspec.Config) {}, false, 0, false, nil, []string{"noise_ceiling", "noise_track"}, 0},
		{"old correction asked for", func(c *runspec.Config) { c.NoiseCorrection, c.NoiseCeiling, c.NoiseTrack = true, 0, false }, true, 0, false, nil, []string{"noise_ceiling", "noise_track"}, 0},
		{"full batch: exact gradients, nothing to correct", func(c *runspec.Config) { c.NoiseCorrection, c.Batch = true, 170 }, false, 0, false, []string{`"noise_ceiling": 0.25`}, nil, 0},
		{"full batch, old correction", func(c *runspec.Config) {
			c.NoiseCorrection, c.NoiseCeiling, c.NoiseTrack, c.Batch = true, 0, false, 170
		}, true, 0, false, nil, []string{"noise_ceiling"}, 0},
		{"old run resumed", func(c *runspec.Config) { c.NoiseCorrection, c.NoiseCeiling, c.NoiseTrack = true, 0, false }, true, 0, false, nil, []string{"noise_ceiling", "noise_track"}, 160},
	} {
		cfg := smallConfig()
		cfg.Sampler = "sgnht"
		c.mod(&cfg)
		dir := filepath.Join(t.TempDir(), "run")
		r, err := New(dir, cfg, true, setupOf(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Train(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if c.resumeSteps > 0 {
			// a config.json from before the settings: they are absent, and
			// the checkpoint's config decodes them as zero
			b, err := os.ReadFile(filepath.Join(dir, rundir.ConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			var old map[string]any
			if err := json.Unmarshal(b, &old); err != nil {
				t.Fatal(err)
			}
			if _, ok := old["noise_ceiling"]; ok {
				t.Fatalf("%s: config.json records noise_ceiling", c.name)
			}
			if r, err = Resume(dir, c.resumeSteps, setupOf(data)); err != nil {
				t.Fatal(err)
			}
			if err := r.Train(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			r.Close()
		} else if r, err = Resume(dir, 0, setupOf(data)); err != nil {
			t.Fatal(err)
		}
		n := noiseCorrectionOf(r)
		r.Close()
		if (n != nil) != c.phase || n != nil && (n.Ceiling != c.ceiling || n.Track != c.track) {
			t.Errorf("%s: noise correction %+v, want one %v with ceiling %v, tracked %v", c.name, n, c.phase, c.ceiling, c.track)
		}
		b, err := os.ReadFile(filepath.Join(dir, rundir.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.wantInJSON {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: config.json lacks %s", c.name, w)
			}
		}
		for _, w := range c.notInJSON {
			if strings.Contains(string(b), w) {
				t.Errorf("%s: config.json records %s", c.name, w)
			}
		}
	}
}
