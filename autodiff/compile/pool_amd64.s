//go:build amd64 && !noasm

#include "textflag.h"

// func biasReluPoolPlaneAVX512(z *float32, out *float32, arg *int32, idx *[32]int32, oh, w int, masks uint64, bias float32)
//
// One plane of biasReluPool2x2F32 (kernels.go) for an even width w <= 32: for
// each output row ph, the row pair z[2ph w:(2ph+2) w] gets bias added in place
// and each 2x2 window's ReLU maximum and argmax go to out and arg, the
// candidates compared in the Go loop's order (top left, top right, bottom
// left, bottom right; strictly greater wins; a NaN never does; the first best
// from -MaxFloat32 and index -1). masks: bits 0-15 the lanes of a row's first
// 16 columns, 16-31 of the rest, 32-47 the w/2 output lanes. idx holds the
// even column numbers 0, 2, .., 30, then the odd ones.
TEXT ·biasReluPoolPlaneAVX512(SB), NOSPLIT, $0-60
	MOVQ z+0(FP), SI
	MOVQ out+8(FP), R11
	MOVQ arg+16(FP), R12
	MOVQ idx+24(FP), AX
	MOVQ oh+32(FP), CX
	MOVQ w+40(FP), R8
	MOVQ masks+48(FP), DX
	KMOVW DX, K1
	SHRQ $16, DX
	KMOVW DX, K2
	SHRQ $16, DX
	KMOVW DX, K4
	VBROADCASTSS bias+56(FP), Z29
	VMOVDQU32 (AX), Z28
	VMOVDQU32 64(AX), Z27
	VPBROADCASTD R8, Z26
	MOVL $0xff7fffff, BX
	VPBROADCASTD BX, Z30
	VPXORD Z31, Z31, Z31
	MOVQ R8, R9
	SHLQ $2, R9
	MOVQ R8, R10
	SHLQ $1, R10
	MOVQ R8, R13
	SHLQ $1, R13
	XORQ R14, R14
	TESTQ CX, CX
	JE done
loop:
	LEAQ (SI)(R9*1), DI
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VMOVUPS.Z (DI), K1, Z2
	VMOVUPS.Z 64(DI), K2, Z3
	VADDPS Z29, Z0, Z0
	VADDPS Z29, Z1, Z1
	VADDPS Z29, Z2, Z2
	VADDPS Z29, Z3, Z3
	VMOVUPS Z0, K1, (SI)
	VMOVUPS Z1, K2, 64(SI)
	VMOVUPS Z2, K1, (DI)
	VMOVUPS Z3, K2, 64(DI)
	VMOVDQA32 Z28, Z4
	VPERMI2PS Z1, Z0, Z4
	VMOVDQA32 Z27, Z5
	VPERMI2PS Z1, Z0, Z5
	VMOVDQA32 Z28, Z6
	VPERMI2PS Z3, Z2, Z6
	VMOVDQA32 Z27, Z7
	VPERMI2PS Z3, Z2, Z7
	VCMPPS $3, Z4, Z4, K3
	VMAXPS Z31, Z4, Z8
	VMOVAPS Z4, K3, Z8
	VCMPPS $3, Z5, Z5, K3
	VMAXPS Z31, Z5, Z9
	VMOVAPS Z5, K3, Z9
	VCMPPS $3, Z6, Z6, K3
	VMAXPS Z31, Z6, Z10
	VMOVAPS Z6, K3, Z10
	VCMPPS $3, Z7, Z7, K3
	VMAXPS Z31, Z7, Z11
	VMOVAPS Z7, K3, Z11
	VPBROADCASTD R14, Z18
	VPADDD Z28, Z18, Z14
	VPADDD Z27, Z18, Z15
	VPADDD Z26, Z14, Z16
	VPADDD Z26, Z15, Z17
	VMOVAPS Z30, Z12
	VPTERNLOGD $0xff, Z13, Z13, Z13
	VCMPPS $0x1e, Z12, Z8, K3
	VMOVAPS Z8, K3, Z12
	VMOVDQA32 Z14, K3, Z13
	VCMPPS $0x1e, Z12, Z9, K3
	VMOVAPS Z9, K3, Z12
	VMOVDQA32 Z15, K3, Z13
	VCMPPS $0x1e, Z12, Z10, K3
	VMOVAPS Z10, K3, Z12
	VMOVDQA32 Z16, K3, Z13
	VCMPPS $0x1e, Z12, Z11, K3
	VMOVAPS Z11, K3, Z12
	VMOVDQA32 Z17, K3, Z13
	VMOVUPS Z12, K4, (R11)
	VMOVDQU32 Z13, K4, (R12)
	ADDQ R13, R11
	ADDQ R13, R12
	LEAQ (SI)(R9*2), SI
	ADDQ R10, R14
	DECQ CX
	JNE loop
done:
	VZEROUPPER
	RET

// func poolReluScatterAVX512(d *float32, z *float32, grad *float32, arg *int32, n int)
//
// The scatter of maxPool2x2ReluBackwardF32 (kernels.go) for n windows, n a
// multiple of 16: d[arg[j]] = g[j] where arg[j] >= 0 and z[arg[j]] >= 0
// (ordered: a NaN is not kept, -0 is), the rest of d left as it is (the
// caller cleared it, and the Go loop writes +0 there). The windows' argmaxes
// are distinct, so the scattered stores do not collide.
TEXT ·poolReluScatterAVX512(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ grad+16(FP), R11
	MOVQ arg+24(FP), R12
	MOVQ n+32(FP), CX
	SHRQ $4, CX
	TESTQ CX, CX
	JE scatterdone
	VPXORD Z31, Z31, Z31
scatterloop:
	VMOVDQU32 (R12), Z0
	VPCMPD $5, Z31, Z0, K1
	KMOVW K1, K2
	VPXORD Z1, Z1, Z1
	VGATHERDPS (SI)(Z0*4), K2, Z1
	VCMPPS $0x1d, Z31, Z1, K3
	KANDW K1, K3, K3
	VMOVUPS (R11), Z2
	VSCATTERDPS Z2, K3, (DI)(Z0*4)
	ADDQ $64, R12
	ADDQ $64, R11
	DECQ CX
	JNE scatterloop
scatterdone:
	VZEROUPPER
	RET
