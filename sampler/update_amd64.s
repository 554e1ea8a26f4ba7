//go:build amd64 && !noasm

#include "textflag.h"

// ADD_SUMS adds the 5 x 8 products stored at R11 to the sums in X11-X15,
// coordinate by coordinate in order (kin, pp, wb, wa, wk of coordinate 0,
// then of coordinate 1, ...), as the Go loop adds them.
#define ADD_SUMS \
	VADDSD 0(R11), X11, X11; \
	VADDSD 64(R11), X12, X12; \
	VADDSD 128(R11), X13, X13; \
	VADDSD 192(R11), X14, X14; \
	VADDSD 256(R11), X15, X15; \
	VADDSD 8(R11), X11, X11; \
	VADDSD 72(R11), X12, X12; \
	VADDSD 136(R11), X13, X13; \
	VADDSD 200(R11), X14, X14; \
	VADDSD 264(R11), X15, X15; \
	VADDSD 16(R11), X11, X11; \
	VADDSD 80(R11), X12, X12; \
	VADDSD 144(R11), X13, X13; \
	VADDSD 208(R11), X14, X14; \
	VADDSD 272(R11), X15, X15; \
	VADDSD 24(R11), X11, X11; \
	VADDSD 88(R11), X12, X12; \
	VADDSD 152(R11), X13, X13; \
	VADDSD 216(R11), X14, X14; \
	VADDSD 280(R11), X15, X15; \
	VADDSD 32(R11), X11, X11; \
	VADDSD 96(R11), X12, X12; \
	VADDSD 160(R11), X13, X13; \
	VADDSD 224(R11), X14, X14; \
	VADDSD 288(R11), X15, X15; \
	VADDSD 40(R11), X11, X11; \
	VADDSD 104(R11), X12, X12; \
	VADDSD 168(R11), X13, X13; \
	VADDSD 232(R11), X14, X14; \
	VADDSD 296(R11), X15, X15; \
	VADDSD 48(R11), X11, X11; \
	VADDSD 112(R11), X12, X12; \
	VADDSD 176(R11), X13, X13; \
	VADDSD 240(R11), X14, X14; \
	VADDSD 304(R11), X15, X15; \
	VADDSD 56(R11), X11, X11; \
	VADDSD 120(R11), X12, X12; \
	VADDSD 184(R11), X13, X13; \
	VADDSD 248(R11), X14, X14; \
	VADDSD 312(R11), X15, X15

// func sgnhtUnitAVX512(theta, p, grad, z *float64, n int, c *[4]float64, sums *[5]float64)
//
// The unit-mass SGNHT update of sgnhtStepper.chunk over n coordinates (n a
// multiple of 8), 8 at a time, with every product, difference and sum
// rounded as the Go loop rounds it (no fused multiply-add):
//
//	k     = hInvT g
//	p'    = (decay p - k) + noise z
//	mid   = 0.5 (p + p')
//	theta = theta + h p'
//
// and the kick and kinetic sums (kin += mid mid, pp += p' p', wb += p k,
// wa += p' k, wk += k k) added one coordinate after another, in order, as
// the Go loop adds them: the products in vector registers, the sums in
// scalar ones. c holds h, hInvT, noise, decay; sums holds kin, pp, wb, wa,
// wk, read and written.
TEXT ·sgnhtUnitAVX512(SB), NOSPLIT, $320-56
	MOVQ theta+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ grad+16(FP), DX
	MOVQ z+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R9
	MOVQ sums+48(FP), R10
	VBROADCASTSD 0(R9), Z16    // h
	VBROADCASTSD 8(R9), Z17    // hInvT
	VBROADCASTSD 16(R9), Z18   // noise
	VBROADCASTSD 24(R9), Z19   // decay
	MOVQ $0x3fe0000000000000, AX
	VPBROADCASTQ AX, Z20       // 0.5
	VMOVSD 0(R10), X11         // kin
	VMOVSD 8(R10), X12         // pp
	VMOVSD 16(R10), X13        // wb
	VMOVSD 24(R10), X14        // wa
	VMOVSD 32(R10), X15        // wk
	XORQ AX, AX
	MOVQ SP, R11               // 5 x 8 products

loop:
	CMPQ AX, CX
	JGE  done
	VMOVUPD (SI)(AX*8), Z21    // pb
	VMOVUPD (DX)(AX*8), Z22    // g
	VMOVUPD (R8)(AX*8), Z23    // z
	VMULPD Z22, Z17, Z24       // k = hInvT g
	VMULPD Z21, Z19, Z25       // decay pb
	VSUBPD Z24, Z25, Z25       // decay pb - k
	VMULPD Z23, Z18, Z26       // noise z
	VADDPD Z26, Z25, Z25       // p'
	VADDPD Z25, Z21, Z26
	VMULPD Z20, Z26, Z26       // mid = 0.5 (pb + p')
	VMOVUPD Z25, (SI)(AX*8)
	VMULPD Z25, Z16, Z27       // h p'
	VMOVUPD (DI)(AX*8), Z28
	VADDPD Z27, Z28, Z28
	VMOVUPD Z28, (DI)(AX*8)
	VMULPD Z26, Z26, Z26
	VMOVUPD Z26, 0(R11)        // mid mid
	VMULPD Z25, Z25, Z27
	VMOVUPD Z27, 64(R11)       // p' p'
	VMULPD Z24, Z21, Z28
	VMOVUPD Z28, 128(R11)      // pb k
	VMULPD Z24, Z25, Z29
	VMOVUPD Z29, 192(R11)      // p' k
	VMULPD Z24, Z24, Z30
	VMOVUPD Z30, 256(R11)      // k k
	ADD_SUMS
	ADDQ $8, AX
	JMP  loop

