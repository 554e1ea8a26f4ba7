//go:build cgo && !purego

package blasimpl

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

// Name names the BLAS library matrix products go through.
const Name = "openblas"

func init() {
	impl := netlib.Implementation{}
	blas64.Use(impl)
	blas32.Use(impl)
	G.Use(impl)
	tensor.Use(impl)
}

// SetThreads sets how many threads one BLAS call may use.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Threads returns how many threads one BLAS call may use.
func Threads() int { return int(C.openblas_get_num_threads()) }
