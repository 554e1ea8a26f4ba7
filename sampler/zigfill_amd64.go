//go:build amd64 && !noasm

package sampler

import "golang.org/x/sys/cpu"

//go:noescape
func zigFastAVX512(state *uint64, dst *float64, n int, steps *[8]uint64, tabK *uint32, tabW *float64) int

// hasZigAVX512 reports whether the CPU runs zigFastAVX512 (AVX-512 F, with
// its gathers and masks, and BMI1/2 for TZCNT and SHLX).
var hasZigAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// zigSteps holds k wyrand increments, k = 1..8.
var zigSteps = func() (s [8]uint64) {
	for k := range s {
		s[k] = uint64(k+1) * wyIncrement
	}
	return s
}()

// zigFastBlocks writes, from n's state, the variates of the leading draws
// whose both candidates pass the ziggurat's fast test, 16 at a time while
// at least 16 places of dst are left, stopping before the first draw that
// does not: exactly what fill's loop writes for those draws. It returns
// how many it wrote and advances n past their draws; 0 when the CPU
// cannot or vectorNormals is off.
func (n *normalSource) zigFastBlocks(dst []float64) int {
	if len(dst) < 16 || !hasZigAVX512 || !vectorNormals {
		return 0
	}
	return zigFastAVX512(&n.state, &dst[0], len(dst), &zigSteps, &zigK[0], &zigW[0])
}

func hasZigAVX512Build() bool { return hasZigAVX512 }
