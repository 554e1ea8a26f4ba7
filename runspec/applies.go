package runspec

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// NotApplied is a setting the user gave that the configured run does not
// use.
type NotApplied struct {
	Setting string // its config-file name (the flag's name with _ for -), e.g. "ladder"
	Value   string // its value as the config file writes it
	Reason  string // why it does not apply, e.g. "ptsghmc with 1 replica is one sgnht chain at T = 1"
	// Refused is true for a setting that would change the states the run
	// visits had it applied (the run is refused: its user would believe it
	// did), false for one that would only change how fast it computes or
	// which states it keeps (reported as ignored; the run goes ahead).
	Refused bool
}

// String returns "setting value (reason)".
func (n NotApplied) String() string {
	return fmt.Sprintf("%s %s (%s)", n.Setting, n.Value, n.Reason)
}

// applicability says when one setting applies: applies reports whether it
// does for config c (whose sampler is valid), why says why not.
type applicability struct {
	setting string
	// passive: the setting changes only how fast the run computes or which
	// of its states it keeps, not the states it visits; where it does not
	// apply it is reported as ignored rather than refused.
	passive bool
	applies func(c Config) bool
	why     func(c Config) string
}

// tempered reports whether the config runs parallel tempering (a ladder
// of at least two rungs, or Replicas 0: a ladder --replicas auto chooses).
func (c Config) tempered() bool { return c.Sampler == PTSGHMC && (c.Replicas > 1 || c.Replicas == 0) }

// whyOneChain says why a config without tempering has no ladder.
func whyOneChain(c Config) string {
	if c.Sampler == PTSGHMC {
		return "ptsghmc with 1 replica is one sgnht chain at T = 1"
	}
	return fmt.Sprintf("sampler %s runs one chain at T = 1; tempering is --sampler ptsghmc", c.Sampler)
}

// kernelReads reports whether the config's kernel reads the setting:
// whether its Params name it (sampler.Settings). A config whose kernel is
// unknown reads every setting (the run's validation refuses it).
func kernelReads(c Config, setting string) bool {
	_, p, err := c.KernelParams(sampler.Kernels)
	return err != nil || slices.Contains(sampler.Settings(p), setting)
}

// kernelName is the kernel a config's sampler steps (sgnht for ptsghmc).
func kernelName(c Config) string {
	k, _ := c.Kernel(sampler.Kernels)
	return k.Name
}

