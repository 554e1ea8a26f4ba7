//go:build amd64 && !noasm

#include "textflag.h"

// func zigFastAVX512(state *uint64, dst *float64, n int, steps *[8]uint64, tabK *uint32, tabW *float64) int
//
// Draws wyrand outputs 8 at a time (16 ziggurat candidates, the low then
// the high half of each) while at least 16 places of dst are left, and
// writes the candidates of the leading draws whose two candidates both
// pass the ziggurat's fast test (zigFast) in draw order; it stops at the
// first draw with a candidate that does not, leaving that draw to the
// caller (*state advanced past the written draws only). Returns the number
// of variates written (even). steps holds k*0xa0761d6478bd642f, k = 1..8.
TEXT ·zigFastAVX512(SB), NOSPLIT, $0-56
	MOVQ state+0(FP), R8
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ steps+24(FP), R9
	MOVQ tabK+32(FP), R10
	MOVQ tabW+40(FP), R11
	MOVQ (R8), BX              // the state
	XORQ AX, AX                // variates written
	VMOVDQU64 (R9), Z20        // k * C, k = 1..8
	MOVQ $0xe7037ed1a0b428db, DX
	VPBROADCASTQ DX, Z21       // wyrand's second constant
	MOVQ $0xffffffff, DX
	VPBROADCASTQ DX, Z22       // low 32 bits
	MOVL $127, DX
	VPBROADCASTD DX, Z23       // layer mask
	MOVQ $0xa0761d6478bd642f, R12
	SHLQ $3, R12               // 8 C: one block's advance (mod 2^64)
	MOVQ $0xa0761d6478bd642f, R13

loop:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $16
	JLT  done
	// a = state + k C, b = a ^ C2
	VPBROADCASTQ BX, Z0
	VPADDQ Z20, Z0, Z0         // a
	VPXORQ Z21, Z0, Z1         // b
	// 64 x 64 -> 128 bits from 32 x 32 -> 64 bit products
	VPSRLQ $32, Z0, Z2         // a1
	VPSRLQ $32, Z1, Z3         // b1
	VPMULUDQ Z1, Z0, Z4        // p00 = a0 b0
	VPMULUDQ Z3, Z0, Z5        // p01 = a0 b1
	VPMULUDQ Z1, Z2, Z6        // p10 = a1 b0
	VPMULUDQ Z3, Z2, Z7        // p11 = a1 b1
	VPSRLQ $32, Z4, Z8         // p00 >> 32
	VPANDQ Z22, Z5, Z9
	VPADDQ Z9, Z8, Z8
	VPANDQ Z22, Z6, Z9
	VPADDQ Z9, Z8, Z8          // mid = (p00 >> 32) + lo32(p01) + lo32(p10)
	VPANDQ Z22, Z4, Z10
	VPSLLQ $32, Z8, Z9
	VPORQ  Z9, Z10, Z10        // lo
	VPSRLQ $32, Z5, Z9
	VPADDQ Z9, Z7, Z7
	VPSRLQ $32, Z6, Z9
	VPADDQ Z9, Z7, Z7
	VPSRLQ $32, Z8, Z9
	VPADDQ Z9, Z7, Z7          // hi
	VPXORQ Z10, Z7, Z11        // v: dwords j0, j1 of each draw in order
	// the fast test: |j| < zigK[j & 127]
	VPANDD Z23, Z11, Z12       // layer i
	VPABSD Z11, Z13            // |j| (as uint32)
	KXNORW K1, K1, K1
	VPXORD Z14, Z14, Z14
	VPGATHERDD (R10)(Z12*4), K1, Z14
	VPCMPUD $1, Z14, Z13, K2   // |j| < zigK[i]
	KMOVW K2, DX
	NOTL DX
	ORL  $0x10000, DX          // a sentinel past the 16 candidates
	TZCNTL DX, DX              // first candidate that fails
	SHRL $1, DX                // draws before it
	// x = float64(j) * zigW[i]
	VCVTDQ2PD Y11, Z15
	VEXTRACTI32X8 $1, Z11, Y16
	VCVTDQ2PD Y16, Z16
	KXNORW K3, K3, K3
	VGATHERDPD (R11)(Y12*8), K3, Z17
	VEXTRACTI32X8 $1, Z12, Y18
	KXNORW K4, K4, K4
	VGATHERDPD (R11)(Y18*8), K4, Z19
	VMULPD Z17, Z15, Z15
	VMULPD Z19, Z16, Z16
	CMPL DX, $8
	JLT  partial
	VMOVUPD Z15, (DI)(AX*8)
	VMOVUPD Z16, 64(DI)(AX*8)
	ADDQ $16, AX
	ADDQ R12, BX
	JMP  loop

partial:
	// write the DX leading draws' 2 DX variates and stop
	MOVQ DX, R14
	SHLQ $1, R14               // variates
	MOVL $1, R15
	SHLXL R14, R15, R15
	DECL R15                   // their mask
	KMOVW R15, K5
	KSHIFTRW $8, K5, K6
	VMOVUPD Z15, K5, (DI)(AX*8)
	VMOVUPD Z16, K6, 64(DI)(AX*8)
	ADDQ R14, AX
	IMULQ R13, DX
	ADDQ DX, BX

done:
	MOVQ BX, (R8)
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET
