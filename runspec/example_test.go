package runspec_test

import (
	"fmt"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// ExampleConfig_CheckSettings refuses a ladder given for a run of one
// chain and reports workers, a speed setting, as ignored.
func ExampleConfig_CheckSettings() {
	cfg := runspec.DefaultConfig() // sampler sgnht: one chain
	cfg.Ladder, cfg.Workers = "linear", 2
	given := map[string]bool{"ladder": true, "workers": true}
	ignored, err := cfg.CheckSettings(func(s string) bool { return given[s] })
	fmt.Println(err)
	fmt.Println("ignored:", ignored)
	cfg.Ladder = "geometric"
	delete(given, "ladder")
	ignored, err = cfg.CheckSettings(func(s string) bool { return given[s] })
	fmt.Println(err, len(ignored))
	// Output:
	// config: settings that do not apply to this run: ladder "linear" (sampler sgnht runs one chain at T = 1; tempering is --sampler ptsghmc); drop them, or choose the sampler they belong to
	// ignored: [workers 2 (sampler sgnht runs one chain at T = 1; tempering is --sampler ptsghmc)]
	// <nil> 1
}
