package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkProducts times the float32 products of one step of the
// 784-400-400-10 MLP at batch 128 (forward, the weights' gradients with A
// transposed, the inputs' gradients with B transposed) on one goroutine and
// reports GFLOP/s.
func BenchmarkProducts(b *testing.B) {
	defer SetWorkers(Workers())
	shapes := []shape{
		{m: 128, n: 400, k: 784, alpha: 1},
		{m: 128, n: 400, k: 400, alpha: 1},
		{m: 784, n: 400, k: 128, transA: true, alpha: 1},
		{m: 400, n: 400, k: 128, transA: true, alpha: 1},
		{m: 128, n: 400, k: 400, transB: true, alpha: 1},
	}
	for _, w := range []int{1, 2} {
		for _, sh := range shapes {
			name := fmt.Sprintf("workers=%d/%dx%dx%d/tA=%v/tB=%v", w, sh.m, sh.n, sh.k, sh.transA, sh.transB)
			b.Run(name, func(b *testing.B) {
				SetWorkers(w)
				rng := rand.New(rand.NewPCG(1, 2))
				ar, ac, br, bc := sh.m, sh.k, sh.k, sh.n
				if sh.transA {
					ar, ac = ac, ar
				}
				if sh.transB {
					br, bc = bc, br
				}
				fill := func(n int) []float32 {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(rng.NormFloat64())
					}
					return x
				}
				a, lda, bb, ldb, c, ldc := fill(ar*ac), ac, fill(br*bc), bc, fill(sh.m*sh.n), sh.n
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Sgemm(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, ldc)
				}
				b.ReportMetric(2*float64(sh.m*sh.n*sh.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
