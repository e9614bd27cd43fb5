/* Control flow of a kernel's code for kernel_work.c: which instructions
 * branch, exit or write a register, the loops (pass 0: one per header
 * reached by a back branch, nested by their extents, each instruction's
 * innermost one) and the registers each loop's body writes.
 *
 * Costs: O(instructions) to find what the entry reaches and the back
 * branches, O(loops x instructions) at most to nest them; loop_regs
 * O(instructions) plus a stamp per register. */
#define _GNU_SOURCE
#include "maya/kwork.h"
#include "kernel_work_int.h"

#include <stdlib.h>
#include <string.h>

#include "ptx_parse.h"

int kw_is_branch(const struct emu_ptx_inst *in)
{
    return emu_slice_is(emu_ptx_opcode(in->op), "bra") && in->nops >= 1;
}

/* sass_parse.c's split of a 64-bit constant-bank load of two 4-byte
 * parameters: "mov.pair.b32 R4, c[0x0][off], R5, c[0x0][off + 4]". */
int kw_is_pair(const struct emu_ptx_inst *in)
{
    return emu_slice_is(in->op, "mov.pair.b32") && in->nops == 4;
}

int kw_is_exit(const struct emu_ptx_inst *in)
{
    return emu_slice_is(emu_ptx_opcode(in->op), "ret") || emu_slice_is(emu_ptx_opcode(in->op), "exit") || emu_slice_is(emu_ptx_opcode(in->op), "trap");
}

/* Does the instruction's first operand name a register it writes? */
int kw_writes_reg(const struct emu_ptx_inst *in)
{
    struct emu_slice opc = emu_ptx_opcode(in->op);
    static const char *const nodest[] = { "st", "red", "bar", "barrier", "bra", "ret", "exit", "prefetch",
                                          "prefetchu", "membar", "fence", "trap", "brkpt", "call", "cp",
                                          "stmatrix", "nanosleep", "griddepcontrol", "elect", "setmaxnreg" };
    for (size_t i = 0; i < sizeof nodest / sizeof *nodest; i++)
        if (emu_slice_is(opc, nodest[i]))
            return 0;
    if (emu_slice_is(opc, "wmma") && emu_ptx_has_part(in->op, "store"))
        return 0;
    return in->nops >= 1 && (in->ops[0].p[0] == '%' || in->ops[0].p[0] == '{' || kw_is_reg(in->ops[0]));
}

/* ---- pass 0: loops ---- */

/* A branch never taken: sass_parse.c's BRA.DIV ("BRA !PT, label"). */
static int branch_never(const struct emu_ptx_inst *in)
{
    return in->nops >= 2 && emu_slice_is(in->ops[1], "!PT");
}

/* Which instructions some path from the entry reaches: a branch goes to its
 * label (not one never taken: BRA.DIV) and, when guarded, on; an unguarded
 * branch or exit does not go on. All of them where an indirect jump's
 * targets are not known. NULL when out of memory. */
static unsigned char *reachable(const struct emu_ptx_kernel *k)
{
    uint32_t n = k->ninsts, top = 0;
    unsigned char *r = calloc(n ? n : 1, 1);
    uint32_t *stack = malloc((size_t)(n ? n : 1) * sizeof *stack);
    if (!r || !stack) {
        free(r);
        free(stack);
        return NULL;
    }
    if (n)
        r[0] = 1, stack[top++] = 0;
    while (top) {
        uint32_t i = stack[--top], next[2];
        int nn = 0;
        const struct emu_ptx_inst *in = &k->insts[i];
        int guarded = in->guard.n != 0;
        if (kw_is_branch(in) && !branch_never(in)) {
            int l = emu_ptx_label_find(k, in->ops[0]);
            if (l < 0) { /* an indirect jump (BRX): where to is not known */
                memset(r, 1, n);
                break;
            }
            if (k->labels[l].inst < n)
                next[nn++] = k->labels[l].inst;
            if (guarded || (in->nops >= 2 && !emu_slice_is(in->ops[1], "PT")))
                next[nn++] = i + 1;
        } else if (!kw_is_exit(in) || guarded) {
            next[nn++] = i + 1;
        }
        for (int j = 0; j < nn; j++)
            if (next[j] < n && !r[next[j]])
                r[next[j]] = 1, stack[top++] = next[j];
    }
    free(stack);
    return r;
}

