package runspec

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// toyParams are the settings of a kernel added after the built-in ones,
// with a setting of its own (lookahead) and one it shares (friction): all a
// new kernel writes besides its kernel type is this and its registration.
type toyParams struct {
	Lookahead int     `json:"lookahead" doc:"toy: steps looked ahead"`
	Friction  float64 `json:"friction" doc:"momentum decay per step alpha (diffusion A = alpha/h)"`
}

func (p toyParams) Validate() error {
	if p.Lookahead < 1 {
		return errors.New("lookahead must be at least 1")
	}
	return nil
}

func (p toyParams) Kernel(r sampler.Rate, t sampler.Tempering) sampler.Kernel {
	return sampler.SGLD{StepSize: r.SGLDStep(1), Tempering: t}
}

// nameParams declare a setting that is not a number.
type nameParams struct {
	toyParams
	Name string `json:"name" doc:"a name"`
}

// undocParams declare a setting without help text.
type undocParams struct {
	toyParams
	N int `json:"n"`
}

// toyKernels is the built-in registry with the toy kernel registered.
func toyKernels() []sampler.KernelInfo {
	return append(slices.Clone(sampler.Kernels), sampler.KernelInfo{Name: "toy", Doc: "a test kernel", Sampler: true, Minibatch: true,
		Params: func() sampler.Params { return &toyParams{Lookahead: 3, Friction: sampler.DefaultFriction} }})
}

// TestRunSettings checks the built-in kernels' declared settings (friction
// and thermostat_inertia, at train's defaults) and that a registry whose
// kernels declare a setting otherwise, one that is not a number, or one
// without help text is refused, by RunSettings and by Setup.Check.
func TestRunSettings(t *testing.T) {
	t.Parallel()
	got, err := sampler.RunSettings(sampler.Kernels)
	if err != nil {
		t.Fatal(err)
	}
	want := []sampler.Setting{
		{Name: "friction", Doc: "momentum decay per step alpha (diffusion A = alpha/h)", Default: 0.1},
		{Name: "thermostat_inertia", Doc: "SGNHT thermostat inertia Q: smaller adapts faster (0: 1/A^2, a thermostat that settles within a few momentum relaxation times)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings %+v, want %+v", got, want)
	}
	if c := DefaultConfig(); c.Friction != 0.1 || c.Inertia != 0 || c.KernelSettings != nil {
		t.Errorf("defaults: friction %v, inertia %v, kernel settings %v", c.Friction, c.Inertia, c.KernelSettings)
	}
	bad := map[string]sampler.Params{
		"declared otherwise": &toyParams{Lookahead: 3, Friction: 0.2},
		"not a number":       &nameParams{},
		"no help text":       &undocParams{},
	}
	for name, p := range bad {
		ks := append(slices.Clone(sampler.Kernels), sampler.KernelInfo{Name: "bad", Minibatch: true, Params: func() sampler.Params { return p }})
		if _, err := sampler.RunSettings(ks); err == nil || !strings.Contains(err.Error(), "bad") {
			t.Errorf("%s: %v, want an error naming the kernel", name, err)
		}
		s := DefaultSetup()
		s.Kernels = ks
		if err := s.Check(); err == nil {
			t.Errorf("%s: Setup.Check accepts the registry", name)
		}
	}
}

