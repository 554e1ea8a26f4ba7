package blasimpl

import (
	"github.com/ptsghmc/ptsghmc/autodiff/internal/gemm"
	"gonum.org/v1/gonum/blas"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// pinned is the BLAS of the pinned arithmetic: matrix products by package
// gemm (the same bits on every machine), everything else by gonum's pure-Go
// BLAS, whose routines use no CPU-dependent code paths.
type pinned struct{ gonumblas.Implementation }

func isTrans(t blas.Transpose) bool { return t == blas.Trans || t == blas.ConjTrans }

// Sgemm computes C = beta C + alpha op(A) op(B) in the pinned arithmetic.
func (pinned) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm.Sgemm(isTrans(tA), isTrans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm computes C = beta C + alpha op(A) op(B) in the pinned arithmetic.
func (pinned) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm.Dgemm(isTrans(tA), isTrans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
