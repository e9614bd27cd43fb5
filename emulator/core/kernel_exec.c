/* Small launches computed on the CPU: when a launch is small (at most
 * MAYA_EXEC_THREADS threads) and its kernel's PTX is covered by the PTX
 * executor (ptx_exec.c), or, for a kernel with SASS only (PyTorch's), its
 * SASS as nvdisasm prints it is run by the SASS executor (sass_exec.c), it
 * is run at its issue, reading only real device bytes (real_bytes.c). Its
 * stores then hold real values, so a program that reads a small result back
 * (`.item()`, a check of a reduction) sees what a GPU gives. A launch that
 * reads bytes that are not real, moves more than MAYA_EXEC_BYTES of global
 * memory, runs past MAX_STEPS instructions, or reaches code not covered is
 * only recorded, as before, and what it stored is not real.
 *
 * Costs: the kernel's code is found and decoded once, at its first small
 * launch that may read real bytes (off the program's clock; SASS needs an
 * nvdisasm run, cached on disk); a run costs about what the interpreter does
 * per instruction and thread, also off the program's clock. A launch of a
 * kernel that loads memory, none of whose parameters points at a real byte,
 * costs one load here (no real byte anywhere) or one binary search per
 * parameter word; a large launch one multiplication and compare. */
#define _GNU_SOURCE
#include "maya/kwork.h"
#include "emu.h"
#include "maya/common.h"
#include "ptx_exec.h"
#include "sass_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most threads a computed launch has by default: PyTorch's small
 * launches are often wide grids of idle threads (a 57-byte torch.cat is 264
 * x 2 blocks of 512), so the bound is on threads that cost little each, and
 * a run is bounded by MAX_STEPS instructions in all and by MAYA_EXEC_BYTES. */
#define DEFAULT_THREADS (1u << 20)
#define MAX_STEPS (16ull << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t max_threads = UINT64_MAX, max_bytes; /* UINT64_MAX: not read yet */

/* MAYA_EXEC_NOTES=1: say on stderr why a kernel is not computed. Off by
 * default: the program's stderr is its own (the report counts the reads of
 * values that were not computed, by kernel). */
static int notes;

static void configure(void)
{
    uint64_t t = DEFAULT_THREADS, b = 1u << 20;
    const char *v = getenv("MAYA_EXEC_THREADS");
    if (v && *v && maya_parse_u64(v, &t) < 0) {
        maya_error("MAYA_EXEC_THREADS=\"%s\": expected the most threads a launch computed on the CPU may have "
                   "(0: none); using %u", v, DEFAULT_THREADS);
        t = DEFAULT_THREADS;
    }
    v = getenv("MAYA_EXEC_BYTES");
    if (v && *v && maya_parse_size(v, &b) < 0) {
        maya_error("MAYA_EXEC_BYTES=\"%s\": expected a size in bytes (e.g. 1M); using 1M", v);
        b = 1u << 20;
    }
    max_bytes = b;
    v = getenv("MAYA_EXEC_NOTES");
    notes = v && *v && strcmp(v, "0") != 0;
    __atomic_store_n(&max_threads, t, __ATOMIC_RELEASE);
}

/* What a run touched: the allocation last checked (most accesses fall in
 * it), the bytes moved, and the ranges written (to make them real, or
 * spoil them again if the run stops). */
struct access {
    struct emu_kernel *k;
    struct emu_alloc last;
    int have_last;
    uint64_t moved;
    struct range {
        uint64_t start, end;
    } *w;
    size_t nw, capw;
};

static int in_device(struct access *a, uint64_t addr, uint32_t bytes)
{
    if (a->have_last && addr >= a->last.base && addr + bytes <= a->last.base + a->last.bytes)
        return 1;
    struct emu_alloc m;
    if (!emu_mem_lookup(addr, &m) || m.device < 0 || m.kind == MAYA_ALLOC_VMM_PHYSICAL ||
        m.kind == MAYA_ALLOC_VMM_RESERVE || addr + bytes > m.base + MAYA_MAX(m.bytes, m.charged))
        return 0;
    a->last = m;
    a->last.bytes = MAYA_MAX(m.bytes, m.charged);
    a->have_last = 1;
    return 1;
}

static int can_read(void *ctx, uint64_t addr, uint32_t bytes)
{
    struct access *a = ctx;
    uint32_t kind, writer;
    a->k->exec_loads = 1;
    a->moved += bytes;
    if (a->moved > max_bytes || !in_device(a, addr, bytes) || emu_real_check(addr, bytes, &kind, &writer))
        return -1;
    return 0;
}

static int can_write(void *ctx, uint64_t addr, uint32_t bytes)
{
    struct access *a = ctx;
    a->moved += bytes;
    if (a->moved > max_bytes || !in_device(a, addr, bytes))
        return -1;
    if (a->nw && a->w[a->nw - 1].end == addr) {
        a->w[a->nw - 1].end += bytes;
    } else {
        if (a->nw == a->capw) {
            size_t c = a->capw ? a->capw * 2 : 64;
            struct range *n = realloc(a->w, c * sizeof *n);
            if (!n)
                return -1;
            a->w = n;
            a->capw = c;
        }
        a->w[a->nw++] = (struct range){ addr, addr + bytes };
    }
    /* later loads of this launch read what it stored */
    emu_real_mark(addr, bytes);
    return 0;
}

