package runspec

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ptsghmc/ptsghmc/sampler"
	"gopkg.in/yaml.v3"
)

// A kernel's settings (sampler.Setting: declared by its Params type) are
// stored in a Config under their config-file keys. The settings of the
// built-in kernels are fields of Config (friction, thermostat_inertia),
// which keeps the keys, order and bytes of every config.json written so
// far; a setting of a kernel added since is a key of KernelSettings,
// written as a top-level key of config.json after the fields. Either way a
// run reads its kernel's settings by key (Config.KernelParams), a command
// binds one flag per setting of the registry (BindKernelSettings), and a config
// file names them as it names any setting.

// configAlias is Config without its JSON methods.
type configAlias Config

// configKeys holds the JSON key of every field of Config, lower case.
var configKeys = sync.OnceValue(func() map[string]int {
	t := reflect.TypeOf(Config{})
	keys := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[strings.ToLower(name)] = i
		}
	}
	return keys
})

// MarshalJSON writes the config's fields, then its KernelSettings as
// further keys, sorted (none: the fields alone, as before KernelSettings).
func (c Config) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(configAlias(c))
	if err != nil || len(c.KernelSettings) == 0 {
		return b, err
	}
	names := make([]string, 0, len(c.KernelSettings))
	for k := range c.KernelSettings {
		if _, ok := configKeys()[strings.ToLower(k)]; ok {
			return nil, fmt.Errorf("kernel setting %q is a field of the config", k)
		}
		names = append(names, k)
	}
	sort.Strings(names)
	var out bytes.Buffer
	out.Write(b[:len(b)-1]) // without the closing brace
	for _, k := range names {
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(c.KernelSettings[k])
		if err != nil {
			return nil, fmt.Errorf("kernel setting %s: %w", k, err)
		}
		out.WriteByte(',')
		out.Write(kb)
		out.WriteByte(':')
		out.Write(vb)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// UnmarshalJSON reads the config's fields over c; every other key with a
// number is a kernel setting (KernelSettings), others are ignored (what
// reading a run's config.json does; ParseConfig refuses unknown keys).
func (c *Config) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for k, v := range raw {
		if _, ok := configKeys()[strings.ToLower(k)]; ok {
			continue
		}
		delete(raw, k)
		var f float64
		if json.Unmarshal(v, &f) != nil {
			continue
		}
		if c.KernelSettings == nil {
			c.KernelSettings = map[string]float64{}
		}
		c.KernelSettings[k] = f
	}
	if raw == nil { // null
		return nil
	}
	fb, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(fb, (*configAlias)(c))
}

// checkKeys returns an error naming the first key of the config file b
// (ext: ".json", ".yaml" or ".yml") that is neither a field of Config nor
// a setting of a run kernel of sampler.Kernels, the registry commands bind
// flags for.
func checkKeys(b []byte, ext string) error {
	var keys []string
	switch ext {
	case ".json":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		for k := range m {
			keys = append(keys, k)
		}
	default:
		var m map[string]yaml.Node
		if err := yaml.Unmarshal(b, &m); err != nil {
			return err
		}
		for k := range m {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	settings, err := sampler.RunSettings(sampler.Kernels)
	if err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, s := range settings {
		declared[s.Name] = true
	}
	for _, k := range keys {
		if _, ok := configKeys()[strings.ToLower(k)]; !ok && !declared[k] {
			return fmt.Errorf("unknown field %q: neither a setting of the config nor one a kernel declares", k)
		}
	}
	return nil
}

// KernelDefaults sets, in c, every setting the run kernels of ks declare
// (sampler.RunSettings) to its default: a field of Config of that key, or
// else a key of KernelSettings.
func (c *Config) KernelDefaults(ks []sampler.KernelInfo) error {
	settings, err := sampler.RunSettings(ks)
	if err != nil {
		return err
	}
	for _, s := range settings {
		switch p := c.settingField(s.Name).(type) {
		case *float64:
			*p = s.Default
		case *int:
			*p = int(s.Default)
		case nil:
			if c.KernelSettings == nil {
				c.KernelSettings = map[string]float64{}
			}
			c.KernelSettings[s.Name] = s.Default
		default:
			return fmt.Errorf("kernel setting %s: config field of type %T", s.Name, p)
		}
	}
	return nil
}

// BindKernelSettings registers on fs one flag per setting the run kernels
// of ks declare (sampler.RunSettings: its name, help text and kind), bound
// to the setting in c (its field of Config, or else its key of
// KernelSettings), c's value its default.
func (c *Config) BindKernelSettings(fs *flag.FlagSet, ks []sampler.KernelInfo) error {
	settings, err := sampler.RunSettings(ks)
	if err != nil {
		return err
	}
	for _, s := range settings {
		switch p := c.settingField(s.Name).(type) {
		case *float64:
			fs.Float64Var(p, s.Flag(), *p, s.Doc)
		case *int:
			fs.IntVar(p, s.Flag(), *p, s.Doc)
		case nil:
			fs.Var(&settingValue{c: c, s: s}, s.Flag(), s.Doc)
		default:
			return fmt.Errorf("kernel setting %s: config field of type %T", s.Name, p)
		}
	}
	return nil
}

// settingField returns a pointer to the field of c whose JSON key is name,
// nil when there is none.
func (c *Config) settingField(name string) any {
	i, ok := configKeys()[strings.ToLower(name)]
	if !ok {
		return nil
	}
	return reflect.ValueOf(c).Elem().Field(i).Addr().Interface()
}

// settingValue is the flag.Value of a kernel setting held in
// Config.KernelSettings.
type settingValue struct {
	c *Config
	s sampler.Setting
}

func (v *settingValue) String() string {
	if v == nil || v.c == nil {
		return ""
	}
	if x, ok := v.c.KernelSettings[v.s.Name]; ok {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(v.s.Default, 'g', -1, 64)
}

func (v *settingValue) Set(s string) error {
	var x float64
	if v.s.Int {
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		x = float64(n)
	} else {
		var err error
		if x, err = strconv.ParseFloat(s, 64); err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
	}
	if v.c.KernelSettings == nil {
		v.c.KernelSettings = map[string]float64{}
	}
	v.c.KernelSettings[v.s.Name] = x
	return nil
}
