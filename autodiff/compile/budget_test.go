package compile

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/blas"
)

// TestImageBudget times the kernels of one LeNet image's gradient (one
// BLAS thread), their calls interleaved, on the calling thread's CPU clock
// (so that other jobs on the machine do not enter the figures), and
// prints each one's microseconds and share: docs/speed.md's per-image
// budget. The "5x" rows are the kernel-row factorisation's products
// (kernelRows), the "prev" rows the column kernels before setEdges. Set
// BUDGET=1 (and OPENBLAS_NUM_THREADS=1) to run it.
func TestImageBudget(t *testing.T) {
	if os.Getenv("BUDGET") == "" {
		t.Skip()
	}
	gemm := gemmFor[float32]()
	rng := rand.New(rand.NewPCG(1, 2))
	r := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
		return s
	}
	ic1 := &convShapes[0]
	ic2 := &convShapes[1]
	x1, col1 := r(784), make([]float32, 25*784)
	x2, col2, dcol2, dx2 := r(32*196), make([]float32, 800*196), r(800*196), make([]float32, 32*196)
	w1, w2 := r(32*25), r(64*800)
	z1, z2 := r(32*784), r(64*196)
	g1, g2 := make([]float32, 32*784), make([]float32, 64*196)
	dw1, dw2 := make([]float32, 32*25), make([]float32, 64*800)
	mp1 := &maxPool{b: 1, c: 32, h: 28, w: 28, oh: 14, ow: 14, kh: 2, kw: 2, strideH: 2, strideW: 2}
	mp2 := &maxPool{b: 1, c: 64, h: 14, w: 14, oh: 7, ow: 7, kh: 2, kw: 2, strideH: 2, strideW: 2}
	p1, a1, dp1 := make([]float32, 32*196), make([]int32, 32*196), r(32*196)
	p2, a2, dp2 := make([]float32, 64*49), make([]int32, 64*49), r(64*49)
	bias1, bias2, db := make([]float32, 32), make([]float32, 64), make([]float32, 64)
	wk, xk, dxk := r(5*64*160), r(160*252), make([]float32, 160*252)
	cases := []struct {
		name string
		f    func()
	}{
		{"c1 im2col", func() { im2colImage(ic1, x1, col1) }},
		{"c1 fwd gemm", func() { gemm(blas.NoTrans, blas.NoTrans, 32, 784, 25, 1, w1, 25, col1, 784, 0, z1, 784) }},
		{"c1 bias+relu+pool", func() { biasReluPool2x2F32(mp1, z1, bias1, p1, a1) }},
		{"c1 pool bwd", func() { maxPool2x2ReluBackwardF32(mp1, dp1, g1, a1, 32, z1) }},
		{"c1 bias sums", func() { biasSums(g1, 784, db[:32], true) }},
		{"c1 dW gemm", func() { gemm(blas.NoTrans, blas.Trans, 32, 25, 784, 1, g1, 784, col1, 784, 1, dw1, 25) }},
		{"c2 im2col", func() { im2colImage(ic2, x2, col2) }},
		{"c2 fwd gemm", func() { gemm(blas.NoTrans, blas.NoTrans, 64, 196, 800, 1, w2, 800, col2, 196, 0, z2, 196) }},
		{"c2 bias+relu+pool", func() { biasReluPool2x2F32(mp2, z2, bias2, p2, a2) }},
		{"c2 pool bwd", func() { maxPool2x2ReluBackwardF32(mp2, dp2, g2, a2, 64, z2) }},
		{"c1 pool bwd windows", func() { maxPool2x2ReluBackwardF32Windows(mp1, dp1, g1, a1, 32, z1) }},
		{"c2 pool bwd windows", func() { maxPool2x2ReluBackwardF32Windows(mp2, dp2, g2, a2, 64, z2) }},
		{"c2 bias sums", func() { biasSums(g2, 196, db, true) }},
		{"c2 dW gemm", func() { gemm(blas.NoTrans, blas.Trans, 64, 800, 196, 1, g2, 196, col2, 196, 1, dw2, 800) }},
		{"c2 dX gemm", func() { gemm(blas.Trans, blas.NoTrans, 800, 196, 64, 1, w2, 800, g2, 196, 0, dcol2, 196) }},
		{"c2 col2im", func() { col2imImage(ic2, dcol2, dx2) }},
		{"c1 fwd 5x K=5", func() {
			for kr := 0; kr < 5; kr++ {
				gemm(blas.NoTrans, blas.NoTrans, 32, 784, 5, 1, w1[kr*32*5:], 5, xk[kr*28:], 896, float32(min(kr, 1)), z1, 784)
			}
		}},
		{"c1 dW 5x N=5", func() {
			for kr := 0; kr < 5; kr++ {
				gemm(blas.NoTrans, blas.Trans, 32, 5, 784, 1, g1, 784, xk[kr*28:], 896, 1, wk[kr*32*5:], 5)
			}
		}},
		{"c2 fwd 5x K=160", func() {
			for kr := 0; kr < 5; kr++ {
				gemm(blas.NoTrans, blas.NoTrans, 64, 196, 160, 1, wk[kr*64*160:], 160, xk[kr*14:], 252, float32(min(kr, 1)), z2, 196)
			}
		}},
		{"c2 dW 5x N=160", func() {
			for kr := 0; kr < 5; kr++ {
				gemm(blas.NoTrans, blas.Trans, 64, 160, 196, 1, g2, 196, xk[kr*14:], 252, 1, wk[kr*64*160:], 160)
			}
		}},
		{"c2 dX 5x M=160", func() {
			clear(dxk)
			for kr := 0; kr < 5; kr++ {
				gemm(blas.Trans, blas.NoTrans, 160, 196, 64, 1, wk[kr*64*160:], 160, g2, 196, 1, dxk[kr*14:], 252)
			}
		}},
		{"c2 im2col prev", func() { referenceKernels = fastEdges; im2colImage(ic2, x2, col2); referenceKernels = 0 }},
		{"c2 col2im prev", func() { referenceKernels = fastEdges; col2imImage(ic2, dcol2, dx2); referenceKernels = 0 }},
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tot := make([]time.Duration, len(cases))
	for round := 0; round < 300; round++ {
		for i, cs := range cases {
			s := threadCPU()
			cs.f()
			tot[i] += threadCPU() - s
		}
	}
	var sum time.Duration
	for _, d := range tot {
		sum += d
	}
	for i, cs := range cases {
		fmt.Printf("%-20s %7.1f us %5.1f%%\n", cs.name, tot[i].Seconds()/300*1e6, 100*tot[i].Seconds()/sum.Seconds())
	}
	fmt.Printf("total %.1f us per image\n", sum.Seconds()/300*1e6)
}

// threadCPU returns the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID): with the goroutine locked to its thread, a
// kernel's own time, whatever else the machine runs.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
