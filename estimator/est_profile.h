/* What the estimator takes from a maya profile directory (traces recorded
 * on real GPUs, docs/trace-format.md "Passthrough traces"): training rows
 * (profile_export.c) and measured durations for oracle mode
 * (oracle_profile.c), both read by profile_read.c. */
#ifndef EST_PROFILE_H
#define EST_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "maya/estimator.h"

/* One call of a profile, as the estimator sees an op. */
struct est_profile_op {
    struct est_op op;            /* rec, api, kernel, rank; collectives: one node */
    const char *name;            /* kernel name for launches, else the API name */
    int measured;                /* device_ns was measured (MAYA_F_MEASURED) */
    uint64_t device_ns;
    int host_known;              /* host_ns is the call's own host time (it did not wait) */
    uint64_t host_ns;
};
typedef int (*est_profile_fn)(const struct est_profile_op *p, void *arg);

/* Every call of every trace of dir/traces (in file name order, each trace
 * in record order); fn returning -1 stops the walk (NULL: only check the
 * headers). gpu (if not NULL)
 * receives the traces' GPU (all must agree). 0, or -1 with a message (not a
 * profile, a damaged trace). */
int est_profile_walk(const char *dir, est_profile_fn fn, void *arg, char *gpu, size_t gpu_size);

/* Key of an op name on a rank (FNV-1a, mixed with the rank). */
uint64_t est_name_hash(const char *name, int rank);

/* oracle_profile.c: measured durations by (rank, op name, nth op of that
 * name on the rank), looked up for ops of another trace of the same
 * program (its emulated run): the n-th launch of a kernel on rank r takes
 * what the n-th launch of that kernel measured on rank r. Ops must be asked
 * about in trace order per rank (asking twice about one op is harmless).
 * *dev_ns / *host_ns = -1 where the profile has nothing. */
struct est_measured;
int est_measured_load(const char *dir, struct est_measured **out);
void est_measured_free(struct est_measured *m);
int est_measured_lookup(struct est_measured *m, const struct est_op *op, int64_t *dev_ns, int64_t *host_ns);

#endif
