/* Declared replicas (maya run --replicas; docs/dedup.md, "Ranks that never
 * start"): which ranks of a job do the same work, said by the user as
 * folded dimensions of the rank number, shared by the launcher, the
 * emulated NCCL and the collator (header only: the emulator links nothing
 * of the CLI).
 *
 * A dimension N:S says that ranks whose number differs only in the digit
 * (rank / S) mod N do the same work (a data-parallel degree N with stride S:
 * Megatron and torchrun lay TP ranks out fastest, so DP has stride TP; TP
 * itself is N:1). Dimensions must not overlap (sorted by stride, each starts
 * at or above the end of the one before) and N * S must divide the world.
 * The ranks whose folded digits are all 0 or 1 are emulated (the 1s show
 * which communicators span a dimension); the others are replicas, started
 * only to reach their first NCCL call and rebuilt from the rank with their
 * folded digits 0 (their source), or, when that is rank 0, from the next
 * emulated rank of rank 0's replicas. Text form: "N:S[,N:S...]".
 */
#ifndef MAYA_REPLICAS_H
#define MAYA_REPLICAS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAYA_REPLICAS_MAX_DIMS 8

struct maya_replicas {
    int ndims;
    int64_t n[MAYA_REPLICAS_MAX_DIMS], stride[MAYA_REPLICAS_MAX_DIMS]; /* sorted by stride */
};

static inline int64_t maya_replicas_digit(const struct maya_replicas *r, int k, int64_t rank)
{
    return rank / r->stride[k] % r->n[k];
}

/* Parse "N:S[,N:S...]" for a world of `world` ranks. 0, or -1 with why
 * (what was expected, what was found) in err. */
static inline int maya_replicas_parse(const char *spec, int64_t world, struct maya_replicas *out, char *err,
                                      size_t errn)
{
    memset(out, 0, sizeof *out);
    const char *p = spec;
    while (p && *p) {
        char *end;
        long long n = strtoll(p, &end, 10), s = 1;
        if (end == p || n < 2) {
            snprintf(err, errn, "\"%s\": expected N:STRIDE[,N:STRIDE...] with N of 2 or more", spec);
            return -1;
        }
        p = end;
        if (*p == ':') {
            s = strtoll(p + 1, &end, 10);
            if (end == p + 1 || s < 1) {
                snprintf(err, errn, "\"%s\": the stride after ':' must be a whole number of 1 or more", spec);
                return -1;
            }
            p = end;
        }
        if (*p && *p != ',') {
            snprintf(err, errn, "\"%s\": unexpected \"%s\"; expected N:STRIDE[,N:STRIDE...]", spec, p);
            return -1;
        }
        if (*p == ',')
            p++;
        if (out->ndims == MAYA_REPLICAS_MAX_DIMS) {
            snprintf(err, errn, "\"%s\": at most %d dimensions", spec, MAYA_REPLICAS_MAX_DIMS);
            return -1;
        }
        int k = out->ndims++;
        while (k > 0 && out->stride[k - 1] > s) { /* insertion by stride */
            out->n[k] = out->n[k - 1];
            out->stride[k] = out->stride[k - 1];
            k--;
        }
        out->n[k] = n;
        out->stride[k] = s;
    }
    if (out->ndims == 0) {
        snprintf(err, errn, "\"%s\": expected N:STRIDE[,N:STRIDE...]", spec ? spec : "");
        return -1;
    }
    for (int k = 0; k < out->ndims; k++) {
        /* Products that overflow are larger than any stride or world. */
        int64_t below, size;
        if (k > 0 && (__builtin_mul_overflow(out->stride[k - 1], out->n[k - 1], &below) || out->stride[k] < below)) {
            snprintf(err, errn, "\"%s\": dimensions %lld:%lld and %lld:%lld overlap (a stride must be at least the "
                     "size times the stride of the one below)", spec, (long long)out->n[k - 1],
                     (long long)out->stride[k - 1], (long long)out->n[k], (long long)out->stride[k]);
            return -1;
        }
        if (__builtin_mul_overflow(out->n[k], out->stride[k], &size) || world % size) {
            snprintf(err, errn, "\"%s\": %lld x %lld does not divide the %lld ranks", spec, (long long)out->n[k],
                     (long long)out->stride[k], (long long)world);
            return -1;
        }
    }
    return 0;
}

/* The text form "N:S[,N:S...]" of r. */
static inline void maya_replicas_format(const struct maya_replicas *r, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < r->ndims && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld:%lld", k ? "," : "", (long long)r->n[k],
                                (long long)r->stride[k]);
}

/* Is the rank emulated (every folded digit 0 or 1)? */
static inline int maya_replicas_emulated(const struct maya_replicas *r, int64_t rank)
{
    for (int k = 0; k < r->ndims; k++)
        if (maya_replicas_digit(r, k, rank) > 1)
            return 0;
    return 1;
}

/* rank with digit k set to d */
static inline int64_t maya_replicas_with(const struct maya_replicas *r, int k, int64_t rank, int64_t d)
{
    return rank + (d - maya_replicas_digit(r, k, rank)) * r->stride[k];
}

/* What a replica is rebuilt from, and stands in for it: the rank with its
 * folded digits above 1 made 1 (its proxy, a rank that ran). Never rank 0,
 * whose host work is often its own (it logs, saves checkpoints), and the
 * same along a dimension for every pipeline stage: each stage's
 * tensor-parallel replicas copy its TP rank 1, so that the simulator can
 * fold a stage's copies into one rank, whatever stage 0's rank 0 does. */
static inline int64_t maya_replicas_representative(const struct maya_replicas *r, int64_t rank, int64_t world)
{
    (void)world;
    int64_t s = rank;
    for (int k = 0; k < r->ndims; k++)
        if (maya_replicas_digit(r, k, rank) > 1)
            s = maya_replicas_with(r, k, s, 1);
    return s;
}

/* Emulated ranks of a world. */
static inline int64_t maya_replicas_count_emulated(const struct maya_replicas *r, int64_t world)
{
    int64_t c = 0;
    for (int64_t i = 0; i < world; i++)
        c += maya_replicas_emulated(r, i);
    return c;
}

#endif
