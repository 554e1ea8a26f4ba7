//go:build cgo && !purego

package autodiff

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BLASName names the BLAS library matrix products go through.
const BLASName = "openblas"

func init() {
	impl := netlib.Implementation{}
	blas64.Use(impl)
	blas32.Use(impl)
	G.Use(impl)
	tensor.Use(impl)
}

// SetBLASThreads sets how many threads one BLAS call may use. Replicas that
// run in parallel goroutines should each use one, or they oversubscribe the
// cores.
func SetBLASThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// BLASThreads returns how many threads one BLAS call may use.
func BLASThreads() int { return int(C.openblas_get_num_threads()) }
