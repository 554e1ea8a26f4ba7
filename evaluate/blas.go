package evaluate

import "github.com/ptsghmc/ptsghmc/autodiff"

// WithBLASThreads sets how many threads one BLAS call may use, for the
// whole process, to n, and returns the function that restores the previous
// setting; n <= 0 leaves the setting alone. A run sets it while it
// computes (Run.Train, Run.Finish, Chains.Train), not for the rest of the
// process: rungs or chains stepped in parallel goroutines want one thread
// per call, or they oversubscribe the cores.
func WithBLASThreads(n int) (restore func()) {
	if n <= 0 {
		return func() {}
	}
	prev := autodiff.BLASThreads()
	autodiff.SetBLASThreads(n)
	return func() { autodiff.SetBLASThreads(prev) }
}