// applicabilities lists, for every setting that does not apply to every
// run, when it applies. The rule: a setting that would change the states
// the chain visits (the ladder, the exchanges, the dynamics' parameters,
// the model) is refused where it does not apply; one that would only change
// how fast it computes (workers, grad_shards, engine) or which states it
// keeps (burnin, thin, cycle_keep) is reported as ignored.
var applicabilities = []applicability{
	{setting: "replicas", applies: func(c Config) bool { return c.Sampler == PTSGHMC },
		why: func(c Config) string { return whyOneChain(c) }},
	// max_replicas is reported as ignored, not refused, where it does not
	// apply: it changes nothing but the rungs auto chooses, and the
	// config.json of a run of --replicas auto, used as --config, records
	// it beside the replicas chosen.
	{setting: "max_replicas", passive: true, applies: func(c Config) bool { return c.Sampler == PTSGHMC && c.Replicas == 0 },
		why: func(c Config) string {
			if c.Sampler != PTSGHMC {
				return whyOneChain(c)
			}
			return fmt.Sprintf("replicas %d: max_replicas caps replicas auto", c.Replicas)
		}},
	{setting: "ladder", applies: Config.tempered, why: whyOneChain},
	{setting: "tmax", applies: func(c Config) bool { return c.tempered() && !isLadderList(c.Ladder) },
		why: func(c Config) string {
			if c.tempered() {
				return fmt.Sprintf("ladder %s lists the temperatures: its last is the top", c.Ladder)
			}
			return whyOneChain(c)
		}},
	{setting: "swap_target", applies: Config.tempered, why: whyOneChain},
	{setting: "exchange", applies: Config.tempered, why: whyOneChain},
	{setting: "xbatch", applies: exchanges, why: whyNoExchange},
	{setting: "scheme", applies: exchanges, why: whyNoExchange},
	{setting: "exchange_test", applies: exchanges, why: whyNoExchange},
	{setting: "correction", applies: barkerExchanges, why: whyNotBarker},
	{setting: "xmargin", applies: barkerExchanges, why: whyNotBarker},
	{setting: "xtolerance", applies: barkerExchanges, why: whyNotBarker},
	{setting: "resghmc_f", applies: func(c Config) bool { return exchanges(c) && c.XTest == XTestResghmc },
		why: func(c Config) string {
			if exchanges(c) {
				return fmt.Sprintf("exchange_test %s: resghmc_f is the resghmc test's divisor", cmp.Or(c.XTest, XTestBarker))
			}
			return whyNoExchange(c)
		}},
	{setting: "thermostat_inertia", applies: func(c Config) bool { return kernelReads(c, "thermostat_inertia") },
		why: func(c Config) string { return fmt.Sprintf("kernel %s has no thermostat", kernelName(c)) }},
	{setting: "friction", applies: func(c Config) bool { return kernelReads(c, "friction") },
		why: func(c Config) string { return fmt.Sprintf("kernel %s has no momentum", kernelName(c)) }},
	{setting: "noise_target", applies: func(c Config) bool {
		_, p, err := c.KernelParams(sampler.Kernels)
		if err != nil {
			return true
		}
		// the noise-aware step weighs the noise against the kernel's friction
		_, ok := p.Kernel(sampler.Rate{LR: c.LR, Examples: 1}, c.TemperingValue()).(sampler.Frictional)
		return ok
	}, why: func(c Config) string {
		return fmt.Sprintf("kernel %s has no friction to weigh the gradient noise against", kernelName(c))
	}},
	{setting: "noise_ceiling", applies: func(c Config) bool { return c.NoiseCorrection },
		why: func(Config) string { return "the noise correction's setting: it needs noise_correction" }},
	{setting: "noise_track", applies: func(c Config) bool { return c.NoiseCorrection },
		why: func(Config) string { return "the noise correction's setting: it needs noise_correction" }},
	{setting: "burnin", passive: true, applies: func(c Config) bool { return !c.Optimiser(sampler.Kernels) }, why: whyOptimiser},
	{setting: "thin", passive: true, applies: func(c Config) bool { return !c.Optimiser(sampler.Kernels) }, why: whyOptimiser},
	{setting: "cycle_keep", passive: true, applies: func(c Config) bool { return c.Cycle > 0 && !c.Optimiser(sampler.Kernels) },
		why: func(c Config) string {
			if c.Optimiser(sampler.Kernels) {
				return whyOptimiser(c)
			}
			return "cycle 0: a constant step size has no cycles"
		}},
	{setting: "tempering", applies: func(c Config) bool { return c.tempered() || c.PosteriorTemperature() != 1 },
		why: func(Config) string { return "temperature 1 and no ladder: nothing is tempered" }},
	{setting: "activation", applies: func(c Config) bool { return c.Model == "" },
		why: func(c Config) string { return fmt.Sprintf("model %s has its own activations", c.Model) }},
	{setting: "workers", passive: true, applies: Config.tempered, why: whyOneChain},
	{setting: "grad_shards", passive: true, applies: func(c Config) bool { return c.Model != "" || c.Engine != "plan" },
		why: func(Config) string { return "an MLP on engine plan computes its gradient in one piece" }},
	{setting: "engine", passive: true, applies: func(c Config) bool { return c.Model == "" },
		why: func(c Config) string { return fmt.Sprintf("model %s always runs on the graph", c.Model) }},
}

func exchanges(c Config) bool { return c.tempered() && c.Exchange > 0 }

func barkerExchanges(c Config) bool {
	return exchanges(c) && (c.XTest == "" || c.XTest == XTestBarker)
}

func whyNoExchange(c Config) string {
	if c.tempered() {
		return "exchange 0: no exchange rounds"
	}
	return whyOneChain(c)
}

func whyNotBarker(c Config) string {
	if exchanges(c) {
		return "exchange_test resghmc has no correction table or early decisions"
	}
	return whyNoExchange(c)
}

func whyOptimiser(c Config) string {
	return fmt.Sprintf("sampler %s is an optimiser: the run keeps its final state alone", c.Sampler)
}

