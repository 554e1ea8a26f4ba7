package main

import (
	"flag"
	"io"
	"testing"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// TestConfigArg finds --config where package flag would, and not in the
// value of another flag.
func TestConfigArg(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "a.yaml"}, "a.yaml"},
		{[]string{"-config", "a.yaml", "--steps", "10"}, "a.yaml"},
		{[]string{"--config=a.json"}, "a.json"},
		{[]string{"--steps", "10", "--config", "a.yaml"}, "a.yaml"},
		{[]string{"--out", "config", "--steps", "100"}, ""},    // the value of --out
		{[]string{"--out", "--config", "--steps", "100"}, ""},  // the value of --out, however odd
		{[]string{"--data", "config=x", "--steps", "100"}, ""}, // a value with config= in it
		{[]string{"--quiet", "--config", "a.yaml"}, "a.yaml"},  // a boolean flag takes no value
		{[]string{"--noise-correction", "--config", "c.yml"}, "c.yml"},
		{[]string{"--overwrite=true", "--config", "c.yml"}, "c.yml"},
		{[]string{"--", "--config", "a.yaml"}, ""},  // the flags ended
		{[]string{"pos", "--config", "a.yaml"}, ""}, // after the first non-flag
		{[]string{"--config"}, ""},
	} {
		if got := configArg(c.args); got != c.want {
			t.Errorf("configArg(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestOwnBoolFlags checks ownBoolFlags against train's flags: every
// boolean flag train defines beyond the config's is listed.
func TestOwnBoolFlags(t *testing.T) {
	tf, err := parseTrainFlags([]string{"--steps", "10"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	probe := flag.NewFlagSet("", flag.ContinueOnError)
	cfg := runspec.DefaultConfig()
	if err := cfg.BindFlags(probe); err != nil {
		t.Fatal(err)
	}
	tf.fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		if ok && b.IsBoolFlag() && probe.Lookup(f.Name) == nil && !ownBoolFlags[f.Name] {
			t.Errorf("train's boolean flag --%s is not in ownBoolFlags", f.Name)
		}
	})
}
