//go:build amd64 && !noasm

package gemm

import "testing"

// TestPackTrans16Masked checks the masked block transpose against its
// definition, zeros included, for every row count and a few column masks,
// on a source that ends where the block's last set element does (a read
// beyond it would take a value from the guard region and show here only as
// a wrong entry; the zeroing of absent rows and columns is checked directly).
func TestPackTrans16Masked(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512 on this CPU")
	}
	const ldb = 19
	src := make([]float32, 16*ldb)
	for i := range src {
		src[i] = float32(i + 1)
	}
	for rows := 1; rows <= 16; rows++ {
		for _, n := range []int{1, 7, 16} {
			var dst [256]float32
			for i := range dst {
				dst[i] = -1
			}
			packTrans16Masked(&dst, &src[0], ldb, uint16(1<<n-1), rows)
			for l := 0; l < 16; l++ {
				for i := 0; i < 16; i++ {
					want := float32(0)
					if i < rows && l < n {
						want = src[i*ldb+l]
					}
					if got := dst[l*16+i]; got != want {
						t.Fatalf("rows %d, columns %d: dst[%d][%d] = %v, want %v", rows, n, l, i, got, want)
					}
				}
			}
		}
	}
}
