//go:build amd64 && !noasm

package convert

import "golang.org/x/sys/cpu"

//go:noescape
func sumSquares32AVX512(dst *float32, src *float64, n int, sums *[4]float64)

//go:noescape
func addPriorGrad32AVX512(out *float64, grad *float32, theta *float64, n int, lam float64)

var hasAVX512 = cpu.X86.HasAVX512F

// sumSquares32Blocks converts and sums the leading multiple of 8 of src in
// vector registers (convert_amd64.s), adding to the four partial sums as
// SumSquares' loop does, and returns how many elements it did (0 when the
// CPU cannot or vectorPasses is off).
func sumSquares32Blocks(dst []float32, src []float64, sums *[4]float64) int {
	n := len(src) &^ 7
	if n == 0 || !hasAVX512 || !vectorPasses {
		return 0
	}
	_ = dst[n-1]
	sumSquares32AVX512(&dst[0], &src[0], n, sums)
	return n
}

// addPriorGrad32Blocks is AddPriorGrad's loop over the leading multiple of
// 8 of out in vector registers; it returns how many elements it did.
func addPriorGrad32Blocks(out []float64, g []float32, theta []float64, lam float64) int {
	n := len(out) &^ 7
	if n == 0 || !hasAVX512 || !vectorPasses {
		return 0
	}
	_, _ = g[n-1], theta[n-1]
	addPriorGrad32AVX512(&out[0], &g[0], &theta[0], n, lam)
	return n
}
