package runspec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestCheckSettings runs the applicability table over the settings: each
// case gives some settings explicitly and lists those refused (the error
// names each) and those reported as ignored. Settings not given are never
// reported, whatever their (default) values.
func TestCheckSettings(t *testing.T) {
	pt := func(c *Config) { c.Sampler, c.Replicas = PTSGHMC, 4 }
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		set     []string
		refused []string
		ignored []string
	}{
		{"issue: ptsghmc, 1 replica, ladder 0.1", func(c *Config) { c.Sampler, c.Replicas, c.Ladder = PTSGHMC, 1, "0.1" }, []string{"sampler", "replicas", "ladder"}, []string{"ladder"}, nil},
		{"defaults are not reported", func(c *Config) { c.Sampler = "sgld" }, []string{"sampler"}, nil, nil},
		{"sgnht: tempering settings", func(c *Config) {}, []string{"replicas", "tmax", "swap_target", "exchange", "xbatch", "scheme", "exchange_test", "correction", "xmargin", "xtolerance", "resghmc_f"},
			[]string{"replicas", "tmax", "swap_target", "exchange", "xbatch", "scheme", "exchange_test", "correction", "xmargin", "xtolerance", "resghmc_f"}, nil},
		{"ptsghmc: every tempering setting applies", pt, []string{"replicas", "tmax", "ladder", "exchange", "xbatch", "scheme", "exchange_test", "correction", "xmargin", "xtolerance", "workers", "thermostat_inertia", "noise_target"}, nil, nil},
		{"ptsghmc: a listed ladder has its own top", func(c *Config) { pt(c); c.Ladder = "1,1.2,1.5,2" }, []string{"ladder", "tmax"}, []string{"tmax"}, nil},
		{"ptsghmc: no exchanges", func(c *Config) { pt(c); c.Exchange = 0 }, []string{"exchange", "xbatch", "scheme"}, []string{"xbatch", "scheme"}, nil},
		{"ptsghmc: resghmc has no correction", func(c *Config) { pt(c); c.XTest = "resghmc" }, []string{"exchange_test", "correction", "xmargin", "xtolerance", "resghmc_f"}, []string{"correction", "xmargin", "xtolerance"}, nil},
		{"ptsghmc: barker has no resghmc_f", pt, []string{"resghmc_f"}, []string{"resghmc_f"}, nil},
		{"sghmc: no thermostat", func(c *Config) { c.Sampler = "sghmc" }, []string{"thermostat_inertia", "friction", "noise_target"}, []string{"thermostat_inertia"}, nil},
		{"sgld: no momentum", func(c *Config) { c.Sampler = "sgld" }, []string{"thermostat_inertia", "friction", "noise_target", "lr"}, []string{"thermostat_inertia", "friction", "noise_target"}, nil},
		{"sgd: an optimiser", func(c *Config) { c.Sampler, c.Cycle = "sgd", 100 }, []string{"burnin", "thin", "cycle", "cycle_keep", "friction", "thermostat_inertia"}, []string{"thermostat_inertia"}, []string{"burnin", "thin", "cycle_keep"}},
		{"tempering without a temperature", func(c *Config) {}, []string{"tempering"}, []string{"tempering"}, nil},
		{"tempering with a temperature", func(c *Config) { c.Temperature = 0.5 }, []string{"tempering", "temperature"}, nil, nil},
		{"cycle_keep without cycle", func(c *Config) {}, []string{"cycle_keep"}, nil, []string{"cycle_keep"}},
		{"cycle_keep with cycle", func(c *Config) { c.Cycle = 100 }, []string{"cycle", "cycle_keep"}, nil, nil},
		{"a registered model", func(c *Config) { c.Model, c.Arch = "lenet", "" }, []string{"model", "activation", "engine", "grad_shards"}, []string{"activation"}, []string{"engine"}},
		{"speed settings of one MLP chain", func(c *Config) {}, []string{"workers", "grad_shards", "engine"}, nil, []string{"workers", "grad_shards"}},
		{"noise correction's settings without it", func(c *Config) {}, []string{"noise_ceiling", "noise_track"}, []string{"noise_ceiling", "noise_track"}, nil},
		{"max_replicas without replicas auto", func(c *Config) { pt(c); c.MaxReplicas = 8 }, []string{"replicas", "max_replicas"}, nil, []string{"max_replicas"}},
		{"max_replicas with replicas auto", func(c *Config) { pt(c); c.Replicas, c.MaxReplicas = 0, 8 }, []string{"replicas", "max_replicas"}, nil, nil},
		{"max_replicas of one chain", func(c *Config) { c.MaxReplicas = 8 }, []string{"max_replicas"}, nil, []string{"max_replicas"}},
		{"noise correction's settings with it", func(c *Config) { c.NoiseCorrection = true }, []string{"noise_correction", "noise_ceiling", "noise_track"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.NoiseTarget, c.GradShards, c.XTolerance = 0.05, 2, 1e-8
			tc.edit(&c)
			ignored, err := c.CheckSettings(func(s string) bool { return slices.Contains(tc.set, s) })
			var gotIgnored []string
			for _, n := range ignored {
				gotIgnored = append(gotIgnored, n.Setting)
				if n.Refused || n.Reason == "" {
					t.Errorf("ignored %+v: refused, or no reason", n)
				}
			}
			if !reflect.DeepEqual(gotIgnored, tc.ignored) {
				t.Errorf("ignored %v, want %v", gotIgnored, tc.ignored)
			}
			if len(tc.refused) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *SettingsError
			if !errors.As(err, &se) {
				t.Fatalf("%v, want a *SettingsError refusing %v", err, tc.refused)
			}
			var got []string
			for _, n := range se.Refused {
				got = append(got, n.Setting)
				if !n.Refused || n.Reason == "" || !strings.Contains(err.Error(), n.String()) {
					t.Errorf("refused %+v: not marked, no reason, or not in the message %q", n, err)
				}
			}
			if !reflect.DeepEqual(got, tc.refused) {
				t.Errorf("refused %v, want %v", got, tc.refused)
			}
		})
	}
}

// TestCheckSettingsCoversTable checks that every setting of the
// applicability table is exercised above, refused or ignored at least once.
func TestCheckSettingsCoversTable(t *testing.T) {
	covered := map[string]bool{
		"replicas": true, "ladder": true, "tmax": true, "swap_target": true, "exchange": true, "xbatch": true, "scheme": true,
		"exchange_test": true, "correction": true, "xmargin": true, "xtolerance": true, "resghmc_f": true, "thermostat_inertia": true,
		"friction": true, "noise_target": true, "burnin": true, "thin": true, "cycle_keep": true, "activation": true,
		"workers": true, "grad_shards": true, "engine": true, "tempering": true, "noise_ceiling": true, "noise_track": true,
		"max_replicas": true,
	}
	var missing []string
	for _, s := range settingNames() {
		if !covered[s] {
			missing = append(missing, s)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(covered) != len(settingNames()) {
		t.Fatalf("settings of the table without a case: %v (table %v)", missing, settingNames())
	}
}

// TestSetInFile: a config file gives the settings it sets to other than
// the defaults; one repeating a default (a run's config.json) gives none.
func TestSetInFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, text string
		want       []string
	}{
		{"a.yaml", "sampler: ptsghmc\nreplicas: 1\nladder: \"0.1\"\ntmax: 1.5\n", []string{"ladder", "replicas", "sampler"}},
		{"b.json", `{"ladder": "geometric", "replicas": 4, "xbatch": 256}`, nil},
	} {
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := SetInFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range set {
			got = append(got, k)
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.file, got, tc.want)
		}
	}
}