// isLadderList reports whether a ladder setting lists its temperatures.
func isLadderList(l string) bool {
	return l != "geometric" && l != "linear" && l != "adaptive"
}

// CheckSettings checks the settings the user gave, named by set
// (config-file names: a flag given, or a field a --config file sets to
// other than its default; see SetInFile), against the chosen sampler and
// model. A given setting the run would not use is
// refused when it would change the states the chain visits (a ladder for a
// run of one chain, an exchange setting without exchanges, a thermostat
// inertia for a kernel without a thermostat, ...): the error, a
// *SettingsError, lists every such setting with the reason. One that would
// only change speed (workers, grad_shards, engine) or which states are kept
// (burnin, thin, cycle_keep: an optimiser keeps its final state alone) is
// returned as ignored, for the caller to report. Settings not given are
// never reported: their defaults serve every sampler. CheckSettings does
// not validate the config (the run's creation does, once); on an invalid
// one it reports what it can.
func (c Config) CheckSettings(set func(setting string) bool) (ignored []NotApplied, err error) {
	if err := c.checkLadderLength(); err != nil {
		return nil, err
	}
	vals := FieldsOf(c)
	var refused []NotApplied
	for _, a := range applicabilities {
		if !set(a.setting) || a.applies(c) {
			continue
		}
		n := NotApplied{Setting: a.setting, Value: string(vals[a.setting]), Reason: a.why(c), Refused: !a.passive}
		if n.Value == "" { // a number the config file omits when zero
			n.Value = "0"
		}
		if n.Refused {
			refused = append(refused, n)
		} else {
			ignored = append(ignored, n)
		}
	}
	refused = append(refused, c.unreadKernelSettings(set)...)
	if len(refused) > 0 {
		return ignored, &SettingsError{Refused: refused}
	}
	return ignored, nil
}

// unreadKernelSettings returns the settings of KernelSettings given (set)
// that the config's kernel does not read, sorted: a kernel's setting given
// to another kernel, refused as the kernels' settings of the table are.
func (c Config) unreadKernelSettings(set func(setting string) bool) []NotApplied {
	var out []NotApplied
	for _, k := range slices.Sorted(maps.Keys(c.KernelSettings)) {
		if set(k) && !kernelReads(c, k) {
			out = append(out, NotApplied{Setting: k, Value: fmt.Sprint(c.KernelSettings[k]), Refused: true,
				Reason: fmt.Sprintf("kernel %s does not read %s", kernelName(c), k)})
		}
	}
	return out
}

// SettingsError is the error of CheckSettings: the settings given that the
// run would not use and that would change what it samples.
type SettingsError struct {
	Refused []NotApplied
}

// Error lists the refused settings with their reasons.
func (e *SettingsError) Error() string {
	s := make([]string, len(e.Refused))
	for i, n := range e.Refused {
		s[i] = n.String()
	}
	return fmt.Sprintf("config: settings that do not apply to this run: %s; drop them, or choose the sampler they belong to", strings.Join(s, "; "))
}

// SetInFile returns the config-file names of the settings the JSON or YAML
// file at path sets to values other than DefaultConfig's. A file that
// repeats a default (a run's config.json used as --config, say) does not
// count as giving that setting.
func SetInFile(path string) (map[string]bool, error) {
	c := DefaultConfig()
	if err := LoadConfigFile(path, &c); err != nil {
		return nil, err
	}
	def, got := FieldsOf(DefaultConfig()), FieldsOf(c)
	set := map[string]bool{}
	for k, v := range got {
		if string(def[k]) != string(v) {
			set[k] = true
		}
	}
	return set, nil
}

// settingNames returns the config-file names of every setting in the
// applicability table, sorted (for tests and docs).
func settingNames() []string {
	var out []string
	for _, a := range applicabilities {
		out = append(out, a.setting)
	}
	sort.Strings(out)
	return out
}

// FieldsOf returns c as its JSON fields (the names of config.json), each
// field's encoded value by name: the form settings are compared in.
func FieldsOf(c Config) map[string]json.RawMessage {
	b, _ := json.Marshal(c) // a Config always marshals
	m := map[string]json.RawMessage{}
	json.Unmarshal(b, &m)
	return m
}
