//go:build !cgo || purego

package blasimpl

// Name names the BLAS library matrix products go through.
const Name = "gonum (pure Go)"

// SetThreads does nothing in the pure-Go build: gonum's BLAS threads are
// managed by the Go scheduler.
func SetThreads(n int) {}

// Threads returns 1 in the pure-Go build.
func Threads() int { return 1 }
