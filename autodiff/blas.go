package autodiff

import "github.com/ptsghmc/ptsghmc/autodiff/internal/blasimpl"

// BLASName names the BLAS library matrix products go through: "openblas"
// (cgo) or "gonum (pure Go)" (the purego build tag, or no cgo).
const BLASName = blasimpl.Name

// SetBLASThreads sets how many threads one BLAS call may use. Replicas that
// run in parallel goroutines should each use one, or they oversubscribe the
// cores. It does nothing in the pure-Go build.
func SetBLASThreads(n int) { blasimpl.SetThreads(n) }

// BLASThreads returns how many threads one BLAS call may use (1 in the
// pure-Go build).
func BLASThreads() int { return blasimpl.Threads() }
