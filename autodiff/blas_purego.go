//go:build !cgo || purego

package autodiff

// BLASName names the BLAS library matrix products go through.
const BLASName = "gonum (pure Go)"

// SetBLASThreads does nothing in the pure-Go build: gonum's BLAS threads are
// managed by the Go scheduler.
func SetBLASThreads(n int) {}

// BLASThreads returns 1 in the pure-Go build.
func BLASThreads() int { return 1 }
