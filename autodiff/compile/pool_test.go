package compile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBiasReluPoolVectorSame checks the AVX-512 bias-ReLU-pooling pass
// (pool_amd64.s) against the Go loop bit for bit: the biased planes left in
// z, the pooled values and the argmaxes, for every even width up to 32 and
// planes with NaNs, signed zeros, ties and all-negative windows. Where the
// CPU has no AVX-512 it compares the Go loop with itself.
func TestBiasReluPoolVectorSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, 1, -1, 1}
	for w := 2; w <= 32; w += 2 {
		for _, h := range []int{2, 6, w} {
			mp := &maxPool{c: 3, h: h, w: w, oh: h / 2, ow: w / 2, kh: 2, kw: 2, strideH: 2, strideW: 2}
			z := make([]float32, mp.c*h*w)
			for i := range z {
				switch r := rng.IntN(10); {
				case r < 2:
					z[i] = special[rng.IntN(len(special))]
				case r < 3:
					z[i] = -rng.Float32() - 1 // windows that ReLU to 0: ties at zero
				default:
					z[i] = rng.Float32()*4 - 2
				}
			}
			// plane 0's first row pair: window k has NaNs at the corners
			// set in k (mod 16), -1 or 0.5 elsewhere
			for k := 0; k < w/2; k++ {
				for corner, at := range []int{2 * k, 2*k + 1, w + 2*k, w + 2*k + 1} {
					z[at] = []float32{-1, 0.5}[(k/16+corner)%2]
					if (k%16)&(1<<corner) != 0 {
						z[at] = float32(math.NaN())
					}
				}
			}
			bias := []float32{0.25, -0.5, 0}
			run := func(ref kernelSet) ([]float32, []float32, []int32) {
				defer SetReferenceKernels(ref)()
				zz := slices.Clone(z)
				out := make([]float32, mp.c*mp.oh*mp.ow+1) // one past the planes: must stay untouched
				args := make([]int32, len(out))
				out[len(out)-1], args[len(args)-1] = 7, 7
				biasReluPool2x2F32(mp, zz, bias, out, args)
				return zz, out, args
			}
			z1, o1, a1 := run(0)
			z2, o2, a2 := run(fastBiasReluPoolVector)
			same := func(a, b []float32) bool {
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						return false
					}
				}
				return true
			}
			if !same(z1, z2) || !same(o1, o2) || !slices.Equal(a1, a2) {
				t.Fatalf("w %d h %d: the vector pass differs from the Go loop (z %v, out %v, args %v)", w, h, same(z1, z2), same(o1, o2), slices.Equal(a1, a2))
			}
		}
	}
}
