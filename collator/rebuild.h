/* Rebuilding ranks that duplicate-rank elimination stopped (rebuild.c;
 * docs/dedup.md, docs/trace-format.md "Rebuilt ranks"). Internal to the
 * collator. */
#ifndef MAYA_COL_REBUILD_H
#define MAYA_COL_REBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "maya/job_trace.h"

/* What a rebuild needs to know of a rank's trace, noted record by record as
 * the collator copies it: its communicators in the order it made them, how
 * many collectives and send/recv it issued on each, its NCCL groups, host
 * clock, devices and streams, and its ELIMINATED record if it has one.
 * Costs a few words per communicator and per send/recv peer. */
struct col_shape;

struct col_shape *col_shape_new(void);
void col_shape_free(struct col_shape *s);
/* Every record of the trace, in order (END included). 0, or -1 with a message. */
int col_shape_note(struct col_shape *s, const struct maya_rec_hdr *rec);
/* The COLL records noted so far and their rolling hash (maya_coll_hash_next). */
void col_shape_ops(const struct col_shape *s, uint64_t *ops, uint64_t *hash);
/* Its ELIMINATED record, or NULL. */
const struct maya_rec_eliminated *col_shape_eliminated(const struct col_shape *s);

/* A declared replica that never ran (maya run --replicas): give its shape
 * (ghost, noted from its own short trace) its communicators, one for each
 * of its proxy's (a rank that ran, of its kind), by the layout: the proxy's
 * own where the replica is a member, else that one moved to the replica's
 * digits along the dimensions it does not span (an id made from its
 * members). 0, or -1 with a message. */
struct maya_replicas;
int col_shape_replica_comms(struct col_shape *ghost, int rank, const struct col_shape *proxy, int proxy_rank,
                            const struct maya_replicas *layout, int32_t device, int32_t global_gpu);

/* Receives each record of a rebuilt rank's section, to check and write. */
typedef int (*col_take_fn)(void *ctx, const struct maya_rec_hdr *rec);

/* Append to the section of `rank` (its own records already taken, its shape
 * `own`) the RANK_REBUILT record and the trace of its source (source_path)
 * from the source's stop_op-th COLL record on, made the rank's own. Checks
 * that the source issued the same NCCL operations up to there (the hash of
 * the ELIMINATED record). Fills *end (RANK_END, with room for max_devices
 * devices after it) with the source's memory peaks. 0, or -1 with a message. */
int col_rebuild(const struct col_shape *own, int rank, const char *source_path, int source_rank,
                col_take_fn take, void *ctx, struct maya_rec_rank_end *end, uint32_t max_devices);

/* ---- a rebuilt rank as a reference (MAYA_REBUILT_F_REF) ---- */

/* A source's trace, read once for all the ranks rebuilt from it: its shape
 * and its NCCL operations (64 bytes each). */
struct col_ref_source;
int col_ref_source_load(const char *path, int rank, struct col_ref_source **out);
int col_ref_source_rank(const struct col_ref_source *s);
/* Was the source itself stopped (its section is rebuilt too)? */
int col_ref_source_stopped(const struct col_ref_source *s);
void col_ref_source_free(struct col_ref_source *s);

/* Receives each NCCL operation a rebuilt rank's copy would hold, to check. */
typedef int (*col_coll_fn)(void *ctx, const struct maya_rec_coll *k);

/* As col_rebuild, but the section gets only RANK_REBUILT (flagged
 * MAYA_REBUILT_F_REF), the rank's DEVICE records and its COMM records (the
 * i-th for the source's i-th communicator); the NCCL operations a copy
 * would hold go to note instead, mapped as the copy maps them, so that the
 * collator checks the job the same. The same refusals as col_rebuild.
 * O(the source's NCCL operations); nothing is read. */
int col_rebuild_ref(const struct col_shape *own, int rank, const struct col_ref_source *rs, col_take_fn take,
                    col_coll_fn note, void *ctx, struct maya_rec_rank_end *end, uint32_t max_devices);

#endif
