package rundir_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/ptsghmc/ptsghmc/rundir"
)

// ExampleAcquire takes a run directory's lock, is refused a second time,
// and releases it.
func ExampleAcquire() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)
	l, err := rundir.Acquire(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = rundir.Acquire(dir) // a second writer
	fmt.Println(errors.Is(err, rundir.ErrLocked))
	l.Release()
	l, err = rundir.Acquire(dir)
	fmt.Println(err)
	l.Release()
	// Output:
	// true
	// <nil>
}
