// Package blasimpl chooses the BLAS library every matrix product of the
// evaluators goes through: OpenBLAS through cgo (blas_openblas.go), or gonum's
// pure-Go BLAS (blas_purego.go). Importing it installs the library for
// gonum's blas32 and blas64, Gorgonia and its tensors; Name, SetThreads and
// Threads report and set it.
package blasimpl
