//go:build amd64 && !noasm

package gemm

//go:noescape
func packTrans32x16(dst *float32, src *float32, ldb int, blocks int)

//go:noescape
func packTrans16Masked(dst *[256]float32, src *float32, ldb int, mask uint16, rows int)

// vectorPack selects the AVX-512 transposed packing of B's float32 panels
// (packb_amd64.s); tests turn it off to compare with the Go loop.
var vectorPack = true

// packTransposed32 packs the first w (1..32) columns of a transposed
// float32 panel of nr = 32 columns with AVX-512: buf[l*32+j] = b[j*ldb+l]
// for j < w and l < kc, where b starts at the panel's first element; whole
// 16 x 16 blocks of a full panel directly, the others (the last kc mod 16
// columns, a panel narrower than 32) through one masked block each. Columns
// j >= w of buf are left as they are (panelB clears them). It returns how
// many of the kc columns it packed: 0 when the CPU cannot, the kernel's
// panel is not 32 wide, or vectorPack is off.
func packTransposed32(buf, b []float32, ldb, kc, w, nr int) int {
	if kc == 0 || w == 0 || nr != 32 || !hasAVX512 || !vectorPack {
		return 0
	}
	_ = buf[kc*32-1]
	_ = b[(w-1)*ldb+kc-1]
	l0 := 0
	if w == 32 {
		blocks := kc / 16
		if blocks > 0 {
			packTrans32x16(&buf[0], &b[0], ldb, blocks)
			packTrans32x16(&buf[16], &b[16*ldb], ldb, blocks)
		}
		l0 = blocks * 16
	}
	var t [256]float32
	for ; l0 < kc; l0 += 16 {
		n := min(16, kc-l0)
		for j0 := 0; j0 < w; j0 += 16 {
			rows := min(16, w-j0)
			packTrans16Masked(&t, &b[j0*ldb+l0], ldb, uint16(1<<n-1), rows)
			for l := 0; l < n; l++ {
				copy(buf[(l0+l)*32+j0:(l0+l)*32+j0+rows], t[l*16:])
			}
		}
	}
	return kc
}
