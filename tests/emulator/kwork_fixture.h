/* What the kernel-work unit tests share (unit_kernel_work.c on PTX,
 * unit_kernel_work_sass.c on SASS): a launch record to evaluate a summary
 * for, and a kernel's text analysed into the summary a KERNEL record
 * carries, through the trace reader's checks. */
#ifndef MAYA_TESTS_KWORK_FIXTURE_H
#define MAYA_TESTS_KWORK_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "est_internal.h"
#include "kernel_work.h"
#include "maya/kwork.h"
#include "ptx_parse.h"

#include "../unit_check.h"

#define EXPECT(cond) CHECK(cond, "expected %s", #cond)

#define NEAR(got, want, rel) \
    do { \
        double g_ = (got), w_ = (want); \
        CHECK(fabs(g_ - w_) <= (rel) * fabs(w_), "%s = %.6g, expected %.6g (within %g%%)", #got, g_, w_, \
              100.0 * (rel)); \
    } while (0)

/* A launch record with its parameters after it. */
struct launch {
    struct maya_rec_launch l;
    unsigned char params[64];
};

static inline void launch(struct launch *b, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    memset(b, 0, sizeof *b);
    b->l.h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof *b };
    b->l.grid[0] = gx, b->l.grid[1] = gy, b->l.grid[2] = 1;
    b->l.block[0] = bx, b->l.block[1] = by, b->l.block[2] = 1;
    b->l.param_bytes = sizeof b->params;
}

static inline void set(struct launch *b, unsigned off, const void *v, unsigned bytes)
{
    memcpy(b->params + off, v, bytes);
}

/* Summary *keep (bytes long) as a KERNEL record carries it, through the
 * reader's checks: the record in *keep (freed by the caller), its summary. */
static inline const struct maya_kwork *as_record(void **keep, size_t bytes)
{
    EXPECT(bytes % 8 == 0);
    struct maya_rec_kernel *k = calloc(1, sizeof *k + bytes);
    if (!k) {
        free(*keep);
        *keep = NULL;
        return NULL;
    }
    k->h = (struct maya_rec_hdr){ MAYA_REC_KERNEL, 0, (uint32_t)(sizeof *k + bytes) };
    k->work_bytes = (uint32_t)bytes;
    memcpy(k + 1, *keep, bytes);
    const char *why = NULL;
    const struct maya_kwork *w = maya_kernel_work(k, &why);
    EXPECT(w != NULL);
    if (why)
        fprintf(stderr, "  reader says: %s\n", why);
    free(*keep);
    *keep = k;
    return w;
}

static inline const struct maya_kwork *analyse(const char *text, size_t n, const char *entry, void **keep)
{
    size_t bytes;
    *keep = NULL;
    if (emu_kwork_ptx_text(text, n, entry, 90, keep, &bytes) < 0)
        return NULL;
    return as_record(keep, bytes);
}

/* The same for SASS text, parameters at c[0x0][0x210] (param_bytes of them,
 * laid out as layout says, or NULL). */
static inline const struct maya_kwork *analyse_sass(const char *text, size_t n, const char *entry, unsigned param_bytes,
                                             const struct maya_kparam *layout, unsigned nlayout, void **keep)
{
    struct emu_ptx_kernel k;
    size_t bytes = 0;
    *keep = NULL;
    EXPECT(emu_sass_parse(text, n, entry, 0x210, param_bytes, layout, nlayout, &k) == 0);
    int rc = emu_kwork_from_ptx(&k, 90, keep, &bytes);
    emu_ptx_kernel_free(&k);
    EXPECT(rc == 0);
    if (rc < 0 || !*keep)
        return NULL;
    return as_record(keep, bytes);
}

#endif
