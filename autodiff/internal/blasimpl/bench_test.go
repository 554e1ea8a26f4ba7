//go:build cgo && !purego

package blasimpl

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// BenchmarkSgemm times the pinned product on each kernel this CPU runs
// against OpenBLAS's Sgemm (the kernel it picks; OPENBLAS_CORETYPE and
// OPENBLAS_NUM_THREADS choose another) on the products of one gradient of
// the 784-400-400-10 MLP at batch 128, on one goroutine (gemm) and
// OpenBLAS's threads.
func BenchmarkSgemm(b *testing.B) {
	cases := []struct {
		m, n, k        int
		transA, transB bool
	}{
		{128, 400, 784, false, false}, // forward, layer 1
		{784, 400, 128, true, false},  // weight gradient, layer 1
		{128, 400, 400, false, true},  // error back through layer 2
	}
	rng := rand.New(rand.NewPCG(1, 1))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	defer gemm.UseKernel(gemm.Kernel())
	defer gemm.SetWorkers(gemm.Workers())
	for _, c := range cases {
		a, bb, out := fill(c.m*c.k), fill(c.k*c.n), fill(c.m*c.n)
		lda, ldb := c.k, c.n
		if c.transA {
			lda = c.m
		}
		if c.transB {
			ldb = c.k
		}
		flops := 2 * float64(c.m*c.n*c.k)
		name := fmt.Sprintf("%dx%dx%d,tA=%v,tB=%v", c.m, c.n, c.k, c.transA, c.transB)
		for _, kname := range gemm.Kernels() {
			if !gemm.Runs(kname) || kname == "go" {
				continue
			}
			for _, w := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s-%dw", name, kname, w), func(b *testing.B) {
					gemm.UseKernel(kname)
					gemm.SetWorkers(w)
					for b.Loop() {
						gemm.Sgemm(c.transA, c.transB, c.m, c.n, c.k, 1, a, lda, bb, ldb, 0, out, c.n)
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
		b.Run(name+"/openblas", func(b *testing.B) {
			tr := func(t bool) blas.Transpose {
				if t {
					return blas.Trans
				}
				return blas.NoTrans
			}
			impl := netlib.Implementation{}
			for b.Loop() {
				impl.Sgemm(tr(c.transA), tr(c.transB), c.m, c.n, c.k, 1, a, lda, bb, ldb, 0, out, c.n)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
