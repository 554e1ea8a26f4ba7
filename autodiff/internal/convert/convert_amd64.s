//go:build amd64 && !noasm

#include "textflag.h"

// func sumSquares32AVX512(dst *float32, src *float64, n int, sums *[4]float64)
//
// SumSquares for float32 over n elements (a multiple of 8): dst[i] =
// float32(src[i]), and src[i]^2 added to partial sum i mod 4 in index
// order (lanes 0-3 of a 256-bit accumulator: elements i..i+3, then
// i+4..i+7), each square rounded before its addition, as the Go loop.
TEXT ·sumSquares32AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ sums+24(FP), DX
	VMOVUPD (DX), Y0
	XORQ AX, AX

sqloop:
	CMPQ AX, CX
	JGE  sqdone
	VMOVUPD (SI)(AX*8), Z1
	VCVTPD2PS Z1, Y2
	VMOVUPS Y2, (DI)(AX*4)
	VMULPD Z1, Z1, Z3
	VEXTRACTF64X4 $1, Z3, Y4
	VADDPD Y3, Y0, Y0
	VADDPD Y4, Y0, Y0
	ADDQ $8, AX
	JMP  sqloop

sqdone:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	RET

// func addPriorGrad32AVX512(out *float64, grad *float32, theta *float64, n int, lam float64)
//
// AddPriorGrad for float32 over n elements (a multiple of 8): out[i] =
// float64(g[i]) + lam theta[i], the product rounded before the sum.
TEXT ·addPriorGrad32AVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ theta+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD lam+32(FP), Z0
	XORQ AX, AX

pgloop:
	CMPQ AX, CX
	JGE  pgdone
	VCVTPS2PD (SI)(AX*4), Z1
	VMULPD (DX)(AX*8), Z0, Z2
	VADDPD Z2, Z1, Z1
	VMOVUPD Z1, (DI)(AX*8)
	ADDQ $8, AX
	JMP  pgloop

pgdone:
	VZEROUPPER
	RET
