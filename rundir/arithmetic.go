package rundir

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/runspec"
)

// MixedArithmetic reads the arithmetic every chain of the runs in dirs
// recorded (a run of several chains is its chain directories) and returns
// one line per chain whose samples were computed with more than one
// arithmetic, or with another than the first chain's; none when all
// agree. eval prints them: pooled chains on mixed arithmetic are still
// samples, but not the ones the same command gives on one machine.
func MixedArithmetic(dirs []string) ([]string, error) {
	var chains []string
	for _, d := range dirs {
		cds, err := chainDirs(d, false) // chains not started yet have nothing to mix
		if err != nil {
			return nil, err
		}
		chains = append(chains, cds...)
	}
	var first string
	var lines []string
	mixed := false
	for i, d := range chains {
		cfg, err := ReadRunConfig(d)
		if err != nil {
			return nil, err
		}
		a := cfg.Arithmetic
		if a == "" {
			a = runspec.Unrecorded
		}
		desc := fmt.Sprintf("%s: %s", d, a)
		if len(cfg.ArithmeticChanges) > 0 {
			var ch []string
			for _, c := range cfg.ArithmeticChanges {
				ch = append(ch, fmt.Sprintf("%s before step %d", c.From, c.Step))
			}
			desc += " (" + strings.Join(ch, ", ") + ")"
			mixed = true
		}
		if i == 0 {
			first = a
		} else if a != first {
			mixed = true
		}
		lines = append(lines, desc)
	}
	if !mixed {
		return nil, nil
	}
	return lines, nil
}
