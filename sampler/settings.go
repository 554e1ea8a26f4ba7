package sampler

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Setting is one run setting of a kernel, as its Params type declares it:
// the field's JSON name is the setting's config-file key (and, with - for
// _, its command-line flag), the field's `doc` tag its help text, and its
// value in the kernel's default settings (KernelInfo.Params) its default.
// Settings are numbers (float64 or int fields): what a run's config
// stores of a kernel it does not know by name (runspec.Config's
// KernelSettings).
type Setting struct {
	Name    string  // config-file key, e.g. "friction"
	Doc     string  // help text
	Default float64 // the default, e.g. 0.1
	Int     bool    // an integer setting
}

// Flag returns the setting's command-line flag name: its key with - for _.
func (s Setting) Flag() string { return strings.ReplaceAll(s.Name, "_", "-") }

// paramsSettings returns the settings p (a pointer to a Params struct)
// declares, in its fields' order.
func paramsSettings(p Params) ([]Setting, error) {
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("settings %T: not a struct", p)
	}
	out, err := structSettings(v)
	if err != nil {
		return nil, fmt.Errorf("settings %T: %w", p, err)
	}
	return out, nil
}

// structSettings returns the settings the fields of the struct v declare,
// an embedded struct's fields among them as encoding/json promotes them
// (a Params type that embeds another kernel's Params reads its settings).
func structSettings(v reflect.Value) ([]Setting, error) {
	var out []Setting
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				ss, err := structSettings(fv)
				if err != nil {
					return nil, err
				}
				out = append(out, ss...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := Setting{Name: name, Doc: f.Tag.Get("doc")}
		switch f.Type.Kind() {
		case reflect.Float64:
			s.Default = fv.Float()
		case reflect.Int:
			s.Default, s.Int = float64(fv.Int()), true
		default:
			return nil, fmt.Errorf("field %s (%s) is a %s, a kernel setting is a float64 or an int", f.Name, name, f.Type)
		}
		if s.Doc == "" {
			return nil, fmt.Errorf("field %s (%s) has no doc tag for its help text", f.Name, name)
		}
		out = append(out, s)
	}
	return out, nil
}

// RunSettings returns the settings the run kernels of ks (those a run can
// name, KernelInfo.Minibatch) declare, each once, sorted by name: what a
// command binds as flags and a config stores. A setting several kernels
// read (friction) must be declared alike, kind and default; its help text
// is the first kernel's. An error names a kernel whose settings are not
// numbers with help texts, or two declarations that disagree.
func RunSettings(ks []KernelInfo) ([]Setting, error) {
	seen := map[string]Setting{}
	by := map[string]string{}
	for _, k := range ks {
		if !k.Minibatch {
			continue
		}
		ss, err := paramsSettings(k.Params())
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		for _, s := range ss {
			if o, ok := seen[s.Name]; ok {
				if o.Default != s.Default || o.Int != s.Int {
					return nil, fmt.Errorf("kernel %s: setting %s (default %v) is declared otherwise by kernel %s (default %v)", k.Name, s.Name, s.Default, by[s.Name], o.Default)
				}
				continue
			}
			seen[s.Name], by[s.Name] = s, k.Name
		}
	}
	out := make([]Setting, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
