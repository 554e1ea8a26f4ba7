package gemm

import "math"

// fma32 returns a*b + c rounded once to float32 (round to nearest even), as
// a hardware FMA does. The product of two float32s is exact in float64, and
// the float64 sum is rounded to odd (its last bit set when the sum is
// inexact), so that the one rounding to float32 that follows is the correct
// rounding of the exact a*b + c: float64 has more than 24+2 bits.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: e is the exact error of s = p + c.
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb)
	if e != 0 {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++ // away from zero, towards the exact sum
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}
