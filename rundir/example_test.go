package rundir_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// ExampleScanChain reads the samples a chain took from step 20 to step 40,
// as eval --from-step 20 --to-step 40 does, then asks for a window with
// none.
func ExampleScanChain() {
	dir, _ := os.MkdirTemp("", "chain")
	defer os.RemoveAll(dir)
	w, _ := rundir.CreateSamples(filepath.Join(dir, rundir.SamplesFile), rundir.SampleHeader{Arch: "1", Params: 1, DType: "float64"})
	for step := 10; step <= 60; step += 10 {
		w.Append(step, []float64{0.1 * float64(step)})
	}
	w.Close()
	chain := rundir.ChainStatus{Dir: dir, Samples: -1} // no checkpoint: read the whole file
	cs, err := rundir.ScanChain(chain, rundir.Window{From: 20, To: 40}, false, func(step int, theta []float64) error {
		fmt.Println(step, theta[0])
		return nil
	})
	fmt.Println(cs.Read, cs.Kept, err)
	_, err = rundir.ScanChain(chain, rundir.Window{From: 41, To: 49}, false, func(int, []float64) error { return nil })
	fmt.Println(err != nil)
	// Output:
	// 20 2
	// 30 3
	// 40 4
	// 4 3 <nil>
	// true
}
