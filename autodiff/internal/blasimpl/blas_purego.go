//go:build !cgo || purego

package blasimpl

import (
	gonumblas "gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// Name names the native BLAS library.
const Name = "gonum (pure Go)"

func native() G.BLAS { return gonumblas.Implementation{} }

func nativeLibrary() string { return "gonum" }

func nativeKernel() string { return "go" }

func setNativeThreads(n int) {}

func nativeThreads() int { return 1 }
