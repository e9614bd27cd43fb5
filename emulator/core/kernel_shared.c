/* Shared memory as the kernel analysis sees it.
 *
 * Generic addresses into shared memory, in PTX: which registers hold one,
 * so that a load or store that names no state space through them is
 * counted as shared memory, not global. nvcc writes such accesses where a
 * pointer to shared memory is kept in a variable: wmma::load_matrix_sync of
 * a tile staged in shared memory (wmma.load.a.sync...f16 [%rd], with no
 * .shared), a zero-fill of a tile's row (st.v4.f32 [%rd]). Counted as global
 * they reached DRAM with no allocation to bound them, many times the
 * kernel's real traffic.
 *
 * A register holds one when every instruction that writes it makes one:
 * cvta.shared (the generic address of a shared variable), a move,
 * conversion, sum or difference with such a register among its sources,
 * or a 64-bit load from local memory when every 64-bit store to local
 * memory stores such a register (an array of tile pointers, As[stage],
 * indexed at run time). The other writes, and registers the kernel reads
 * before writing (parameters, special registers), hold none. Found by
 * iterating from "every written register holds one" down to the fixed
 * point: a few passes over the instructions. SASS is not read so: the
 * compiler turns such accesses into LDS and STS there.
 *
 * Bank conflicts of fragment loads (kw_fragment_conflicts, at the end):
 * how many times the shared-memory pipe replays a wmma.load whose rows
 * start on the same banks.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel_work_int.h"
#include "ptx_parse.h"

/* The register an operand names ("%rd4"), or -1. */
static int32_t reg_of(struct kw *w, struct emu_slice s)
{
    int32_t r = kw_is_reg(s) ? kw_reg_id(w, s) : -1;
    return r >= 0 && (uint32_t)r < w->nshwin ? r : -1;
}

/* Does this write make a generic address into shared memory, given the
 * registers found so far and whether local memory holds only such? */
static int makes_window(struct kw *w, const struct emu_ptx_inst *in, int local_window)
{
    struct emu_slice op = in->op, opc = emu_ptx_opcode(op);
    if (emu_slice_is(opc, "cvta"))
        return emu_ptx_has_part(op, "shared") && !emu_ptx_has_part(op, "to");
    if (emu_slice_is(opc, "ld"))
        return emu_ptx_has_part(op, "local") && kw_type_of(op, NULL) == 8 && kw_vec_of(op) == 1 && local_window;
    if (!emu_slice_is(opc, "mov") && !emu_slice_is(opc, "cvt") && !emu_slice_is(opc, "add") && !emu_slice_is(opc, "sub"))
        return 0;
    for (uint32_t i = 1; i < in->nops; i++) {
        int32_t r = reg_of(w, in->ops[i]);
        if (r >= 0 && w->shwin[r])
            return 1;
    }
    return 0;
}

int kw_find_shared_window(struct kw *w)
{
    const struct emu_ptx_kernel *k = w->k;
    w->nshwin = w->nregs;
    w->shwin = calloc(w->nregs ? w->nregs : 1, 1);
    if (!w->shwin)
        return -1;
    if (k->sass)
        return 0;
    int any_cvta = 0;
    for (uint32_t i = 0; i < k->ninsts; i++)
        any_cvta |= emu_slice_is(emu_ptx_opcode(k->insts[i].op), "cvta") && emu_ptx_has_part(k->insts[i].op, "shared");
    if (!any_cvta)
        return 0;
    /* start from every written register, and shrink */
    for (uint32_t i = 0; i < k->ninsts; i++) {
        const struct emu_ptx_inst *in = &k->insts[i];
        int32_t r = in->nops >= 1 ? reg_of(w, in->ops[0]) : -1;
        if (r >= 0 && !emu_slice_is(emu_ptx_opcode(in->op), "st"))
            w->shwin[r] = 1;
    }
    for (int changed = 1, pass = 0; changed && pass < 64; pass++) {
        changed = 0;
        /* local memory: only windows stored (and at least one) */
        int stored = 0, other = 0;
        for (uint32_t i = 0; i < k->ninsts; i++) {
            const struct emu_ptx_inst *in = &k->insts[i];
            struct emu_slice op = in->op;
            if (!emu_slice_is(emu_ptx_opcode(op), "st") || !emu_ptx_has_part(op, "local") || kw_type_of(op, NULL) != 8 ||
                in->nops < 2)
                continue;
            /* a register, or a vector of them: {%rd22, %rd23} */
            for (unsigned j = 0;; j++) {
                struct emu_slice item = kw_list_item(in->ops[1], j);
                if (!item.n)
                    break;
                int32_t r = reg_of(w, item);
                if (r >= 0 && w->shwin[r])
                    stored = 1;
                else
                    other = 1;
            }
        }
        int local_window = stored && !other;
        for (uint32_t i = 0; i < k->ninsts; i++) {
            const struct emu_ptx_inst *in = &k->insts[i];
            if (in->nops < 1 || emu_slice_is(emu_ptx_opcode(in->op), "st"))
                continue;
            int32_t r = reg_of(w, in->ops[0]);
            if (r >= 0 && w->shwin[r] && !makes_window(w, in, local_window)) {
                w->shwin[r] = 0;
                changed = 1;
            }
        }
    }
    return 0;
}

int kw_in_shared_window(struct kw *w, struct emu_slice addr)
{
    if (!w->shwin)
        return 0;
    int32_t r = reg_of(w, kw_address_name(w, addr));
    return r >= 0 && w->shwin[r];
}

/* Shared memory serves a warp's 32 banks of 4 bytes a clock; a fragment
 * load or store (wmma.load/store: ldmatrix's pattern, 16 bytes from each of
 * 8 rows a phase) whose rows start at the same banks is replayed once per
 * row that meets another: rows ldm x elem bytes apart fall on 128 / gcd
 * distinct 16-byte bank groups. 64-byte rows (ldm 32 halves) meet 4-way,
 * 128 or 256 bytes (64 or 128 halves) 8-way; padded rows (ldm 40: 80
 * bytes) none. The bytes a fragment moves count once per replay, as the
 * shared-memory pipe spends them. 1 where ldm is not a known constant. */
double kw_fragment_conflicts(struct kw *w, const struct emu_ptx_inst *in, unsigned elem)
{
    double ldm;
    if (in->nops < 3 || !kx_is_const(w, kw_operand(w, in->ops[2]), &ldm) || !(ldm > 0) || ldm > 1e6)
        return 1;
    unsigned long pitch = (unsigned long)ldm * elem;
    if (pitch % 16)
        return 1;
    int groups = 0, seen[8] = { 0 };
    for (unsigned r = 0; r < 8; r++) {
        int g = (int)((r * pitch) % 128 / 16);
        if (!seen[g])
            seen[g] = 1, groups++;
    }
    return 8.0 / groups;
}
