#include "textflag.h"

// Both kernels take the columns below L&^3 (L = len of the first slice, rows = len(x) <= L),
// sixteen at a time while sixteen are left, then four. Each column's chain runs over the
// rows in order with every operation rounded on its own (no fused multiply-add), as the
// scalar loops run it.

DATA negInf<>+0(SB)/8, $0xfff0000000000000
GLOBL negInf<>(SB), RODATA|NOPTR, $8
DATA oneQ<>+0(SB)/8, $1
GLOBL oneQ<>(SB), RODATA|NOPTR, $8

// func maxPlusAVX2(best []float64, arg []int64, x, m []float64)
TEXT ·maxPlusAVX2(SB), NOSPLIT, $0-96
	MOVQ best_base+0(FP), DI
	MOVQ best_len+8(FP), R11     // L
	MOVQ arg_base+24(FP), SI
	MOVQ x_base+48(FP), R8
	MOVQ x_len+56(FP), R10       // rows
	MOVQ m_base+72(FP), R9
	MOVQ R11, R12
	SHLQ $3, R12                 // a row of m, in bytes
	MOVQ R11, R13
	ANDQ $-4, R13                // the columns done here
	VBROADCASTSD negInf<>(SB), Y15
	VPBROADCASTQ oneQ<>(SB), Y14
	XORQ CX, CX                  // first column of the block

mp16:
	MOVQ R13, AX
	SUBQ CX, AX
	CMPQ AX, $16
	JLT  mp4
	VMOVAPD Y15, Y0
	VMOVAPD Y15, Y1
	VMOVAPD Y15, Y2
	VMOVAPD Y15, Y3
	VPXOR   Y4, Y4, Y4
	VPXOR   Y5, Y5, Y5
	VPXOR   Y6, Y6, Y6
	VPXOR   Y7, Y7, Y7
	VPXOR   Y8, Y8, Y8           // the row, in every lane
	LEAQ (R9)(CX*8), AX          // &m[0*L+CX]
	MOVQ R8, DX
	MOVQ R10, BX

mp16row:
	VBROADCASTSD (DX), Y9
	VADDPD    0(AX), Y9, Y10
	VCMPPD    $0x1e, Y0, Y10, Y11 // v > best (ordered: a NaN is not greater)
	VBLENDVPD Y11, Y10, Y0, Y0
	VBLENDVPD Y11, Y8, Y4, Y4
	VADDPD    32(AX), Y9, Y10
	VCMPPD    $0x1e, Y1, Y10, Y11
	VBLENDVPD Y11, Y10, Y1, Y1
	VBLENDVPD Y11, Y8, Y5, Y5
	VADDPD    64(AX), Y9, Y10
	VCMPPD    $0x1e, Y2, Y10, Y11
	VBLENDVPD Y11, Y10, Y2, Y2
	VBLENDVPD Y11, Y8, Y6, Y6
	VADDPD    96(AX), Y9, Y10
	VCMPPD    $0x1e, Y3, Y10, Y11
	VBLENDVPD Y11, Y10, Y3, Y3
	VBLENDVPD Y11, Y8, Y7, Y7
	VPADDQ    Y14, Y8, Y8
	ADDQ $8, DX
	ADDQ R12, AX
	DECQ BX
	JNZ  mp16row

	VMOVUPD Y0, 0(DI)(CX*8)
	VMOVUPD Y1, 32(DI)(CX*8)
	VMOVUPD Y2, 64(DI)(CX*8)
	VMOVUPD Y3, 96(DI)(CX*8)
	VMOVDQU Y4, 0(SI)(CX*8)
	VMOVDQU Y5, 32(SI)(CX*8)
	VMOVDQU Y6, 64(SI)(CX*8)
	VMOVDQU Y7, 96(SI)(CX*8)
	ADDQ $16, CX
	JMP  mp16

mp4:
	CMPQ CX, R13
	JGE  mpdone
	VMOVAPD Y15, Y0
	VPXOR   Y4, Y4, Y4
	VPXOR   Y8, Y8, Y8
	LEAQ (R9)(CX*8), AX
	MOVQ R8, DX
	MOVQ R10, BX

mp4row:
	VBROADCASTSD (DX), Y9
	VADDPD    0(AX), Y9, Y10
	VCMPPD    $0x1e, Y0, Y10, Y11
	VBLENDVPD Y11, Y10, Y0, Y0
	VBLENDVPD Y11, Y8, Y4, Y4
	VPADDQ    Y14, Y8, Y8
	ADDQ $8, DX
	ADDQ R12, AX
	DECQ BX
	JNZ  mp4row

	VMOVUPD Y0, 0(DI)(CX*8)
	VMOVDQU Y4, 0(SI)(CX*8)
	ADDQ $4, CX
	JMP  mp4

mpdone:
	VZEROUPPER
	RET

// func sumProductAVX2(acc, x, m []float64)
TEXT ·sumProductAVX2(SB), NOSPLIT, $0-72
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), R11
	MOVQ x_base+24(FP), R8
	MOVQ x_len+32(FP), R10
	MOVQ m_base+48(FP), R9
	MOVQ R11, R12
	SHLQ $3, R12
	MOVQ R11, R13
	ANDQ $-4, R13
	XORQ CX, CX

sp16:
	MOVQ R13, AX
	SUBQ CX, AX
	CMPQ AX, $16
	JLT  sp4
	VMOVUPD 0(DI)(CX*8), Y0
	VMOVUPD 32(DI)(CX*8), Y1
	VMOVUPD 64(DI)(CX*8), Y2
	VMOVUPD 96(DI)(CX*8), Y3
	LEAQ (R9)(CX*8), AX
	MOVQ R8, DX
	MOVQ R10, BX

sp16row:
	VBROADCASTSD (DX), Y9
	VMULPD 0(AX), Y9, Y10
	VADDPD Y10, Y0, Y0
	VMULPD 32(AX), Y9, Y11
	VADDPD Y11, Y1, Y1
	VMULPD 64(AX), Y9, Y12
	VADDPD Y12, Y2, Y2
	VMULPD 96(AX), Y9, Y13
	VADDPD Y13, Y3, Y3
	ADDQ $8, DX
	ADDQ R12, AX
	DECQ BX
	JNZ  sp16row

	VMOVUPD Y0, 0(DI)(CX*8)
	VMOVUPD Y1, 32(DI)(CX*8)
	VMOVUPD Y2, 64(DI)(CX*8)
	VMOVUPD Y3, 96(DI)(CX*8)
	ADDQ $16, CX
	JMP  sp16

sp4:
	CMPQ CX, R13
	JGE  spdone
	VMOVUPD 0(DI)(CX*8), Y0
	LEAQ (R9)(CX*8), AX
	MOVQ R8, DX
	MOVQ R10, BX

sp4row:
	VBROADCASTSD (DX), Y9
	VMULPD 0(AX), Y9, Y10
	VADDPD Y10, Y0, Y0
	ADDQ $8, DX
	ADDQ R12, AX
	DECQ BX
	JNZ  sp4row

	VMOVUPD Y0, 0(DI)(CX*8)
	ADDQ $4, CX
	JMP  sp4

spdone:
	VZEROUPPER
	RET