done:
	VMOVSD X11, 0(R10)
	VMOVSD X12, 8(R10)
	VMOVSD X13, 16(R10)
	VMOVSD X14, 24(R10)
	VMOVSD X15, 32(R10)
	VZEROUPPER
	RET

// func sgnhtScaledAVX512(theta, p, grad, z, r, sc, acc *float64, n int, c *[6]float64, sums *[5]float64)
//
// The SGNHT update of sgnhtStepper.general with a per-coordinate inverse
// sd of the mass r and injected-noise scale sc (either all ones where the
// update has none) over n coordinates (n a multiple of 8), 8 at a time,
// with every product, difference and sum rounded as the Go loop rounds it
// (no fused multiply-add):
//
//	k     = (hInvT g) r
//	p'    = (decay p - k) + (noise sc) z
//	mid   = 0.5 (p + p')
//	theta = theta + (h r) p'
//
// and the kick and kinetic sums (kin += mid mid, pp += p' p', wb += p k,
// wa += p' k, wk += k k) added one coordinate after another, in order, as
// the Go loop adds them: the products in vector registers, the sums in
// scalar ones. When acc is not nil it also adds each coordinate's
// gradient-noise estimate,
//
//	acc = acc + (((((p' p' - (d2 p) p) - (inj sc) sc) - p k) + p' k) + k k),
//
// to acc. c holds h, hInvT, noise, decay, d2 (decay squared) and inj
// (noise squared); sums holds kin, pp, wb, wa, wk, read and written.
TEXT ·sgnhtScaledAVX512(SB), NOSPLIT, $320-80
	MOVQ theta+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ grad+16(FP), DX
	MOVQ z+24(FP), R8
	MOVQ r+32(FP), R12
	MOVQ sc+40(FP), R13
	MOVQ acc+48(FP), BX
	MOVQ n+56(FP), CX
	MOVQ c+64(FP), R9
	MOVQ sums+72(FP), R10
	VBROADCASTSD 0(R9), Z16    // h
	VBROADCASTSD 8(R9), Z17    // hInvT
	VBROADCASTSD 16(R9), Z18   // noise
	VBROADCASTSD 24(R9), Z19   // decay
	VBROADCASTSD 32(R9), Z5    // d2
	VBROADCASTSD 40(R9), Z6    // inj
	MOVQ $0x3fe0000000000000, AX
	VPBROADCASTQ AX, Z20       // 0.5
	VMOVSD 0(R10), X11         // kin
	VMOVSD 8(R10), X12         // pp
	VMOVSD 16(R10), X13        // wb
	VMOVSD 24(R10), X14        // wa
	VMOVSD 32(R10), X15        // wk
	XORQ AX, AX
	MOVQ SP, R11               // 5 x 8 products

sloop:
	CMPQ AX, CX
	JGE  sdone
	VMOVUPD (SI)(AX*8), Z21    // pb
	VMOVUPD (DX)(AX*8), Z22    // g
	VMOVUPD (R8)(AX*8), Z23    // z
	VMOVUPD (R12)(AX*8), Z31   // r
	VMULPD Z22, Z17, Z24       // hInvT g
	VMULPD Z31, Z24, Z24       // k = (hInvT g) r
	VMULPD Z21, Z19, Z25       // decay pb
	VSUBPD Z24, Z25, Z25       // decay pb - k
	VMOVUPD (R13)(AX*8), Z0    // sc
	VMULPD Z0, Z18, Z26        // noise sc
	VMULPD Z23, Z26, Z26       // (noise sc) z
	VADDPD Z26, Z25, Z25       // p'
	VADDPD Z25, Z21, Z26
	VMULPD Z20, Z26, Z26       // mid = 0.5 (pb + p')
	VMOVUPD Z25, (SI)(AX*8)
	VMULPD Z31, Z16, Z27       // h r
	VMULPD Z25, Z27, Z27       // (h r) p'
	VMOVUPD (DI)(AX*8), Z28
	VADDPD Z27, Z28, Z28
	VMOVUPD Z28, (DI)(AX*8)
	VMULPD Z26, Z26, Z26
	VMOVUPD Z26, 0(R11)        // mid mid
	VMULPD Z25, Z25, Z27
	VMOVUPD Z27, 64(R11)       // p' p'
	VMULPD Z24, Z21, Z28
	VMOVUPD Z28, 128(R11)      // pb k
	VMULPD Z24, Z25, Z29
	VMOVUPD Z29, 192(R11)      // p' k
	VMULPD Z24, Z24, Z30
	VMOVUPD Z30, 256(R11)      // k k
	TESTQ BX, BX
	JZ    ssums
	VMULPD Z21, Z5, Z1         // d2 pb
	VMULPD Z21, Z1, Z1         // (d2 pb) pb
	VSUBPD Z1, Z27, Z2         // p'p' - d2 pb pb
	VMULPD Z0, Z6, Z3          // inj sc
	VMULPD Z0, Z3, Z3          // (inj sc) sc
	VSUBPD Z3, Z2, Z2
	VSUBPD Z28, Z2, Z2         // - pb k
	VADDPD Z29, Z2, Z2         // + p' k
	VADDPD Z30, Z2, Z2         // + k k
	VMOVUPD (BX)(AX*8), Z4
	VADDPD Z2, Z4, Z4
	VMOVUPD Z4, (BX)(AX*8)

ssums:
	ADD_SUMS
	ADDQ $8, AX
	JMP  sloop

sdone:
	VMOVSD X11, 0(R10)
	VMOVSD X12, 8(R10)
	VMOVSD X13, 16(R10)
	VMOVSD X14, 24(R10)
	VMOVSD X15, 32(R10)
	VZEROUPPER
	RET
