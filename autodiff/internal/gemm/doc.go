// Package gemm is the matrix product of the pinned arithmetic: C = beta C +
// alpha op(A) op(B) on row-major float32 or float64 operands, computed so
// that every element of C is the same to the last bit on every machine,
// whatever its vector width, its number of cores or how many goroutines
// share the product.
//
// The arithmetic (version 1). The inner dimension k is cut into blocks of
// BlockK (256) from the start; each element's product over one block is a
// chain of fused multiply-adds in increasing k, started from +0,
//
//	p = 0;  p = fma(A[i,l], B[l,j], p)  for l in the block,
//
// rounded once per step to the element type (IEEE 754 round to nearest
// even). The first block writes C[i,j] = alpha p when beta is 0 (C is then
// not read) and (beta C[i,j]) + (alpha p) otherwise, each product and the
// sum rounded separately; every later block writes (1 C[i,j]) + (alpha p).
// Nothing else (no reassociation, no partial sums across lanes) enters an
// element, so a kernel's vector width and tile shape, and the split of C's
// columns between goroutines, cannot change a bit.
//
// Three kernels implement it: AVX-512 (an 8 x 32 float32 tile), AVX2 with
// FMA (6 x 16), and portable Go (fma32 emulates a single-rounding float32
// FMA exactly; math.FMA is float64's). Kernel reports the one in use;
// TestKernelsAgree checks them against each other bit for bit.
package gemm
