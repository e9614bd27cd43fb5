/* Unit test of the PTX executor (emulator/core/ptx_exec.c) on small
 * hand-written kernels: arithmetic, loads and stores in every space,
 * predicates and branches, special registers, a barrier over shared memory,
 * warp shuffles and votes, atomics; what it refuses (unknown instructions),
 * how it stops (out-of-range access, step bound, unreal bytes), and that
 * damaged PTX (cut, bytes changed) never crashes it. Exit 0 if all hold. */
#include "ptx_exec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c) \
    do { \
        if (!(c)) { \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); \
            failures++; \
        } \
    } while (0)

#include "exec_mem.h"

static enum emu_ptx_result run(const char *ptx, const char *entry, unsigned grid, unsigned block, const void *params,
                               uint32_t pbytes, char *why, size_t nwhy)
{
    char dwhy[256];
    struct emu_ptx_prog *p = emu_ptx_prog_new(ptx, strlen(ptx), entry, dwhy, sizeof dwhy);
    if (!p) {
        snprintf(why, nwhy, "%s", dwhy);
        return EMU_PTX_UNSUPPORTED;
    }
    struct emu_ptx_launch l = { { grid, 1, 1 }, { block, 1, 1 }, 0, params, pbytes, 1u << 20 };
    enum emu_ptx_result r = emu_ptx_run(p, &l, &M, why, nwhy);
    emu_ptx_prog_free(p);
    return r;
}

