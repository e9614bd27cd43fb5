/* What fold.c, fold_rebuild.c and fold_check.c share (folding, described
 * in fold.c). */
#ifndef MAYA_SIM_FOLD_INTERNAL_H
#define MAYA_SIM_FOLD_INTERNAL_H

#include "sim_internal.h"

static inline int is_xfer(const struct sim_op *o)
{
    return o->kind == SK_COLL || o->kind == SK_P2P;
}

static inline int names_stream(const struct sim_op *o)
{
    return o->kind == SK_SYNC && o->sub == MAYA_SYNC_STREAM;
}

static inline int names_device(const struct sim_op *o)
{
    return o->kind == SK_SYNC && o->sub == MAYA_SYNC_DEVICE;
}

/* Whether an op's device matters to the replay: a host-only call (the
 * cudaGetDeviceCount before a program's cudaSetDevice) is made on whatever
 * device is current and touches none, so that a rank on GPU 0 and one on
 * GPU 1 differ there in the device alone. */
static inline int device_matters(const struct sim_op *o)
{
    return o->kind != SK_HOST || (o->flags & SF_DEVICE_SYNC);
}

/* What folding keeps for the whole job, made on the first rank. */
int sim_fold_setup(struct sim_job *j);
/* Decide the ranks of the node loaded last: fold them or replay them. */
int sim_fold_decide_pending(struct sim_job *j);
/* Rebuild folded rank ri's work from its representative's, on streams and
 * communicators of its own. */
int sim_unfold(struct sim_job *j, uint32_t ri);
/* A lazy rank's ops and streams, made: it is to be replayed, or compared
 * op for op. */
int sim_materialise(struct sim_job *j, uint32_t ri);
/* A lazy rank's communicator for its source rank's. */
uint32_t sim_lazy_comm(const struct sim_lazy *z, uint32_t theirs);

#endif
