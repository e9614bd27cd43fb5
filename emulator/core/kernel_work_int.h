/* What kernel_work.c (the analysis of a kernel's code), kernel_value.c
 * (the values instructions write) and kernel_expr.c (the expressions they
 * build) share: the analysis state and the expression algebra over it.
 * Private to those three files. */
#ifndef MAYA_KERNEL_WORK_INT_H
#define MAYA_KERNEL_WORK_INT_H

#include <stdint.h>

#include "maya/trace_format.h"
#include "ptx_parse.h"

#define NO_LOOP 0xffffffffu
#define MAX_NODES 65000u      /* while building; the summary keeps what its terms reach */
#define MAX_LOOPS 4096u
#define MAX_WALK 48           /* depth of expression walks */

/* Expressions 0, 1 and 2 are always unknown, 0 and 1. */
enum { X_UNKNOWN = 0, X_ZERO = 1, X_ONE = 2, X_HALF = 3 };

struct loop {
    uint32_t head, end;       /* first and last instruction (the back branch) */
    uint32_t parent;          /* enclosing loop or NO_LOOP */
    uint32_t trip;            /* expression; X_ONE until resolved */
    uint32_t *regs;           /* registers the body writes */
    uint32_t nregs;
    int resolved;
};

struct pending {              /* what reaches a label by branches so far */
    int32_t *env;             /* NULL: nothing yet */
    uint32_t freq;
};

struct term_key {
    uint32_t freq, loop;
    uint16_t param;
    uint8_t cls;
    uint8_t tflags;           /* MAYA_KT_F_* */
};

struct term {
    struct term_key key;
    double amount;
};

struct kw {
    const struct emu_ptx_kernel *k;
    /* expressions, hash-consed */
    struct maya_kexpr *x;
    uint32_t nx, capx;
    uint32_t *xhash;          /* open addressing, 2^xbits slots, 0 = empty (index + 1) */
    uint32_t xbits;
    uint8_t *xshare;          /* per expression, launch_share's answer once known (kernel_expr.c) */
    /* registers by name */
    struct emu_slice *rname;
    uint32_t nregs, capregs;
    uint32_t *rhash;
    uint32_t rbits;
    int32_t *env;             /* per register: expression */
    uint8_t *shwin;           /* per register: holds a generic address into shared memory (kernel_shared.c) */
    uint32_t nshwin;
    /* control flow */
    int32_t *label_inst;      /* per label: instruction index */
    uint32_t *lab_first;      /* per instruction: first label index at it, or UINT32_MAX */
    struct pending *pend;     /* per label */
    struct loop *loops;
    uint32_t nloops;
    uint32_t *inner;          /* per instruction: innermost loop */
    uint32_t *loop_at_head;   /* per instruction: loop starting there, or NO_LOOP */
    /* terms */
    struct term *terms;
    uint32_t nterms, capterms;
    uint8_t flags;
    int oom;
};

/* ---- expressions (kernel_expr.c) ----
 * Expressions are hash-consed in w->x: one node per distinct expression, so
 * that equal values compare equal by index. Each builder folds what it can
 * (constants, identities, complementary shares) before making a node; past
 * MAX_NODES a builder gives X_UNKNOWN and flags the summary truncated. */
/* The table, with the fixed expressions X_UNKNOWN, X_ZERO, X_ONE and X_HALF. */
int kx_init(struct kw *w);
uint32_t kx_node(struct kw *w, uint8_t op, uint8_t arg, uint32_t a, uint32_t b, uint32_t c, double imm);
uint32_t kx_const(struct kw *w, double v);
int kx_is_const(const struct kw *w, uint32_t a, double *v);
/* a op b (enum maya_kx_op), exact on two constants where it is defined */
uint32_t kx_bin(struct kw *w, uint8_t op, uint32_t a, uint32_t b);
/* the share of threads for which a c b holds (enum maya_kx_cmp) */
uint32_t kx_cmp(struct kw *w, int c, uint32_t a, uint32_t b);
/* shares and frequencies: not, product, sum, either, c ? a : b */
uint32_t kx_not(struct kw *w, uint32_t p);
uint32_t kx_mul(struct kw *w, uint32_t a, uint32_t b);
uint32_t kx_add(struct kw *w, uint32_t a, uint32_t b);
uint32_t kx_por(struct kw *w, uint32_t a, uint32_t b);
uint32_t kx_sel(struct kw *w, uint32_t c, uint32_t a, uint32_t b);
/* Does expression e depend on loop l's carried values? */
int kx_depends(const struct kw *w, uint32_t e, uint32_t l, int depth);

/* Reading instructions (kernel_work.c), for kernel_value.c: the expression
 * an operand reads; a constant-bank operand `bytes` wide (sgn: signed); a
 * numeric literal; the size of the mnemonic's last scalar type (and its
 * kind, 's', 'u', 'b', 'f', ...); its vector width; the pointer parameter
 * an address starts from; sass_parse.c's pair of 4-byte parameter loads. */
uint32_t kw_operand(struct kw *w, struct emu_slice s);
uint32_t kw_cbank(struct kw *w, struct emu_slice s, unsigned bytes, int sgn);
int kw_literal(struct emu_slice s, double *v);
unsigned kw_type_of(struct emu_slice op, char *kind);
unsigned kw_vec_of(struct emu_slice op);
uint16_t kw_base_param(const struct kw *w, uint32_t e, int depth);
int kw_is_pair(const struct emu_ptx_inst *in);
/* The value an instruction gives its destination register (kernel_value.c). */
uint32_t kw_value(struct kw *w, const struct emu_ptx_inst *in);
/* A register's id by name (made on first sight; -1 out of memory); whether
 * an operand names a register; the register an address operand names
 * (empty where none); the n-th item of a list "{%r1, %r2}". */
int32_t kw_reg_id(struct kw *w, struct emu_slice s);
int kw_is_reg(struct emu_slice s);
struct emu_slice kw_address_name(const struct kw *w, struct emu_slice s);
struct emu_slice kw_list_item(struct emu_slice s, unsigned n);

/* Control flow (kernel_loops.c): a branch ("bra", SASS's BRA), an exit
 * ("ret", "exit", "trap"), an instruction whose first operand is a
 * register it writes; pass 0: the loops (w->loops, w->inner,
 * w->loop_at_head, and the label tables pass 1 uses), then the registers
 * each loop's body writes (every written register gets its id). 0, or -1
 * out of memory. */
int kw_is_branch(const struct emu_ptx_inst *in);
int kw_is_exit(const struct emu_ptx_inst *in);
int kw_writes_reg(const struct emu_ptx_inst *in);
int kw_find_loops(struct kw *w);
int kw_loop_regs(struct kw *w);

/* Generic addresses into shared memory (kernel_shared.c): find the
 * registers that hold one, once every register has its id; then whether an
 * address operand ("[%rd4+16]") goes through one. */
int kw_find_shared_window(struct kw *w);
int kw_in_shared_window(struct kw *w, struct emu_slice addr);
/* A fragment load's (wmma.load) bank-conflict replays: 1 to 8 (kernel_shared.c). */
double kw_fragment_conflicts(struct kw *w, const struct emu_ptx_inst *in, unsigned elem);

#endif
