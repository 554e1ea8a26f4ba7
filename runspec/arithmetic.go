package runspec

import (
	"fmt"
	"strings"

	"github.com/ptsghmc/ptsghmc/autodiff"
)

// ArithmeticChange records that a resumed run continued from Step on
// arithmetic To after computing its earlier steps on From.
type ArithmeticChange struct {
	Step int    `json:"step" yaml:"step"`
	From string `json:"from" yaml:"from"`
	To   string `json:"to" yaml:"to"`
}

// Unrecorded stands for the arithmetic of a run made before runs recorded
// it: the native BLAS, kernel and threads unknown.
const Unrecorded = "unrecorded (native BLAS, before runs recorded it)"

// validArithmetic accepts a mode a user asks for, or an ID a run recorded.
func validArithmetic(a string) bool {
	return a == "" || a == autodiff.ArithmeticPinned || a == autodiff.ArithmeticNative ||
		strings.HasPrefix(a, autodiff.ArithmeticPinned+"-") || strings.HasPrefix(a, autodiff.ArithmeticNative+" ")
}

// ArithmeticMode returns the mode (autodiff.ArithmeticPinned or
// ArithmeticNative) of a config's Arithmetic, asked or recorded; recorded
// says whether the config is a run's record (where empty means a run made
// before the field, on the native BLAS) rather than a new run's settings
// (where empty means the default, pinned).
func ArithmeticMode(a string, recorded bool) string {
	switch {
	case a == "" && recorded:
		return autodiff.ArithmeticNative
	case a == "" || a == autodiff.ArithmeticPinned || strings.HasPrefix(a, autodiff.ArithmeticPinned+"-"):
		return autodiff.ArithmeticPinned
	}
	return autodiff.ArithmeticNative
}

// ArithmeticID returns the ID of the arithmetic a run of mode computes
// with in this process when one matrix product uses threads threads (0:
// the library's default): pinned products have one ID whatever the
// machine; native ones name the library, its kernel and the threads.
func ArithmeticID(mode string, threads int) string {
	a := autodiff.CurrentArithmetic()
	if mode == autodiff.ArithmeticPinned {
		a.Mode = mode
		return a.ID()
	}
	a.Mode = autodiff.ArithmeticNative
	a.Library, a.Kernel, a.Threads = autodiff.NativeBLAS()
	if threads > 0 {
		a.Threads = threads
	}
	return a.ID()
}

// ArithmeticDiffers returns the error that refuses to go on with a run
// recorded on arithmetic have in this process's arithmetic now, or nil
// when they are the same.
func ArithmeticDiffers(dir string, step int, have, now string) error {
	if have == now {
		return nil
	}
	if have == "" {
		have = Unrecorded
	}
	return fmt.Errorf("%s was computed with arithmetic %q up to step %d, and here it would continue with %q: its samples would not be those of an uninterrupted run; resume it where it ran (or with its settings), or pass --allow-arithmetic-change to continue and record the change", dir, have, step, now)
}
