//go:build amd64 && !noasm

package compile

import "golang.org/x/sys/cpu"

//go:noescape
func biasReluPoolPlaneAVX512(z *float32, out *float32, arg *int32, idx *[32]int32, oh, w int, masks uint64, bias float32)

//go:noescape
func poolReluScatterAVX512(d *float32, z *float32, grad *float32, arg *int32, n int)

var hasPoolAVX512 = cpu.X86.HasAVX512F

// poolColumns holds the even column numbers 0, 2, .., 30, then the odd ones:
// the lanes of a row's 2x2 windows.
var poolColumns = func() (c [32]int32) {
	for i := range 16 {
		c[i], c[16+i] = int32(2*i), int32(2*i+1)
	}
	return c
}()

// biasReluPoolVector runs biasReluPool2x2F32 on AVX-512 (pool_amd64.s),
// a plane at a time, when the CPU can, the planes are at most 32 wide and
// the fastBiasReluPoolVector kernel is on; it reports whether it did.
func biasReluPoolVector(mp *maxPool, z, bias, out []float32, args []int32) bool {
	w := mp.w
	if !hasPoolAVX512 || referenceKernels&fastBiasReluPoolVector != 0 || w > 32 || w < 2 || mp.oh == 0 {
		return false
	}
	lo := uint64(1)<<min(w, 16) - 1
	hi := uint64(1)<<max(w-16, 0) - 1
	masks := lo | hi<<16 | (uint64(1)<<mp.ow-1)<<32
	plane, opl := mp.h*w, mp.oh*mp.ow
	_, _, _ = z[mp.c*plane-1], out[mp.c*opl-1], args[mp.c*opl-1]
	for p := range mp.c {
		biasReluPoolPlaneAVX512(&z[p*plane], &out[p*opl], &args[p*opl], &poolColumns, mp.oh, w, masks, bias[p])
	}
	return true
}

// poolReluScatterVector scatters the leading windows of one plane of
// maxPool2x2ReluBackwardF32 in blocks of 16 with AVX-512 gathers and
// scatters (pool_amd64.s), d cleared beforehand, and returns how many of
// the len(g) windows it did: 0 when the CPU cannot or the
// fastPoolScatterVector kernel is off.
func poolReluScatterVector(d, z, g []float32, arg []int32) int {
	n := len(g) &^ 15
	if n == 0 || !hasPoolAVX512 || referenceKernels&fastPoolScatterVector != 0 {
		return 0
	}
	_, _ = arg[n-1], d[len(z)-1]
	for _, a := range arg[:n] { // the gathers and scatters stay in the plane
		if int(a) >= len(z) {
			return 0
		}
	}
	poolReluScatterAVX512(&d[0], &z[0], &g[0], &arg[0], n)
	return n
}
