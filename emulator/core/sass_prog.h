/* The SASS executor's decoded program (sass_decode.c writes it, sass_exec.c
 * runs it): operands resolved to registers, immediates, constant-bank words,
 * addresses, special registers or branch targets; one instruction per SASS
 * line.
 *
 * Costs: 216 bytes a decoded instruction (seven 24-byte operands and the
 * mnemonic's 24 bytes).
 */
#ifndef MAYA_SASS_PROG_H
#define MAYA_SASS_PROG_H

#include "exec_common.h"

#include <stdint.h>

#define MAX_INSTS 65536u         /* kernels longer than this are not run */
#define MAX_SMEM ((228u << 10) + 1024u)
#define RESERVED_SMEM 1024u      /* sm_90's reserved shared bytes before the kernel's */
#define NR 256                   /* R0..R254, RZ = 255 */
#define NUR 64                   /* UR0..UR62, URZ = 63 */
#define RZ 255
#define URZ 63
#define PT 7                     /* P7 / UP7 read true */
#define NB 16                    /* convergence barrier registers B0..B15 */
#define STACK_TOP 0x10000u       /* c[0x0][0x28]: the stack pointer's start */

enum okind { O_NONE, O_R, O_UR, O_P, O_UP, O_IMM, O_CONST, O_MEM, O_SREG, O_LABEL, O_SRZ, O_FIMM, O_PR, O_B };

/* Special registers. */
enum sreg { S_TID_X, S_TID_Y, S_TID_Z, S_CTAID_X, S_CTAID_Y, S_CTAID_Z, S_LANEID, S_LTMASK, S_LEMASK, S_GTMASK,
            S_GEMASK, S_EQMASK, S_ZERO, S_NTID_X, S_NTID_Y, S_NTID_Z, S_NCTAID_X, S_NCTAID_Y, S_NCTAID_Z, S_WARPID };

struct sop {
    uint8_t kind;
    uint8_t neg, bnot, absv;     /* -x, ~x (or !P), |x| */
    uint8_t reg;                 /* R/UR/P/UP index, special register, constant bank */
    uint8_t wide;                /* R2.64 in an address */
    uint8_t ureg;                /* address: + UR (URZ if none); constant: index register kind */
    uint8_t ireg;                /* constant: R index register (RZ if none) */
    uint8_t scale;               /* address: the base register times 1 (0), 4, 8 or 16 (R6.X4) */
    uint8_t half;                /* register: .H0_H0 or .H0 (1), .H1_H1 or .H1 (2): one half, for both lanes */
    int32_t imm;                 /* address/constant offset */
    uint64_t val;                /* immediate (integer bits, or a float's double bits for O_FIMM) */
};

enum op {
    X_BAD, X_NOP, X_MOV, X_IMAD, X_IADD3, X_VIADD, X_LEA, X_SHF, X_LOP3, X_PLOP3, X_SEL, X_ISETP, X_PRMT, X_POPC,
    X_FLO, X_S2R, X_CS2R, X_LDC, X_HOP, X_LD, X_ST, X_ATOM, X_RED, X_BAR, X_SHFL, X_VOTE, X_VOTEU, X_WARPSYNC,
    X_BRA, X_BRX, X_EXIT, X_FADD, X_FMUL, X_FFMA, X_FMNMX, X_FSETP, X_FSEL, X_P2R, X_R2P, X_IMNMX, X_BREV,
    X_DADD, X_DMUL, X_DFMA, X_DSETP, X_BMOV, X_I2F, X_F2I, X_MUFU, X_F2F, X_F2FP, X_FRND, X_HMNMX2,
};

/* modifier bits */
enum {
    M_X = 1 << 0, M_HI = 1 << 1, M_WIDE = 1 << 2, M_U32 = 1 << 3, M_EX = 1 << 4, M_L = 1 << 5, M_R = 1 << 6,
    M_S = 1 << 7, M_64 = 1 << 8, M_SX32 = 1 << 9, M_OR = 1 << 10, M_XOR = 1 << 11, M_DIV = 1 << 12, M_SH = 1 << 13,
    M_U = 1 << 14, M_FTZ = 1 << 15,
};
enum space { SP_GLOBAL, SP_SHARED };
enum cmpk { C_F, C_LT, C_EQ, C_LE, C_GT, C_NE, C_GE, C_T, C_NUM, C_NAN, C_LTU, C_EQU, C_LEU, C_GTU, C_NEU, C_GEU };
enum atomk { A_ADD = 1, A_MIN, A_MAX, A_EXCH, A_CAS, A_AND, A_OR, A_XOR, A_INC, A_DEC };
enum shflk { SH_IDX = EMU_SHFL_IDX, SH_UP = EMU_SHFL_UP, SH_DOWN = EMU_SHFL_DOWN, SH_BFLY = EMU_SHFL_BFLY };
enum votek { V_ALL = 1, V_ANY, V_EQ };
enum roundk { R_RN, R_RZ, R_RM, R_RP };  /* I2F .RZ .RM .RP, F2I .TRUNC .FLOOR .CEIL; default nearest */
enum hopk { H_ADD = 1, H_MUL, H_FMA };    /* HADD2, HMUL2, HFMA2 */
/* a conversion's types (dt, st), or a half op's (dt: f16 or bf16; st T_F32 for .F32) */
enum convt { T_NONE, T_F16, T_BF16, T_F32, T_F64, T_S32, T_U32, T_S64, T_U64 };

struct sinst {
    uint8_t op, nops;
    uint8_t gkind, greg, gneg;   /* guard: O_P/O_UP (O_NONE: always), register, negated */
    uint8_t sub;                 /* compare, atomic, shuffle, vote or half op kind; rounding */
    uint8_t bytes;               /* memory width: 1, 2, 4, 8, 16; 0x80 | bytes: sign-extended */
    uint8_t space;
    uint8_t dt, st;              /* conversions and half ops: enum convt */
    uint32_t mods;
    uint32_t target;             /* branch target */
    struct sop o[7];
    char name[24];               /* the mnemonic, for the message of a run that stops at it */
};

struct emu_sass_prog {
    struct sinst *x;
    uint32_t n;
    uint32_t param_base, static_smem;
    unsigned char *bank2;        /* constant bank 2 (jump tables), NULL if none */
    uint32_t bank2_bytes;
    /* BRX's possible targets, as nvdisasm lists them (BRANCH_TARGETS):
     * instruction indexes, for all BRX of the kernel */
    uint32_t *brx;
    uint32_t nbrx;
};

#endif
