package autodiff

import "github.com/ptsghmc/ptsghmc/autodiff/internal/blasimpl"

// BLASName names the native BLAS library: "openblas" (cgo) or "gonum (pure
// Go)" (the purego build tag, or no cgo). Products use it only in the
// native arithmetic (UseArithmetic).
const BLASName = blasimpl.Name

// The arithmetics matrix products can run in (UseArithmetic).
const (
	// ArithmeticPinned, the default, computes every matrix product so that
	// its bits are the same on every machine: the same run writes the same
	// samples on any x86-64 CPU, whatever its vector width or cores
	// (autodiff/internal/gemm's doc says how).
	ArithmeticPinned = blasimpl.Pinned
	// ArithmeticNative hands products to the native BLAS library, whose
	// kernel (OpenBLAS picks it by CPU) and thread count change the
	// rounding: faster on some machines, not reproducible across them.
	ArithmeticNative = blasimpl.Native
)

// Arithmetic describes what the process's matrix products compute with;
// its ID is what decides their bits.
type Arithmetic = blasimpl.Arithmetic

// UseArithmetic makes the process's matrix products use mode
// (ArithmeticPinned or ArithmeticNative). Evaluators take the products when
// they are built, so call it before building them.
func UseArithmetic(mode string) error { return blasimpl.Use(mode) }

// CurrentArithmetic returns the process's arithmetic.
func CurrentArithmetic() Arithmetic { return blasimpl.Current() }

// SetBLASThreads sets how many threads one matrix product may use (the
// pinned products split C's columns over goroutines, which changes no
// bit). Replicas that run in parallel goroutines should each use one, or
// they oversubscribe the cores.
func SetBLASThreads(n int) { blasimpl.SetThreads(n) }

// BLASThreads returns how many threads one matrix product may use.
func BLASThreads() int { return blasimpl.Threads() }

// NativeBLAS returns the native BLAS library's name and version, the
// kernel it picked for this CPU, and its default threads per product.
func NativeBLAS() (library, kernel string, threads int) { return blasimpl.NativeBLAS() }

// WithBLASThreads sets how many threads one BLAS call may use, for the
// whole process, to n, and returns the function that restores the previous
// setting; n <= 0 leaves the setting alone. A run sets it while it
// computes (train's Run.Train, Run.Finish, Chains.Train), and an ensemble
// while it adds a sample, not for the rest of the process: rungs, chains or
// shards stepped in parallel goroutines want one thread per call, or they
// oversubscribe the cores.
func WithBLASThreads(n int) (restore func()) {
	if n <= 0 {
		return func() {}
	}
	prev := BLASThreads()
	SetBLASThreads(n)
	return func() { SetBLASThreads(prev) }
}
