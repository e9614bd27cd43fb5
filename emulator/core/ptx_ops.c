/* Static counts of PTX instruction classes in one kernel's PTX text: tensor
 * core MMAs, global and shared loads and stores, asynchronous and TMA copies,
 * exponentials, FMAs, shuffles, barriers, atomics. The estimator takes them
 * as features of compiler-generated kernels (Triton's), whose names say
 * little about their work.
 *
 * The text is either a PTX file (lines end with '\n') or the PTX a cubin
 * keeps in its .nv_debug_ptx_txt section when built with line information
 * (lines end with '\0', comments stripped); both are read the same way.
 * Counts are static: an instruction inside a loop counts once. The text is
 * read by ptx_parse.c, as the work analysis reads it. */
#include "ptx_ops.h"
#include "ptx_parse.h"

#include <string.h>

/* Does mnemonic m (dot-separated, ends at len) have a part starting with word? */
static int has_part(const char *m, size_t len, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= len; i++)
        if ((i == 0 || m[i - 1] == '.') && memcmp(m + i, word, w) == 0 &&
            (i + w == len || m[i + w] == '.' || m[i + w] == ':'))
            return 1;
    return 0;
}

static int starts(const char *m, size_t len, const char *word)
{
    size_t w = strlen(word);
    return len >= w && memcmp(m, word, w) == 0 && (len == w || m[w] == '.');
}

static void classify(const char *m, size_t len, struct emu_ptx_ops *o)
{
    o->insts++;
    if (starts(m, len, "mma") || starts(m, len, "wgmma") || (starts(m, len, "tcgen05") && has_part(m, len, "mma")))
        o->mma++;
    else if (starts(m, len, "ldmatrix"))
        o->ld_shared++;
    else if (starts(m, len, "stmatrix"))
        o->st_shared++;
    else if (starts(m, len, "ld") || starts(m, len, "st")) {
        /* Generic addressing (no state space) is counted as global: that is
         * where it almost always points. Parameters, locals and constants
         * are not memory traffic of interest. */
        int load = m[0] == 'l';
        if (has_part(m, len, "shared"))
            load ? o->ld_shared++ : o->st_shared++;
        else if (!has_part(m, len, "param") && !has_part(m, len, "local") && !has_part(m, len, "const"))
            load ? o->ld_global++ : o->st_global++;
    } else if (starts(m, len, "cp")) {
        if (has_part(m, len, "tensor"))
            o->tma++;
        else if (has_part(m, len, "async"))
            o->cp_async++;
    } else if (starts(m, len, "ex2"))
        o->ex2++;
    else if (starts(m, len, "fma"))
        o->fma++;
    else if (starts(m, len, "shfl"))
        o->shfl++;
    else if (starts(m, len, "bar") || starts(m, len, "barrier"))
        o->bar++;
    else if (starts(m, len, "atom") || starts(m, len, "red"))
        o->atom++;
}

int emu_ptx_op_counts(const char *text, size_t bytes, const char *entry, struct emu_ptx_ops *out)
{
    memset(out, 0, sizeof *out);
    struct emu_ptx_kernel k;
    if (emu_ptx_parse(text, bytes, entry, &k) < 0)
        return -1;
    for (uint32_t i = 0; i < k.ninsts; i++)
        classify(k.insts[i].op.p, k.insts[i].op.n, out);
    emu_ptx_kernel_free(&k);
    return 0;
}
