package machine

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// GEMMPeak measures float32 GEMM GFLOP/s (1024^3, all BLAS threads).
func GEMMPeak() float64 {
	threads := autodiff.BLASThreads()
	autodiff.SetBLASThreads(runtime.NumCPU())
	defer autodiff.SetBLASThreads(threads)
	const n = 1024
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	c := make([]float32, n*n)
	impl := blas32.Implementation()
	impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
	best := 0.0
	for r := 0; r < 5; r++ {
		t := time.Now()
		impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
		best = max(best, 2*n*n*n/time.Since(t).Seconds()/1e9)
	}
	return best
}

// CopyBandwidth measures memory bandwidth in GB/s (bytes read plus bytes
// written) by copying 64 MiB float64 buffers on n goroutines at once, best
// of five rounds.
func CopyBandwidth(n int) float64 {
	n = max(n, 1)
	const words = 8 << 20 // 64 MiB of float64
	src, dst := make([][]float64, n), make([][]float64, n)
	for i := range src {
		src[i], dst[i] = make([]float64, words), make([]float64, words)
		for j := range src[i] {
			src[i][j] = float64(j)
		}
		copy(dst[i], src[i]) // fault the pages in
	}
	best := 0.0
	for r := 0; r < 5; r++ {
		done := make(chan struct{}, n)
		t := time.Now()
		for i := 0; i < n; i++ {
			go func() {
				copy(dst[i], src[i])
				done <- struct{}{}
			}()
		}
		for i := 0; i < n; i++ {
			<-done
		}
		best = max(best, float64(2*8*words*n)/time.Since(t).Seconds()/1e9)
	}
	return best
}

// CPUTime returns the CPU time the process has used (user and system, all
// threads).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS returns the process's peak resident set in MiB (Linux).
func PeakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%g", &kb)
			return kb / 1024
		}
	}
	return 0
}

// GradientFLOPs counts the floating-point operations of the matrix products
// in one minibatch gradient of an MLP with these layer sizes: per layer a
// forward product and a weight-gradient product, and for every layer but the
// first the product that carries the error back to its input (the data need
// no gradient), each 2 batch in out. It is what the gradient phase's share of
// the GEMM peak is computed from; the rule of thumb 6 batch params
// overstates it by the first layer's backward product (28% for
// 784-400-400-10).
func GradientFLOPs(sizes []int, batch int) float64 {
	macs := 0
	for l := 0; l+1 < len(sizes); l++ {
		products := 3
		if l == 0 {
			products = 2
		}
		macs += products * sizes[l] * sizes[l+1]
	}
	return 2 * float64(macs) * float64(batch)
}
