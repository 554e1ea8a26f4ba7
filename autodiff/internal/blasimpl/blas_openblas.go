//go:build cgo && !purego

package blasimpl

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
char* openblas_get_config(void);
*/
import "C"

import (
	"strings"

	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// Name names the native BLAS library.
const Name = "openblas"

func native() G.BLAS { return netlib.Implementation{} }

func nativeLibrary() string {
	// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64"
	f := strings.Fields(C.GoString(C.openblas_get_config()))
	if len(f) >= 2 {
		return "openblas " + f[1]
	}
	return "openblas"
}

func nativeKernel() string { return C.GoString(C.openblas_get_corename()) }

func setNativeThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

func nativeThreads() int { return int(C.openblas_get_num_threads()) }
