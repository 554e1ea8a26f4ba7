package compile

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// TestGemmShapesAB times LeNet's convolution products (one image, one
// BLAS thread) in alternative shapes, transposes and batchings, each
// shape's calls interleaved with the others', on the calling thread's CPU
// clock: the measurement behind docs/speed.md's "GEMM shapes" table. Set
// GEMM_AB=1 (and OPENBLAS_NUM_THREADS=1) to run it.
func TestGemmShapesAB(t *testing.T) {
	if os.Getenv("GEMM_AB") == "" {
		t.Skip()
	}
	gemm := gemmFor[float32]()
	rng := rand.New(rand.NewPCG(1, 2))
	const o, k, p, c = 64, 800, 196, 32
	r := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
		return s
	}
	w, col, g := r(o*k), r(k*p), r(o*p)
	out, outT := make([]float32, o*p), make([]float32, p*o)
	dw, dwT := make([]float32, o*k), make([]float32, k*o)
	dcol := make([]float32, k*p)
	colB, gB, outB, dcolB := r(k*p*8), r(o*p*8), make([]float32, o*p*8), make([]float32, k*p*8)
	sq, sqc := r(512*512), make([]float32, 512*512)
	wf, gcol, dx := r(c*1600), r(1600*p), make([]float32, c*p)
	cases := []struct {
		name string
		f    func()
	}{
		{"fwd NN 64x196x800", func() { gemm(blas.NoTrans, blas.NoTrans, o, p, k, 1, w, k, col, p, 0, out, p) }},
		{"fwd TT 196x64x800", func() { gemm(blas.Trans, blas.Trans, p, o, k, 1, col, p, w, k, 0, outT, o) }},
		{"dW NT 64x800x196", func() { gemm(blas.NoTrans, blas.Trans, o, k, p, 1, g, p, col, p, 1, dw, k) }},
		{"dW^T NT 800x64x196", func() { gemm(blas.NoTrans, blas.Trans, k, o, p, 1, col, p, g, p, 1, dwT, o) }},
		{"dX TN 800x196x64", func() { gemm(blas.Trans, blas.NoTrans, k, p, o, 1, w, k, g, p, 0, dcol, p) }},
		{"dX^T TN 196x800x64", func() { gemm(blas.Trans, blas.NoTrans, p, k, o, 1, g, p, w, k, 0, dcol, k) }},
		{"fwd NN x8 /8", func() { gemm(blas.NoTrans, blas.NoTrans, o, 8*p, k, 1, w, k, colB, 8*p, 0, outB, 8*p) }},
		{"dW NT x8 /8", func() { gemm(blas.NoTrans, blas.Trans, o, k, 8*p, 1, gB, 8*p, colB, 8*p, 1, dw, k) }},
		{"dX TN x8 /8", func() { gemm(blas.Trans, blas.NoTrans, k, 8*p, o, 1, w, k, gB, 8*p, 0, dcolB, 8*p) }},
		{"square 512 (x0.5)", func() { gemm(blas.NoTrans, blas.NoTrans, 512, 256, 512, 1, sq, 512, sq, 512, 0, sqc, 256) }},
		{"c1 fwd NN 32x784x25 (x1)", func() { gemm(blas.NoTrans, blas.NoTrans, 32, 784, 25, 1, w, 25, col, 784, 0, dcol, 784) }},
		{"c1 fwd TT 784x32x25 (x1)", func() { gemm(blas.Trans, blas.Trans, 784, 32, 25, 1, col, 784, w, 25, 0, dcolB, 32) }},
		{"c1 dW NT 32x25x784 (x1)", func() { gemm(blas.NoTrans, blas.Trans, 32, 25, 784, 1, gB, 784, col, 784, 1, dw, 25) }},
		{"c1 dW^T NT 25x32x784 (x1)", func() { gemm(blas.NoTrans, blas.Trans, 25, 32, 784, 1, col, 784, gB, 784, 1, dwT, 32) }},
		{"dX tconv NN 32x196x1600", func() { gemm(blas.NoTrans, blas.NoTrans, c, p, 1600, 1, wf, 1600, gcol, p, 0, dx, p) }},
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tot := make([]time.Duration, len(cases))
	for round := 0; round < 30; round++ {
		for i, cs := range cases {
			s := threadCPU()
			for j := 0; j < 20; j++ {
				cs.f()
			}
			if round > 2 {
				tot[i] += threadCPU() - s
			}
		}
	}
	for i, cs := range cases {
		d := tot[i].Seconds() / 27 / 20
		fl := 2 * float64(o*k*p)
		if strings.Contains(cs.name, "(x1)") {
			fl = 2 * 32 * 784 * 25
		}
		if strings.Contains(cs.name, " x8") {
			fl *= 8
		}
		if strings.Contains(cs.name, "square") {
			fl = 2 * 512 * 512 * 256
		}
		fmt.Printf("%-26s %.1f us  %.1f GFLOP/s\n", cs.name, d*1e6, fl/d/1e9)
	}
}
