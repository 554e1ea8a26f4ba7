package gemm

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPackTransposedSame checks the vector packing of transposed float32
// panels (packb_amd64.s) against the Go loop: panelB's packed panel for
// column counts below, at and beyond whole 16-blocks and a K block, panels
// at several offsets; then whole products with B transposed, bit for bit.
// The vector path packs nothing on CPUs without AVX-512 (the test then
// compares the Go loop with itself).
func TestPackTransposedSame(t *testing.T) {
	defer func() { vectorPack = true }()
	rng := rand.New(rand.NewPCG(11, 12))
	kn := sKernel()
	for _, tc := range []struct{ n, k, pc, kc, jc int }{
		{n: 32, k: 16, kc: 16},
		{n: 40, k: 47, pc: 0, kc: 47, jc: 8},
		{n: 96, k: 300, pc: 256, kc: 44, jc: 64},
		{n: 64, k: 512, pc: 256, kc: 256, jc: 32},
		{n: 33, k: 15, kc: 15},
		{n: 25, k: 784, pc: 256, kc: 256}, // a narrow panel (conv1's filter gradient)
		{n: 40, k: 47, kc: 47, jc: 32},    // 8 columns, a tail block
		{n: 16, k: 20, kc: 20},            // one half exactly
		{n: 17, k: 33, pc: 1, kc: 32},     // one row into the second half
		{n: 200, k: 10, kc: 10, jc: 192},  // 8 columns, fewer than 16 rows of B^T
	} {
		b := make([]float32, tc.n*tc.k) // B^T stored n x k
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		p := &product[float32]{kn: kn, transB: true, b: b, ldb: tc.k, n: tc.n, k: tc.k}
		w := min(kn.nr, tc.n-tc.jc)
		packed := func(vec bool) []float32 {
			vectorPack = vec
			buf := make([]float32, BlockK*kn.nr)
			for i := range buf {
				buf[i] = -7 // garbage the pack must overwrite or clear
			}
			ptr, stride := p.panelB(buf, tc.pc, tc.kc, tc.jc, w)
			if ptr != &buf[0] || stride != kn.nr {
				t.Fatalf("%+v: transposed panel not packed into the buffer", tc)
			}
			return buf[:tc.kc*kn.nr]
		}
		got, want := packed(true), packed(false)
		if !slices.Equal(got, want) {
			t.Errorf("%+v: vector packing differs from the Go loop", tc)
		}
		for l := 0; l < tc.kc; l++ { // the Go loop against the definition
			for j := 0; j < w; j++ {
				if want[l*kn.nr+j] != b[(tc.jc+j)*tc.k+tc.pc+l] {
					t.Fatalf("%+v: packed (%d, %d) wrong", tc, l, j)
				}
			}
		}
	}
	for _, sh := range []shape{{m: 37, n: 70, k: 300, alpha: 1}, {m: 64, n: 128, k: 800, alpha: 0.5, beta: 1}, {m: 32, n: 25, k: 784, alpha: 1}} {
		a, lda, _, _, c0, ldc := operands[float32](rng, sh)
		bt := make([]float32, sh.n*sh.k)
		for i := range bt {
			bt[i] = rng.Float32()*2 - 1
		}
		run := func(vec bool) []float32 {
			vectorPack = vec
			c := slices.Clone(c0)
			Sgemm(false, true, sh.m, sh.n, sh.k, float32(sh.alpha), a, lda, bt, sh.k, float32(sh.beta), c, ldc)
			return c
		}
		if got, want := run(true), run(false); !slices.Equal(got, want) {
			t.Errorf("%+v: product with B transposed differs between the packings", sh)
		}
	}
}

// TestPackTransposedNoAllocs: a product with B transposed, packed by the
// vector copy with a masked tail block, allocates nothing.
func TestPackTransposedNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	sh := shape{m: 64, n: 64, k: 300, transB: true, alpha: 1}
	a, lda, b, ldb, c, ldc := operands[float32](rng, sh)
	if n := testing.AllocsPerRun(20, func() { Sgemm(false, true, sh.m, sh.n, sh.k, 1, a, lda, b, ldb, 0, c, ldc) }); n != 0 {
		t.Errorf("%v allocations per product", n)
	}
}
