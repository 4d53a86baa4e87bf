#include "textflag.h"

// func max32AVX2(v []float32) float32
// len(v) is a positive multiple of 32. A NaN never wins: VMAXPS gives its second source
// operand (the running maximum) when either is NaN.
TEXT ·max32AVX2(SB), NOSPLIT, $0-28
	MOVQ v_base+0(FP), SI
	MOVQ v_len+8(FP), CX
	MOVL $0xff800000, AX
	MOVL AX, X0
	VBROADCASTSS X0, Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3

loop:
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMAXPS  Y0, Y4, Y0
	VMAXPS  Y1, Y5, Y1
	VMAXPS  Y2, Y6, Y2
	VMAXPS  Y3, Y7, Y3
	ADDQ    $128, SI
	SUBQ    $32, CX
	JNZ     loop

	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func firstEq32AVX2(v []float32, m float32) int
// len(v) is a positive multiple of 8. The index of the first v[i] == m, or -1.
TEXT ·firstEq32AVX2(SB), NOSPLIT, $0-40
	MOVQ         v_base+0(FP), SI
	MOVQ         v_len+8(FP), CX
	VBROADCASTSS m+24(FP), Y0
	XORQ         AX, AX

scan:
	VCMPPS    $0, (SI)(AX*4), Y0, Y1
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        scan
	VZEROUPPER
	MOVQ      $-1, ret+32(FP)
	RET

found:
	BSFL      DX, DX
	ADDQ      DX, AX
	VZEROUPPER
	MOVQ      AX, ret+32(FP)
	RET
