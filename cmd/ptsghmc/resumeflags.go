package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// resumeFlagsApply are the train flags that act on a resumed run.
var resumeFlagsApply = map[string]bool{"resume": true, "steps": true, "time-limit": true, "quiet": true, "allow-arithmetic-change": true}

// checkResumeFlags refuses, with --resume, flags that would change the
// run's configuration: a resumed run continues with the configuration in
// its checkpoint. A flag that repeats the run's own value is accepted.
func checkResumeFlags(fs *flag.FlagSet, args []string, dir string) error {
	if configArg(args) != "" {
		return fmt.Errorf("--config with --resume %s: a resumed run keeps the configuration saved in %s/%s (only --steps, --time-limit and --quiet apply)", dir, dir, rundir.ConfigFile)
	}
	run, err := rundir.ReadRunConfig(dir)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	shadow := flag.NewFlagSet("run", flag.ContinueOnError)
	if err := run.BindFlags(shadow); err != nil {
		return err
	}
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if resumeFlagsApply[f.Name] {
			return
		}
		switch f.Name {
		case "out":
			if f.Value.String() != dir {
				bad = append(bad, fmt.Sprintf("--out %s (the run is in %s)", f.Value, dir))
			}
			return
		case "overwrite":
			bad = append(bad, "--overwrite (resuming continues the run; to start over, train --out "+dir+" --overwrite without --resume)")
			return
		}
		if s := shadow.Lookup(f.Name); s != nil && s.Value.String() != f.Value.String() {
			has := s.Value.String()
			if has == "" {
				has = "none"
			}
			bad = append(bad, fmt.Sprintf("--%s %s (the run has %s)", f.Name, f.Value, has))
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("--resume %s: refused flags that contradict the run's configuration: %s. A resumed run keeps its configuration; only --steps, --time-limit and --quiet apply", dir, strings.Join(bad, "; "))
	}
	return nil
}
