package gemm

import (
	"math"
	"unsafe"
)

// goKernel is the portable kernel: a 4 x 4 tile in plain Go, each element
// by the arithmetic of doc.go (fma32 for float32, math.FMA for float64).
func goKernel[T float]() kernel[T] {
	return kernel[T]{name: "go", mr: 4, nr: 4, tile: goTile[T]}
}

func at[T float](p *T, i int) *T {
	var zero T
	return (*T)(unsafe.Add(unsafe.Pointer(p), uintptr(i)*unsafe.Sizeof(zero)))
}

// fmaT is a*b + c rounded once to T.
func fmaT[T float](a, b, c T) T {
	switch any(a).(type) {
	case float32:
		return T(fma32(float32(a), float32(b), float32(c)))
	default:
		return T(math.FMA(float64(a), float64(b), float64(c)))
	}
}

func goTile[T float](kc int, a *T, ars, aks int, b *T, bs int, c *T, ldc int, alpha, beta T) {
	const mr, nr = 4, 4
	for r := 0; r < mr; r++ {
		for j := 0; j < nr; j++ {
			var p T
			for l := 0; l < kc; l++ {
				p = fmaT(*at(a, r*ars+l*aks), *at(b, l*bs+j), p)
			}
			cij := at(c, r*ldc+j)
			t := T(alpha * p)
			if beta == 0 {
				*cij = t
			} else {
				*cij = T(beta**cij) + t
			}
		}
	}
}
