/* What the estimator takes from a maya profile directory (traces recorded
 * on real GPUs, docs/trace-format.md "Passthrough traces"): training rows
 * (profile_export.c) and measured durations for oracle mode
 * (oracle_profile.c), both read by profile_read.c (est_profile_walk,
 * declared in maya/estimator.h). */
#ifndef EST_PROFILE_H
#define EST_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "maya/estimator.h"

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