/* The kernel's program, decoded at its first small launch (lock held):
 * from its PTX (exec_state 1), else from its SASS through nvdisasm
 * (exec_state 2, sass_exec.c; PyTorch's wheels carry SASS only). */
static void *program(struct emu_kernel *k)
{
    if (k->exec_state)
        return k->exec_state > 0 ? k->exec : NULL;
    k->exec_state = -1;
    char *text;
    size_t bytes;
    char why[256] = "";
    void *p = NULL;
    if (emu_fatbin_kernel_ptx(k, &text, &bytes) == 0) {
        p = emu_ptx_prog_new(text, bytes, k->mangled, why, sizeof why);
        free(text);
        k->exec_state = p ? 1 : -1;
    } else {
        unsigned base;
        int sm;
        void *bank2;
        size_t nbank2;
        if (emu_fatbin_kernel_sass(k, &text, &bytes, &base, &sm, &bank2, &nbank2) < 0) {
            snprintf(why, sizeof why, "no PTX, and no SASS text (nvdisasm not found?)");
        } else {
            p = emu_sass_prog_new(text, bytes, k->mangled, base, (uint32_t)MAYA_MAX(k->static_smem, 0), bank2,
                                  (uint32_t)nbank2, why, sizeof why);
            free(text);
            free(bank2);
            k->exec_state = p ? 2 : -1;
        }
    }
    if (!p) {
        if (notes && why[0])
            fprintf(stderr, "maya: %s is not computed on the CPU: %s\n", k->name, why);
        return NULL;
    }
    k->exec = p;
    return p;
}

/* Does the kernel's work summary (kernel_work.c) count global loads? */
static int loads_global(const struct emu_kernel *k)
{
    const struct maya_kwork *w = k->work;
    if (!w || k->work_bytes < sizeof *w)
        return 0;
    if (maya_kwork_bytes(w) > k->work_bytes)
        return 0;
    const struct maya_kterm *t = maya_kwork_terms(w);
    for (uint32_t i = 0; i < w->nterms; i++)
        if (t[i].cls == MAYA_KW_LD_GLOBAL || t[i].cls == MAYA_KW_ATOMIC)
            return 1;
    return 0;
}

int emu_kernel_exec(struct emu_kernel *k, const struct emu_launch *l, const void *params, uint32_t bytes)
{
    if (__builtin_expect(__atomic_load_n(&max_threads, __ATOMIC_ACQUIRE) == UINT64_MAX, 0)) {
        pthread_mutex_lock(&lock);
        if (max_threads == UINT64_MAX)
            configure();
        pthread_mutex_unlock(&lock);
    }
    uint64_t threads = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
    if (!k || threads > max_threads || !k->layout_known || bytes < k->param_bytes || k->exec_state < 0)
        return 0;
    /* A kernel that loads global memory reads it through its parameters
     * (pointers, or pointers in structures it is given): if none of them
     * points at a real byte, a run would stop at its first load. Programs
     * that never read values pay this check, not a run. (A launch whose
     * loads are on a path it does not take is then not computed either.) */
    if (!k->exec_state && !k->exec_loads && loads_global(k))
        k->exec_loads = 1; /* known from its work summary before its code is decoded */
    if (k->exec_loads && !emu_real_any_word(params, bytes))
        return 0;
    emu_wait_begin(); /* the emulator's work, not the program's */
    /* One launch at a time: runs read and write device memory as the
     * stream order of their issue says. */
    pthread_mutex_lock(&lock);
    void *p = program(k);
    int done = 0;
    if (p) {
        struct access a = { .k = k };
        struct emu_ptx_mem m = { can_read, can_write, &a };
        struct emu_ptx_launch pl = { { l->grid[0], l->grid[1], l->grid[2] }, { l->block[0], l->block[1], l->block[2] },
                                     l->smem_bytes, params, bytes, MAYA_MIN(threads * 65536, MAX_STEPS) };
        char why[256];
        enum emu_ptx_result r = k->exec_state == 2 ? emu_sass_run(p, &pl, &m, why, sizeof why)
                                                    : emu_ptx_run(p, &pl, &m, why, sizeof why);
        done = r == EMU_PTX_DONE;
        if (!done) {
            /* what it stored is not what the whole kernel would have */
            for (size_t i = 0; i < a.nw; i++)
                emu_real_spoil(a.w[i].start, a.w[i].end - a.w[i].start, MAYA_WRITER_KERNEL, k->trace_id);
            /* PTX not covered is refused when decoded, so reaching it is
             * final; SASS stops where a launch reaches what is not covered,
             * which another launch's path may not */
            if (r == EMU_PTX_UNSUPPORTED && k->exec_state == 1)
                k->exec_state = -1;
            if (notes)
                fprintf(stderr, "maya: %s is not computed on the CPU: %s\n", k->name, why);
        }
        free(a.w);
    }
    pthread_mutex_unlock(&lock);
    emu_wait_end();
    return done;
}
