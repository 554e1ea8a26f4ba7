//go:build amd64 && !noasm

package gemm

import "golang.org/x/sys/cpu"

//go:noescape
func sKernelAVX512(kc int, a *float32, ars, aks int, b *float32, bs int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func dKernelAVX512(kc int, a *float64, ars, aks int, b *float64, bs int, c *float64, ldc int, alpha, beta float64)

//go:noescape
func sKernelAVX2(kc int, a *float32, ars, aks int, b *float32, bs int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func dKernelAVX2(kc int, a *float64, ars, aks int, b *float64, bs int, c *float64, ldc int, alpha, beta float64)

var (
	hasAVX512 = cpu.X86.HasAVX512F
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// kernelsFor returns the float32 and float64 kernels named name ("avx512",
// "avx2", "go"), and whether this CPU runs them.
func kernelsFor(name string) (kernel[float32], kernel[float64], bool) {
	switch name {
	case "avx512":
		return kernel[float32]{"avx512", 8, 32, sKernelAVX512}, kernel[float64]{"avx512", 8, 16, dKernelAVX512}, hasAVX512
	case "avx2":
		return kernel[float32]{"avx2", 6, 16, sKernelAVX2}, kernel[float64]{"avx2", 6, 8, dKernelAVX2}, hasAVX2
	case "go":
		return goKernel[float32](), goKernel[float64](), true
	}
	return kernel[float32]{}, kernel[float64]{}, false
}

// best is the fastest kernel this CPU runs.
func best() string {
	switch {
	case hasAVX512:
		return "avx512"
	case hasAVX2:
		return "avx2"
	}
	return "go"
}
