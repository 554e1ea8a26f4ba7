//go:build amd64 && !noasm

package sampler

import "golang.org/x/sys/cpu"

//go:noescape
func sgnhtUnitAVX512(theta, p, grad, z *float64, n int, c *[4]float64, sums *[5]float64)

//go:noescape
func sgnhtScaledAVX512(theta, p, grad, z, r, sc, acc *float64, n int, c *[6]float64, sums *[5]float64)

var hasUpdateAVX512 = cpu.X86.HasAVX512F

// unitUpdateBlocks applies the unit-mass update of chunk to the leading
// coordinates of tc, pc, gc and z in blocks of 8 with AVX-512
// (update_amd64.s), adding to sums (kin, pp, wb, wa, wk) in coordinate
// order, as chunk's loop does, and returns how many coordinates it
// updated; 0 when the CPU cannot or vectorUpdate is off.
func unitUpdateBlocks(tc, pc, gc, z []float64, c *[4]float64, sums *[5]float64) int {
	n := len(z) &^ 7
	if n == 0 || !hasUpdateAVX512 || !vectorUpdate {
		return 0
	}
	_, _, _ = tc[n-1], pc[n-1], gc[n-1]
	sgnhtUnitAVX512(&tc[0], &pc[0], &gc[0], &z[0], n, c, sums)
	return n
}

// scaledUpdateBlocks is unitUpdateBlocks for sgnhtStepper.general's update
// with mass factors rc and injected-noise scales sc (slices of ones where
// the update has none) and, when na is not nil, the per-coordinate noise
// sums; c holds h, hInvT, noise, decay, decay^2 and noise^2.
func scaledUpdateBlocks(tc, pc, gc, z, rc, sc, na []float64, c *[6]float64, sums *[5]float64) int {
	n := len(z) &^ 7
	if n == 0 || !hasUpdateAVX512 || !vectorUpdate {
		return 0
	}
	_, _, _, _, _ = tc[n-1], pc[n-1], gc[n-1], rc[n-1], sc[n-1]
	var acc *float64
	if na != nil {
		_ = na[n-1]
		acc = &na[0]
	}
	sgnhtScaledAVX512(&tc[0], &pc[0], &gc[0], &z[0], &rc[0], &sc[0], acc, n, c, sums)
	return n
}