/* y[i] = a * x[i] + i (f32), i < n, over several blocks */
static const char *saxpy =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry saxpy(\n .param .u64 saxpy_param_0,\n .param .u64 saxpy_param_1,\n"
    " .param .f32 saxpy_param_2,\n .param .u32 saxpy_param_3\n)\n{\n"
    " .reg .pred %p<2>;\n .reg .b32 %r<6>;\n .reg .f32 %f<5>;\n .reg .b64 %rd<8>;\n"
    " ld.param.u64 %rd1, [saxpy_param_0];\n ld.param.u64 %rd2, [saxpy_param_1];\n"
    " ld.param.f32 %f1, [saxpy_param_2];\n ld.param.u32 %r1, [saxpy_param_3];\n"
    " mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mov.u32 %r4, %tid.x;\n"
    " mad.lo.s32 %r5, %r2, %r3, %r4;\n setp.ge.s32 %p1, %r5, %r1;\n @%p1 bra $L__end;\n"
    " cvta.to.global.u64 %rd3, %rd1;\n mul.wide.s32 %rd4, %r5, 4;\n add.s64 %rd5, %rd3, %rd4;\n"
    " ld.global.f32 %f2, [%rd5];\n cvt.rn.f32.s32 %f3, %r5;\n fma.rn.f32 %f4, %f1, %f2, %f3;\n"
    " cvta.to.global.u64 %rd6, %rd2;\n add.s64 %rd7, %rd6, %rd4;\n st.global.f32 [%rd7], %f4;\n"
    "$L__end:\n ret;\n}\n";

/* out[0] = sum over the block of tid (shared memory, barrier, loop),
 * out[1] = warp 0's sum by shfl.bfly, out[2] = ballot of odd lanes,
 * out[3] = atomic count of threads, out[4] = max over tid by atom.max */
static const char *reduce =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry red(\n .param .u64 red_param_0\n)\n{\n"
    " .reg .pred %p<6>;\n .reg .b32 %r<40>;\n .reg .b64 %rd<10>;\n"
    " .shared .align 4 .b8 buf[1024];\n"
    " ld.param.u64 %rd1, [red_param_0];\n cvta.to.global.u64 %rd2, %rd1;\n"
    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, buf;\n shl.b32 %r3, %r1, 2;\n add.s32 %r4, %r2, %r3;\n"
    " st.shared.u32 [%r4], %r1;\n bar.sync 0;\n"
    " mov.u32 %r5, %ntid.x;\n shr.u32 %r6, %r5, 1;\n"
    "$L__loop:\n setp.eq.s32 %p1, %r6, 0;\n @%p1 bra $L__done;\n"
    " setp.ge.u32 %p2, %r1, %r6;\n @%p2 bra $L__skip;\n"
    " shl.b32 %r7, %r6, 2;\n add.s32 %r8, %r4, %r7;\n ld.shared.u32 %r9, [%r4];\n ld.shared.u32 %r10, [%r8];\n"
    " add.s32 %r11, %r9, %r10;\n st.shared.u32 [%r4], %r11;\n"
    "$L__skip:\n bar.sync 0;\n shr.u32 %r6, %r6, 1;\n bra.uni $L__loop;\n"
    "$L__done:\n"
    " mov.u32 %r12, %r1;\n"
    " shfl.sync.bfly.b32 %r13|%p3, %r12, 16, 31, -1;\n add.s32 %r12, %r12, %r13;\n"
    " shfl.sync.bfly.b32 %r13|%p3, %r12, 8, 31, -1;\n add.s32 %r12, %r12, %r13;\n"
    " shfl.sync.bfly.b32 %r13|%p3, %r12, 4, 31, -1;\n add.s32 %r12, %r12, %r13;\n"
    " shfl.sync.bfly.b32 %r13|%p3, %r12, 2, 31, -1;\n add.s32 %r12, %r12, %r13;\n"
    " shfl.sync.bfly.b32 %r13|%p3, %r12, 1, 31, -1;\n add.s32 %r12, %r12, %r13;\n"
    " and.b32 %r14, %r1, 1;\n setp.ne.s32 %p4, %r14, 0;\n vote.sync.ballot.b32 %r15, %p4, -1;\n"
    " atom.global.add.u32 %r16, [%rd2+12], 1;\n red.global.max.s32 [%rd2+16], %r1;\n"
    " setp.ne.s32 %p5, %r1, 0;\n @%p5 bra $L__out;\n"
    " ld.shared.u32 %r17, [buf];\n st.global.u32 [%rd2], %r17;\n st.global.u32 [%rd2+4], %r12;\n"
    " st.global.u32 [%rd2+8], %r15;\n"
    "$L__out:\n ret;\n}\n";

static const char *unknown =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry unk(\n .param .u64 unk_param_0\n)\n{\n .reg .b32 %r<3>;\n"
    " mov.u32 %r1, 1;\n wgmma.fence.sync.aligned;\n ret;\n}\n";

static const char *forever =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry spin(\n .param .u64 spin_param_0\n)\n{\n"
    "$L__top:\n bra.uni $L__top;\n}\n";

int main(void)
{
    char why[256];
    /* saxpy over 3 blocks of 32, n = 70: the last 26 threads do nothing */
    float *x = (float *)mem, *y = (float *)(mem + 4096);
    for (int i = 0; i < 96; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = -1.0f;
    }
    struct {
        uint64_t x, y;
        float a;
        uint32_t n;
    } sp = { (uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, 2.0f, 70 };
    enum emu_ptx_result r = run(saxpy, "saxpy", 3, 32, &sp, sizeof sp, why, sizeof why);
    CHECK(r == EMU_PTX_DONE);
    if (r != EMU_PTX_DONE)
        fprintf(stderr, "saxpy: %s\n", why);
    int ok = 1;
    for (int i = 0; i < 96; i++)
        ok &= y[i] == (i < 70 ? 2.0f * ((float)i * 0.5f) + (float)i : -1.0f);
    CHECK(ok);

    /* a read past the buffer is refused, never done */
    sp.n = 96;
    sp.x = (uint64_t)(uintptr_t)(mem + sizeof mem - 64);
    CHECK(run(saxpy, "saxpy", 3, 32, &sp, sizeof sp, why, sizeof why) == EMU_PTX_UNREAL);
    /* bytes not real are refused */
    sp.x = (uint64_t)(uintptr_t)x;
    unreal_from = 100;
    CHECK(run(saxpy, "saxpy", 3, 32, &sp, sizeof sp, why, sizeof why) == EMU_PTX_UNREAL);
    unreal_from = sizeof mem;
    /* a write outside memory is a fault */
    sp.y = 16;
    CHECK(run(saxpy, "saxpy", 1, 32, &sp, sizeof sp, why, sizeof why) == EMU_PTX_FAULT);
    /* parameters shorter than the kernel's: a fault, not a read past them */
    CHECK(run(saxpy, "saxpy", 1, 32, &sp, 8, why, sizeof why) == EMU_PTX_FAULT);

    /* the reduction: 64 threads (two warps) */
    uint32_t *o = (uint32_t *)(mem + 8192);
    memset(o, 0, 32);
    uint64_t op = (uint64_t)(uintptr_t)o;
    r = run(reduce, "red", 1, 64, &op, sizeof op, why, sizeof why);
    CHECK(r == EMU_PTX_DONE);
    if (r != EMU_PTX_DONE)
        fprintf(stderr, "reduce: %s\n", why);
    CHECK(o[0] == 63 * 64 / 2);
    CHECK(o[1] == 31 * 32 / 2);
    CHECK(o[2] == 0xaaaaaaaau);
    CHECK(o[3] == 64);
    CHECK(o[4] == 63);

    /* what is not covered is refused at decoding, with the instruction */
    CHECK(run(unknown, "unk", 1, 1, &op, sizeof op, why, sizeof why) == EMU_PTX_UNSUPPORTED);
    CHECK(strstr(why, "wgmma") != NULL);
    CHECK(run(unknown, "nosuch", 1, 1, &op, sizeof op, why, sizeof why) == EMU_PTX_UNSUPPORTED);
    /* a loop without end stops at the step bound */
    CHECK(run(forever, "spin", 1, 32, &op, sizeof op, why, sizeof why) == EMU_PTX_STEPS);

    /* damaged PTX: cut at every offset, and bytes changed at random; the
     * executor decodes or refuses, and a run stops or ends, never crashes */
    const char *srcs[] = { saxpy, reduce };
    const char *entries[] = { "saxpy", "red" };
    unsigned seed = 12345;
    int decoded = 0, tried = 0;
    for (int s = 0; s < 2; s++) {
        size_t n = strlen(srcs[s]);
        char *buf = malloc(n + 1);
        for (int trial = 0; trial < 3000; trial++) {
            memcpy(buf, srcs[s], n + 1);
            size_t len = n;
            if (trial < 600) {
                len = (size_t)trial * n / 600;
            } else {
                for (int k = 0; k < 1 + trial % 4; k++) {
                    seed = seed * 1103515245u + 12345u;
                    size_t at = (seed >> 8) % n;
                    seed = seed * 1103515245u + 12345u;
                    static const char alphabet[] = "%[]{}+-,;:.0123456789 abrdfpxu$_\n\0";
                    buf[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
                }
            }
            struct emu_ptx_prog *p = emu_ptx_prog_new(buf, len, entries[s], why, sizeof why);
            tried++;
            if (!p)
                continue;
            decoded++;
            memset(mem, 0, 16384);
            uint64_t pp[4] = { (uint64_t)(uintptr_t)mem, (uint64_t)(uintptr_t)(mem + 4096), 0, 0 };
            struct emu_ptx_launch l = { { 2, 1, 1 }, { 64, 1, 1 }, 0, pp, sizeof pp, 100000 };
            emu_ptx_run(p, &l, &M, why, sizeof why);
            emu_ptx_prog_free(p);
        }
        free(buf);
    }
    printf("ptx_exec: damaged PTX: %d tried, %d decoded and run, none crashed\n", tried, decoded);
    CHECK(decoded > 0 && decoded < tried);
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
