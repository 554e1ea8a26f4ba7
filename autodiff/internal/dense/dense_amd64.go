//go:build amd64 && !noasm

package dense

import "golang.org/x/sys/cpu"

//go:noescape
func addTo32AVX512(dst, src *float32, n int)

//go:noescape
func biasRelu32AVX512(z, b *float32, n int)

//go:noescape
func relu32AVX512(z *float32, n int)

//go:noescape
func reluGrad32AVX512(a, delta *float32, n int)

var hasAVX512 = cpu.X86.HasAVX512F

// vector reports whether the float32 passes run in vector registers
// (dense_amd64.s): the CPU can and vectorPasses is on.
func vector(n int) bool { return n > 0 && hasAVX512 && vectorPasses }

// addTo32 adds src to dst element by element, dst[j] + src[j] as Go's
// dst[j] += src[j] computes it, in vector registers where it can; it
// reports whether it did.
func addTo32(dst, src []float32) bool {
	n := len(dst)
	if !vector(n) {
		return false
	}
	_ = src[n-1]
	addTo32AVX512(&dst[0], &src[0], n)
	return true
}

// biasRelu32 is addTo32(z, b) followed by relu32(z), in one pass.
func biasRelu32(z, b []float32) bool {
	n := len(z)
	if !vector(n) {
		return false
	}
	_ = b[n-1]
	biasRelu32AVX512(&z[0], &b[0], n)
	return true
}

// relu32 is Activate's ReLU loop, z[j] = max(z[j], 0), in vector
// registers where it can; it reports whether it did.
func relu32(z []float32) bool {
	n := len(z)
	if !vector(n) {
		return false
	}
	relu32AVX512(&z[0], n)
	return true
}

// reluGrad32 is reluGrad's float32 loop in vector registers where it can;
// it reports whether it did.
func reluGrad32(a, delta []float32) bool {
	n := len(a)
	if !vector(n) {
		return false
	}
	_ = delta[n-1]
	reluGrad32AVX512(&a[0], &delta[0], n)
	return true
}