// TestNewKernelSettings follows a new kernel's own setting from its
// declaration to the kernel: a flag bound generically (with the declared
// default and help), the config's default, config.json's key (after the
// fields, and absent from a config without such kernels, whose bytes are
// those of the fields alone), a checkpoint's gob, the kernel's Params, the
// config's validation and the refusal of the setting for another kernel.
func TestNewKernelSettings(t *testing.T) {
	t.Parallel()
	ks := toyKernels()
	c := DefaultConfig()
	if err := c.KernelDefaults(ks); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.KernelSettings, map[string]float64{"lookahead": 3}) || c.Friction != 0.1 {
		t.Fatalf("defaults: %v, friction %v", c.KernelSettings, c.Friction)
	}
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := c.BindKernelSettings(fs, ks); err != nil {
		t.Fatal(err)
	}
	if f := fs.Lookup("lookahead"); f == nil || f.DefValue != "3" || f.Usage != "toy: steps looked ahead" {
		t.Fatalf("flag --lookahead: %+v", f)
	}
	if err := fs.Parse([]string{"--lookahead", "5", "--friction", "0.2"}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--lookahead", "2.5"}); err == nil {
		t.Error("--lookahead 2.5 accepted for an integer setting")
	}
	c.Sampler = "toy"
	_, p, err := c.KernelParams(ks)
	if err != nil || !reflect.DeepEqual(p, &toyParams{Lookahead: 5, Friction: 0.2}) {
		t.Fatalf("kernel params %+v, %v", p, err)
	}
	s := DefaultSetup()
	s.Kernels = ks
	if err := c.Validate(s); err != nil {
		t.Errorf("validate: %v", err)
	}
	b, err := json.Marshal(c)
	if err != nil || !bytes.HasSuffix(b, []byte(`,"lookahead":5}`)) {
		t.Fatalf("config.json %s, %v: want lookahead last", b, err)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("read back %+v (%v), want %+v", back, err, c)
	}
	var g bytes.Buffer
	var fromGob Config
	if err := gob.NewEncoder(&g).Encode(c); err != nil {
		t.Fatal(err)
	}
	if err := gob.NewDecoder(&g).Decode(&fromGob); err != nil || !reflect.DeepEqual(fromGob, c) {
		t.Errorf("gob: %+v (%v), want %+v", fromGob, err, c)
	}
	plain, _ := json.Marshal(configAlias(DefaultConfig()))
	if b, _ := json.Marshal(DefaultConfig()); !bytes.Equal(b, plain) {
		t.Errorf("a config without kernel settings marshals as %s, want the fields alone %s", b, plain)
	}
	// lookahead given to sgnht: refused, as friction given to sgld is
	c.Sampler = "sgnht"
	_, err = c.CheckSettings(func(s string) bool { return s == "lookahead" })
	var se *SettingsError
	if !errors.As(err, &se) || len(se.Refused) != 1 || !strings.Contains(se.Refused[0].Reason, "kernel sgnht does not read lookahead") {
		t.Errorf("lookahead for sgnht: %v", err)
	}
}

// TestConfigFileKeys checks that a config file may name the settings the
// process's kernels declare and no other key, and that a run's
// config.json is read over a config with its kernel settings.
func TestConfigFileKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		file, text, err string
	}{
		{"ok.json", `{"friction": 0.3, "thermostat_inertia": 0.5}`, ""},
		{"ok.yaml", "friction: 0.3\nthermostat_inertia: 0.5\n", ""},
		{"new.json", `{"lookahead": 5}`, `unknown field "lookahead"`},
		{"new.yaml", "lookahead: 5\n", `unknown field "lookahead"`},
		{"typo.yaml", "arhc: 784-50-10\n", `unknown field "arhc"`},
		{"type.json", `{"friction": "x"}`, "friction"},
	} {
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		c := DefaultConfig()
		err := LoadConfigFile(path, &c)
		switch {
		case tc.err == "" && (err != nil || c.Friction != 0.3 || c.Inertia != 0.5):
			t.Errorf("%s: %v, friction %v inertia %v", tc.file, err, c.Friction, c.Inertia)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want an error with %q", tc.file, err, tc.err)
		}
	}
	var c Config
	if err := json.Unmarshal([]byte(`{"lr": 0.5, "lookahead": 4, "note": "x"}`), &c); err != nil || c.LR != 0.5 ||
		!reflect.DeepEqual(c.KernelSettings, map[string]float64{"lookahead": 4}) {
		t.Errorf("a run's config.json: %+v, %v", c, err)
	}
}

// embeddingParams embed another kernel's settings, as a variant of a
// kernel does: it reads theirs (promoted, as encoding/json promotes them)
// and one of its own.
type embeddingParams struct {
	toyParams
	Decay float64 `json:"decay" doc:"a decay"`
}

// TestEmbeddedSettings checks that a Params type embedding another's
// declares the embedded one's settings and its own.
func TestEmbeddedSettings(t *testing.T) {
	t.Parallel()
	ks := []sampler.KernelInfo{{Name: "variant", Minibatch: true, Params: func() sampler.Params {
		return &embeddingParams{toyParams: toyParams{Lookahead: 2, Friction: 0.1}, Decay: 0.9}
	}}}
	got, err := sampler.RunSettings(ks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"decay", "friction", "lookahead"}) || got[2].Default != 2 || !got[2].Int {
		t.Errorf("settings %+v", got)
	}
}
