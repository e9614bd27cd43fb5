/* The estimator: a duration for every operation of a trace, on a target GPU
 * and cluster. The simulator asks it about each op; models are chosen per op
 * family (analytical, learned, oracle), so one family's model can be replaced
 * without touching the others.
 */
#ifndef MAYA_ESTIMATOR_H
#define MAYA_ESTIMATOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "maya/hwspec.h"
#include "maya/trace_format.h"

enum est_family {
    EST_GEMM,            /* cuBLAS / cuBLASLt GEMM, batch 1 */
    EST_BATCHED_GEMM,    /* batched and strided-batched GEMM */
    EST_ATTENTION,       /* cuDNN SDPA, attention kernels */
    EST_CONV,            /* cuDNN convolutions */
    EST_KERNEL,          /* other kernels: elementwise, normalisation, reduction, ... */
    EST_COPY,            /* memcpy (all directions) */
    EST_MEMSET,
    EST_ALLREDUCE,
    EST_ALLGATHER,
    EST_REDUCESCATTER,
    EST_BROADCAST,       /* broadcast and reduce */
    EST_ALLTOALL,
    EST_SENDRECV,
    EST_HOST,            /* host cost of API calls */
    EST_NFAMILIES
};

enum est_model { EST_ANALYTICAL = 0, EST_LEARNED = 1, EST_ORACLE = 2 };

/* One operation. The record is as the trace holds it (a call record); the
 * caller resolves what the record refers to by id. */
struct est_op {
    const struct maya_rec_hdr *rec;
    const char *api;                      /* API function name */
    const char *kernel_name;              /* LAUNCH: demangled kernel name */
    const struct maya_rec_kernel *kernel; /* LAUNCH: kernel definition (params, features) */
    int rank;                             /* global rank of the process */
    /* COLL: where the communicator's members are. Send/recv: the pair's
     * placement (coll_nodes 1 = peer on the same node, 2 = on another). */
    int coll_nodes;                       /* nodes spanned */
    int coll_ranks_per_node;              /* most members on any one node */
    /* COLL inside an NCCL group, after the group's first op on the same
     * stream: NCCL enqueues it, and ncclGroupEnd launches it with that one */
    int group_follower;
};

struct est_result {
    uint64_t device_ns;   /* time on the device (0 for host-only calls) */
    uint64_t host_ns;     /* host time the call itself costs on a real system */
    enum est_family family;
    enum est_model model; /* which model answered */
    int extrapolated;     /* outside the learned model's data: analytical fallback */
    int no_code;          /* a kernel launch priced without its code (the documented fallback) */
    /* collectives and send/recv: what NCCL would run (analytical model's
     * choice), and the size nccl-tests would report for the op (bytes) */
    const char *coll_algo, *coll_proto;
    double coll_bytes;
    /* GEMMs and convolutions: the units the analytical model priced them
     * on ("tensor_cores", "cuda_cores") and, for a convolution that is not
     * an implicit GEMM, its algorithm ("winograd_f2x3"); NULL otherwise */
    const char *compute_units, *compute_algo;
    /* collectives and send/recv: the part of device_ns that is latency,
     * not bandwidth (the simulator shares only the rest between transfers
     * on one link) */
    uint64_t fixed_ns;
    /* collectives: the SMs the op's kernel holds while it runs (one per
     * NCCL channel), which kernels that start meanwhile on its GPU lack */
    int coll_ctas;
};

struct est_config {
    const struct maya_gpu_spec *gpu;
    const struct maya_cluster_spec *cluster;
    enum est_model model[EST_NFAMILIES]; /* per family; learned falls back to analytical */
    const char *oracle_path;             /* durations file for EST_ORACLE */
    const char *profile_dir;             /* measured durations for EST_ORACLE: a maya profile
                                            directory of the same program; ops matched by rank,
                                            name and nth op of that name (a file rule wins) */
    const char *models_dir;              /* trained model files; NULL = installed default */
};

struct estimator;

/* An estimator is not thread-safe (it memoises learned predictions and
 * counts oracle nth rules): one per thread. Ops of a rank should be
 * estimated in trace order (oracle nth rules count them). */
int est_create(const struct est_config *cfg, struct estimator **out);
void est_destroy(struct estimator *e);

/* Which learned model serves each family, and why: "gemm from H100-SXM
 * (compute capability 9.0, as 9.0); ..." (a sentence into buf; "" when no
 * family uses learned models). */
void est_models_describe(const struct estimator *e, char *buf, size_t size);

/* Estimate one op. Returns 0, or -1 with a message (an op the estimator cannot
 * place in any family gets the per-launch floor, not an error). */
int est_estimate(struct estimator *e, const struct est_op *op, struct est_result *out);

/* FLOPs of a compute op (GEMM, batched GEMM, convolution, attention) as
 * the estimator counts them, 0 for other ops: for reports (model FLOP
 * utilisation) that should agree with what the durations assume. */
double est_op_flops(const struct est_op *op);

/* maya estimate launch: print, for one kernel launch, the work read from
 * its code (or that it had none), the time of each unit of the GPU, and
 * the duration the estimator gives (key=value lines). 0, or -1 with a
 * message. */
int est_kernel_explain(struct estimator *e, const struct est_op *op, FILE *fp);

/* maya profile: the measured ops of a profile directory as training
 * tables in out_dir (gemm.csv, kernel.csv, allreduce.csv, sendrecv.csv, in
 * the format of estimator/data, for maya-est-train --data). 0, or -1 with a
 * message. rows: per table in that order; skipped: measured ops no table
 * takes (batched GEMMs, convolutions, attention, copies, kernels of no
 * known class). */
struct est_export_counts {
    uint64_t rows[4];
    uint64_t measured, skipped;
};
int est_profile_export(const char *profile_dir, const char *out_dir, struct est_export_counts *counts);

/* One call of a maya profile (a run directory recorded on real GPUs), as
 * the estimator sees an op. */
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

/* Read and check an oracle durations file (maya-oracle(5)) without making
 * an estimator, so that a bad line is reported before a run, not after it.
 * 0, or -1 with a message naming the file and line. */
int est_oracle_check(const char *path);

const char *est_family_name(enum est_family f);
const char *est_model_name(enum est_model m);
/* Parse "analytical", "learned", "oracle"; -1 if none. */
int est_model_parse(const char *s);
/* Parse a family name; -1 if none. */
int est_family_parse(const char *s);

/* Parse a model choice for every family, as the CLI's --estimator takes it:
 * "learned" (all families), "gemm=learned,allreduce=analytical" (the named
 * families; the others keep what model[] holds), or both
 * ("analytical,gemm=learned"). Returns 0, or -1 with a message naming the
 * allowed models and families. */
int est_models_parse(const char *spec, enum est_model model[EST_NFAMILIES]);

/* Durations with a unit, as oracle files and the CLI write them: "14ms",
 * "2.5 us", "100ns", "1s". Returns 0, or -1 (no message) when the text is not
 * a non-negative number followed by ns, us, ms or s. */
int est_parse_duration(const char *s, uint64_t *ns);

#endif
