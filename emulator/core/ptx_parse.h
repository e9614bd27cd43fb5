/* One PTX kernel as a list of instructions (ptx_parse.c): the layer that
 * reads code. The work analysis (kernel_work.c) walks it; an executor of
 * small kernels can interpret the same list later.
 *
 * Every string is a slice of the PTX text (pointer + length, not
 * NUL-terminated): the text must outlive the parsed kernel.
 */
#ifndef MAYA_PTX_PARSE_H
#define MAYA_PTX_PARSE_H

#include <stddef.h>
#include <stdint.h>

struct maya_kparam;

struct emu_slice {
    const char *p;
    uint32_t n;
};

#define EMU_PTX_MAX_OPERANDS 8   /* vector operands { ... } count as one */

struct emu_ptx_inst {
    struct emu_slice op;         /* whole mnemonic: "ld.global.nc.v4.f32" */
    struct emu_slice guard;      /* predicate register of "@%p1" / "@!%p1", n = 0 if none */
    uint8_t guard_neg;           /* 1 for "@!%p" */
    uint8_t nops;                /* operands (more than EMU_PTX_MAX_OPERANDS: the rest dropped) */
    struct emu_slice ops[EMU_PTX_MAX_OPERANDS]; /* as written: "%r1", "[%rd2+8]", "{%f1, %f2}", "0f3F800000" */
};

struct emu_ptx_label {
    struct emu_slice name;       /* "$L__BB0_2" */
    uint32_t inst;               /* index of the instruction it precedes */
};

struct emu_ptx_param {
    struct emu_slice name;
    uint32_t offset, bytes;      /* in the parameter buffer */
    uint8_t is_ptr;              /* .ptr, or a .u64/.b64 parameter (a pointer or a 64-bit integer) */
};

struct emu_ptx_kernel {
    struct emu_ptx_inst *insts;
    uint32_t ninsts;
    struct emu_ptx_label *labels;
    uint32_t nlabels;
    struct emu_ptx_param *params;
    uint32_t nparams;
    int truncated;               /* more instructions than the parser keeps */
    /* SASS read through nvdisasm (sass_parse.c): mnemonics are translated to
     * their PTX equivalents, operands keep SASS's spelling (R4, UR6, RZ, PT,
     * P0, c[0x0][0x210]); parameters are read from constant bank 0 at
     * param_base. */
    int sass;
    int sass_raw;                /* emu_sass_parse_raw: mnemonics and operands exactly as nvdisasm prints them */
    uint32_t param_base, param_bytes;
    /* the parameters' layout (offsets and sizes), while the SASS is read:
     * a 64-bit constant-bank load of two 4-byte parameters is two values */
    const struct maya_kparam *sass_params;
    uint32_t sass_nparams;
    /* nvcc's unsigned division by a register, followed while the SASS is
     * read (sass_parse.c): the divisor, and the registers holding its float,
     * reciprocal, reciprocal's bits and 2^32 / divisor, and the refinement's
     * error term; empty when none is under way */
    struct { char x[16], f[16], rcp[16], add[16], recip[16], err[16], q[16]; } udiv;
    char **arena;                /* text made for translated mnemonics, freed with the kernel */
    uint32_t narena;
    uint32_t cap_insts, cap_labels;
};

/* Append an instruction / a label before the next instruction: 0, or -1
 * when memory runs out (an instruction past EMU_PTX_MAX_INSTS is dropped
 * and the kernel marked truncated, which is not an error). */
int emu_ptx_add_inst(struct emu_ptx_kernel *k, const struct emu_ptx_inst *in);
int emu_ptx_add_label(struct emu_ptx_kernel *k, const char *name, size_t len);

/* The most instructions kept for one kernel (a body longer than this is
 * cut there and marked truncated). */
#define EMU_PTX_MAX_INSTS 262144u

/* Parse kernel `entry` of PTX text (lines end with '\n' or '\0', as in a
 * .ptx file or a cubin's .nv_debug_ptx_txt). 0, or -1 when the text has no
 * such entry, is damaged before its body, or memory runs out. Malformed
 * statements inside the body are skipped, never read past the text. */
int emu_ptx_parse(const char *text, size_t bytes, const char *entry, struct emu_ptx_kernel *out);
void emu_ptx_kernel_free(struct emu_ptx_kernel *k);

/* Parse nvdisasm's text of one kernel (`nvdisasm -c -fun INDEX cubin`):
 * the instructions of section .text.<entry>, translated (sass_parse.c).
 * param_base, param_bytes: where the parameters sit in constant bank 0
 * (the cubin's EIATTR_PARAM_CBANK); params, nparams: their offsets and
 * sizes where known (NULL, 0: a 64-bit load reads one 8-byte value). 0, or
 * -1 when the text has no such kernel or memory runs out. */
int emu_sass_parse(const char *text, size_t bytes, const char *entry, uint32_t param_base, uint32_t param_bytes,
                   const struct maya_kparam *params, unsigned nparams, struct emu_ptx_kernel *out);

/* The same text read for execution (sass_exec.c): nothing translated, the
 * mnemonic ("ISETP.GE.U32.AND") and operands ("desc[UR4][R2.64+0x10]") as
 * nvdisasm prints them, guards as "P0"/"UP1" with guard_neg, labels by name. */
int emu_sass_parse_raw(const char *text, size_t bytes, const char *entry, struct emu_ptx_kernel *out);

/* Past blanks, line ends (\n or \0) and comments (// and C style) from p,
 * never past end. fatbin.c's PTX tokens share it. */
const char *emu_ptx_skip(const char *p, const char *end);

/* Helpers for readers of the parsed list. */
int emu_slice_is(struct emu_slice s, const char *word);
/* Is part (dot-separated, after the first) of mnemonic op equal to word? */
int emu_ptx_has_part(struct emu_slice op, const char *word);
/* The first part of a mnemonic ("ld" of "ld.global.f32"). */
struct emu_slice emu_ptx_opcode(struct emu_slice op);
/* Index of the label named s, or -1. */
int emu_ptx_label_find(const struct emu_ptx_kernel *k, struct emu_slice s);

#endif