int kw_find_loops(struct kw *w)
{
    const struct emu_ptx_kernel *k = w->k;
    uint32_t n = k->ninsts;
    w->inner = malloc((size_t)(n ? n : 1) * sizeof *w->inner);
    w->loop_at_head = malloc((size_t)(n ? n : 1) * sizeof *w->loop_at_head);
    w->lab_first = malloc((size_t)(n + 1) * sizeof *w->lab_first);
    w->label_inst = malloc((size_t)(k->nlabels ? k->nlabels : 1) * sizeof *w->label_inst);
    w->pend = calloc(k->nlabels ? k->nlabels : 1, sizeof *w->pend);
    w->loops = calloc(MAX_LOOPS, sizeof *w->loops);
    if (!w->inner || !w->loop_at_head || !w->lab_first || !w->label_inst || !w->pend || !w->loops)
        return -1;
    for (uint32_t i = 0; i <= n; i++)
        w->lab_first[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        w->inner[i] = w->loop_at_head[i] = NO_LOOP;
    for (uint32_t i = k->nlabels; i-- > 0;) {
        w->label_inst[i] = (int32_t)k->labels[i].inst;
        if (k->labels[i].inst <= n)
            w->lab_first[k->labels[i].inst] = i;
    }
    /* back branches: one loop per header, to its last back branch; one in
     * code no path reaches (nvcc's copies for a diverged warp, which jump
     * back into the code they stand for; the self-branch after the last
     * EXIT) closes none */
    unsigned char *reached = reachable(k);
    if (!reached)
        return -1;
    for (uint32_t j = 0; j < n; j++) {
        const struct emu_ptx_inst *in = &k->insts[j];
        if (!kw_is_branch(in) || !reached[j])
            continue;
        int l = emu_ptx_label_find(k, in->ops[0]);
        if (l < 0 || k->labels[l].inst > j)
            continue;
        uint32_t h = k->labels[l].inst;
        if (w->loop_at_head[h] != NO_LOOP) {
            w->loops[w->loop_at_head[h]].end = j;
            continue;
        }
        if (w->nloops == MAX_LOOPS) {
            w->flags |= MAYA_KW_F_TRUNCATED;
            continue;
        }
        w->loops[w->nloops] = (struct loop){ h, j, NO_LOOP, X_ONE, NULL, 0, 0 };
        w->loop_at_head[h] = w->nloops++;
    }
    free(reached);
    /* A back branch into code the compiler placed before a loop's header,
     * code that ends in an unconditional jump into that loop (flash
     * attention's next-tile loads, out of line), closes no loop of its own:
     * the piece is part of the later loop's body. Without this the two
     * overlap and the real loop is dropped. The piece's work is not
     * counted (the one pass has gone by it): what it loads is missing. */
    for (uint32_t a = 0; a < w->nloops; a++) {
        struct loop *A = &w->loops[a];
        for (uint32_t b = 0; b < w->nloops; b++) {
            struct loop *B = &w->loops[b];
            if (b == a || !(A->head < B->head && B->head <= A->end && A->end < B->end) || B->head == 0)
                continue;
            const struct emu_ptx_inst *last = &k->insts[B->head - 1];
            int t = kw_is_branch(last) && !last->guard.n ? emu_ptx_label_find(k, last->ops[0]) : -1;
            if (t < 0 || k->labels[t].inst <= B->head || k->labels[t].inst > B->end)
                continue;
            w->loop_at_head[A->head] = NO_LOOP;
            w->flags |= MAYA_KW_F_LOOP_UNRESOLVED;
            break;
        }
    }
    /* nesting: loops by header; a loop that overlaps another without
     * nesting in it is dropped (counted once, flagged) */
    uint32_t stack[MAX_WALK * 4], depth = 0;
    for (uint32_t i = 0; i < n; i++) {
        while (depth && w->loops[stack[depth - 1]].end < i)
            depth--;
        uint32_t l = w->loop_at_head[i];
        if (l != NO_LOOP) {
            if (depth && w->loops[l].end > w->loops[stack[depth - 1]].end) {
                w->loop_at_head[i] = NO_LOOP;
                w->flags |= MAYA_KW_F_LOOP_UNRESOLVED;
            } else if (depth == sizeof stack / sizeof *stack) {
                w->loop_at_head[i] = NO_LOOP;
                w->flags |= MAYA_KW_F_TRUNCATED;
            } else {
                w->loops[l].parent = depth ? stack[depth - 1] : NO_LOOP;
                stack[depth++] = l;
            }
        }
        w->inner[i] = depth ? stack[depth - 1] : NO_LOOP;
    }
    return 0;
}

/* Visit each register an instruction writes ("%r1", "{%r1, %r2}", "%r1|%p2"). */
static int each_dest(struct kw *w, const struct emu_ptx_inst *in, int (*fn)(struct kw *, int32_t, void *), void *arg)
{
    if (!kw_writes_reg(in))
        return 0;
    struct emu_slice d = in->ops[0];
    const char *p = d.p, *end = d.p + d.n;
    while (p < end) {
        while (p < end && (*p == '{' || *p == '}' || *p == ',' || *p == ' ' || *p == '\t' || *p == '|'))
            p++;
        const char *q = p;
        while (q < end && *q != ',' && *q != '}' && *q != ' ' && *q != '\t' && *q != '|')
            q++;
        struct emu_slice s = { p, (uint32_t)(q - p) };
        p = q;
        if (!kw_is_reg(s))
            continue;
        int32_t r = kw_reg_id(w, s);
        if (r < 0 || fn(w, r, arg) < 0)
            return -1;
    }
    if (kw_is_pair(in) && kw_is_reg(in->ops[2])) {
        int32_t r = kw_reg_id(w, in->ops[2]);
        if (r < 0 || fn(w, r, arg) < 0)
            return -1;
    }
    return 0;
}

static int no_op(struct kw *w, int32_t r, void *arg)
{
    return 0;
}

struct body_regs {
    struct loop *L;
    uint32_t *stamp, id, cap;
};

static int body_reg(struct kw *w, int32_t r, void *arg)
{
    struct body_regs *b = arg;
    if (b->stamp[r] == b->id)
        return 0;
    b->stamp[r] = b->id;
    if (b->L->nregs == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        uint32_t *nr = realloc(b->L->regs, b->cap * sizeof *nr);
        if (!nr)
            return -1;
        b->L->regs = nr;
    }
    b->L->regs[b->L->nregs++] = (uint32_t)r;
    return 0;
}

/* Registers each loop's body writes: every written register gets its id
 * first, so that the stamps cover them all. */
int kw_loop_regs(struct kw *w)
{
    const struct emu_ptx_kernel *k = w->k;
    for (uint32_t i = 0; i < k->ninsts; i++)
        if (each_dest(w, &k->insts[i], no_op, NULL) < 0)
            return -1;
    struct body_regs b = { NULL, calloc(w->nregs + 1, sizeof *b.stamp), 0, 0 };
    if (!b.stamp)
        return -1;
    for (uint32_t l = 0; l < w->nloops; l++) {
        struct loop *L = &w->loops[l];
        if (w->loop_at_head[L->head] != l)
            continue;
        b.L = L;
        b.id = l + 1;
        b.cap = 0;
        for (uint32_t i = L->head; i <= L->end && i < k->ninsts; i++)
            if (each_dest(w, &k->insts[i], body_reg, &b) < 0) {
                free(b.stamp);
                return -1;
            }
    }
    free(b.stamp);
    return 0;
}
