/* The job trace: records 64..127, written by the collator (MAYA_TRACE_JOB).
 * docs/trace-format.md ("Job traces") describes them for people.
 *
 * A job trace is the same container as a rank trace (include/maya/trace_format.h)
 * holding every rank of a job, checked for consistency:
 *
 *   JOB                      once, first: the job
 *   JOB_COMM ...             one per communicator: who its members are
 *   { RANK_BEGIN             one section per rank, in rank order:
 *       records of the rank    every record of its trace but END, unchanged
 *       [RANK_REBUILT          a rank duplicate-rank elimination stopped:
 *        records of its source  its run, from its source's trace, or only its
 *                               DEVICE and COMM records: a reference to its
 *                               source's section (MAYA_REBUILT_F_REF)]
 *     RANK_END }             what the rank's END record said
 *   END
 *
 * Ids inside a section (strings, streams, events, kernels) are the rank's
 * own, as in its trace: each section defines its strings and kernels again
 * before it uses them, so a reader keeps one table and lets a definition
 * replace the previous one. Communicator ids are global.
 */
#ifndef MAYA_JOB_TRACE_H
#define MAYA_JOB_TRACE_H

#include <stdint.h>

#include "maya/trace_format.h"

enum maya_job_rec_type {
    MAYA_REC_JOB = 64,
    MAYA_REC_JOB_COMM = 65,
    MAYA_REC_RANK_BEGIN = 66,
    MAYA_REC_RANK_END = 67,
    MAYA_REC_RANK_REBUILT = 68,
};

struct maya_rec_job {           /* MAYA_REC_JOB */
    struct maya_rec_hdr h;
    int32_t world_size;         /* WORLD_SIZE the ranks were given */
    int32_t nranks;             /* rank sections that follow */
    int32_t nodes;              /* emulated nodes (highest node + 1) */
    int32_t gpus_per_node;
    uint32_t ncomms;            /* JOB_COMM records that follow */
    uint32_t flags;             /* MAYA_JOB_F_* */
    uint64_t collectives;       /* collectives matched across their members */
    uint64_t p2p_pairs;         /* send/recv pairs matched */
    char gpu[64];               /* hwspec key of the emulated GPU */
};

/* maya_rec_job.flags */
#define MAYA_JOB_F_INCOMPLETE 0x1 /* some rank's trace was cut short */
#define MAYA_JOB_F_REBUILT    0x2 /* some ranks were rebuilt from another's trace (RANK_REBUILT) */

struct maya_job_member {
    int32_t rank;               /* global rank (process) holding this member */
    int32_t global_gpu;         /* node * gpus_per_node + GPU index on the node */
};

struct maya_rec_job_comm {      /* MAYA_REC_JOB_COMM; members follow, by rank in the comm */
    struct maya_rec_hdr h;
    uint64_t comm;              /* communicator id (as in COMM and COLL records) */
    int32_t nranks;             /* members */
    int32_t nodes;              /* distinct nodes they are on */
    int32_t max_per_node;       /* most members on one node */
    uint32_t reserved;
    uint64_t collectives;       /* collectives issued on it (each counted once) */
    /* followed by struct maya_job_member[nranks] */
};

struct maya_rec_rank_begin {    /* MAYA_REC_RANK_BEGIN: the rank trace's header */
    struct maya_rec_hdr h;
    int32_t rank, world_size, local_rank, node;
    int32_t gpus_per_node;
    uint32_t pid;
    uint32_t flags;             /* the rank trace's header flags (MAYA_TRACE_F_*) */
    uint32_t complete;          /* 1: its trace ended with an END record */
    uint64_t start_realtime_ns;
    uint64_t start_mono_ns;
    char gpu[64];
};

struct maya_rec_rank_end {      /* MAYA_REC_RANK_END: as struct maya_rec_end */
    struct maya_rec_hdr h;
    uint64_t records;           /* records of the section (between BEGIN and this) */
    uint64_t unsupported_calls;
    uint32_t ndevices;
    uint32_t oom;
    /* followed by struct maya_end_device[ndevices] (none if the trace was cut short) */
};

/* MAYA_REC_RANK_REBUILT: in the section of a rank that duplicate-rank
 * elimination stopped (its trace ends with MAYA_REC_ELIMINATED), after the
 * rank's own records: what follows, up to RANK_END, is the source rank's
 * trace from its stop_op-th COLL record on, made this rank's own
 * (docs/trace-format.md, "Rebuilt ranks"): communicators, ranks in them,
 * send/recv peers and sequence numbers, NCCL group ids, device ordinals and
 * host times mapped; the source's strings and kernels defined again first. */
struct maya_rec_rank_rebuilt {
    struct maya_rec_hdr h;
    int32_t rank;               /* the rebuilt rank */
    int32_t source;             /* the rank whose records follow */
    uint64_t stop_op;           /* COLL records of the rank's own before this record */
    uint64_t own_records;       /* records of the section before this one */
    int64_t shift_ns;           /* added to the source's host times */
    uint32_t how;               /* enum maya_elim_how (trace_format.h) */
    uint32_t flags;             /* MAYA_REBUILT_F_* */
};

/* maya_rec_rank_rebuilt.flags */
#define MAYA_REBUILT_F_REF 0x1  /* a reference: the section holds only the rank's DEVICE and COMM records
                                 * (its i-th COMM for the source's i-th communicator); its work is the
                                 * source's section, earlier in the file, mapped as a copy would be */

_Static_assert(sizeof(struct maya_rec_job) == 112, "job size");
_Static_assert(sizeof(struct maya_rec_rank_rebuilt) == 48, "rank rebuilt size");
_Static_assert(sizeof(struct maya_rec_job_comm) == 40, "job comm size");
_Static_assert(sizeof(struct maya_rec_rank_begin) == 120, "rank begin size");
_Static_assert(sizeof(struct maya_rec_rank_end) == 32, "rank end size");

#endif
