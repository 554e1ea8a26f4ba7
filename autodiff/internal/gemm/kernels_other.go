//go:build !amd64 || noasm

package gemm

func kernelsFor(name string) (kernel[float32], kernel[float64], bool) {
	if name == "go" {
		return goKernel[float32](), goKernel[float64](), true
	}
	return kernel[float32]{}, kernel[float64]{}, false
}

func best() string { return "go" }
