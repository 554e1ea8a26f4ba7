//go:build amd64 && !noasm

#include "textflag.h"

// The float32 passes of dense.go over n elements in blocks of 16, the last
// partial block under a mask (tailmask's K1: the low n mod 16 lanes).
// Every lane computes what the Go loop computes for its element:
//   - an addition takes the destination's value as its first operand, as
//     the Go loop's ADDSS does (x86 returns the first operand's NaN when
//     both are NaN);
//   - the ReLU's max(v, 0) is v where v > 0, v with its sign bit cleared
//     where v is a NaN (the NaN Go's max returns on amd64), and +0
//     elsewhere (-0, negative values): VCMPPS's NLE_UQ (not v <= 0,
//     true for a NaN) selects the lanes, VPANDD.Z clears the sign bit there
//     and zeroes the others;
//   - the adjoint keeps delta where the output's bits other than the sign
//     are not all zero (VPTESTMD against 0x7fffffff), zero elsewhere.

// tailmask sets K1 to the low DX lanes (DX in 1..15); clobbers BX, CX.
#define TAILMASK \
	MOVQ DX, CX; \
	MOVL $1, BX; \
	SHLL CX, BX; \
	DECL BX; \
	KMOVW BX, K1

// func addTo32AVX512(dst, src *float32, n int)
//
// dst[i] += src[i].
TEXT ·addTo32AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), R8
	MOVQ R8, DX
	ANDQ $15, DX
	SUBQ DX, R8
	XORQ AX, AX

addloop:
	CMPQ AX, R8
	JGE  addtail
	VMOVUPS (DI)(AX*4), Z0
	VADDPS  (SI)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ    $16, AX
	JMP     addloop

addtail:
	TESTQ DX, DX
	JE    adddone
	TAILMASK
	VMOVUPS.Z (DI)(AX*4), K1, Z0
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(AX*4)

adddone:
	VZEROUPPER
	RET

// func biasRelu32AVX512(z, b *float32, n int)
//
// z[i] = max(z[i]+b[i], 0).
TEXT ·biasRelu32AVX512(SB), NOSPLIT, $0-24
	MOVQ z+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ n+16(FP), R8
	MOVL $0x7fffffff, BX
	VPBROADCASTD BX, Z30
	VPXORD Z31, Z31, Z31
	MOVQ R8, DX
	ANDQ $15, DX
	SUBQ DX, R8
	XORQ AX, AX

brloop:
	CMPQ AX, R8
	JGE  brtail
	VMOVUPS  (DI)(AX*4), Z0
	VADDPS   (SI)(AX*4), Z0, Z0
	VCMPPS   $0x16, Z31, Z0, K2
	VPANDD.Z Z30, Z0, K2, Z0
	VMOVUPS  Z0, (DI)(AX*4)
	ADDQ     $16, AX
	JMP      brloop

brtail:
	TESTQ DX, DX
	JE    brdone
	TAILMASK
	VMOVUPS.Z (DI)(AX*4), K1, Z0
	VMOVUPS.Z (SI)(AX*4), K1, Z1
	VADDPS    Z1, Z0, Z0
	VCMPPS    $0x16, Z31, Z0, K2
	VPANDD.Z  Z30, Z0, K2, Z0
	VMOVUPS   Z0, K1, (DI)(AX*4)

brdone:
	VZEROUPPER
	RET

// func relu32AVX512(z *float32, n int)
//
// z[i] = max(z[i], 0).
TEXT ·relu32AVX512(SB), NOSPLIT, $0-16
	MOVQ z+0(FP), DI
	MOVQ n+8(FP), R8
	MOVL $0x7fffffff, BX
	VPBROADCASTD BX, Z30
	VPXORD Z31, Z31, Z31
	MOVQ R8, DX
	ANDQ $15, DX
	SUBQ DX, R8
	XORQ AX, AX

rloop:
	CMPQ AX, R8
	JGE  rtail
	VMOVUPS  (DI)(AX*4), Z0
	VCMPPS   $0x16, Z31, Z0, K2
	VPANDD.Z Z30, Z0, K2, Z0
	VMOVUPS  Z0, (DI)(AX*4)
	ADDQ     $16, AX
	JMP      rloop

rtail:
	TESTQ DX, DX
	JE    rdone
	TAILMASK
	VMOVUPS.Z (DI)(AX*4), K1, Z0
	VCMPPS    $0x16, Z31, Z0, K2
	VPANDD.Z  Z30, Z0, K2, Z0
	VMOVUPS   Z0, K1, (DI)(AX*4)

rdone:
	VZEROUPPER
	RET

// func reluGrad32AVX512(a, delta *float32, n int)
//
// delta[i] = 0 where a[i] is +0 or -0, unchanged elsewhere.
TEXT ·reluGrad32AVX512(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), SI
	MOVQ delta+8(FP), DI
	MOVQ n+16(FP), R8
	MOVL $0x7fffffff, BX
	VPBROADCASTD BX, Z30
	MOVQ R8, DX
	ANDQ $15, DX
	SUBQ DX, R8
	XORQ AX, AX

rgloop:
	CMPQ AX, R8
	JGE  rgtail
	VMOVUPS     (SI)(AX*4), Z0
	VPTESTMD    Z30, Z0, K2
	VMOVDQU32.Z (DI)(AX*4), K2, Z1
	VMOVUPS     Z1, (DI)(AX*4)
	ADDQ        $16, AX
	JMP         rgloop

rgtail:
	TESTQ DX, DX
	JE    rgdone
	TAILMASK
	VMOVUPS.Z   (SI)(AX*4), K1, Z0
	VPTESTMD    Z30, Z0, K1, K2
	VMOVDQU32.Z (DI)(AX*4), K2, Z1
	VMOVUPS     Z1, K1, (DI)(AX*4)

rgdone:
	VZEROUPPER
	RET
