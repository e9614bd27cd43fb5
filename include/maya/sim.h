/* The simulator: replays a job trace (include/maya/job_trace.h) with a
 * duration for every op, and reports what the job would cost.
 *
 *   sim_load    read the job trace; ask the estimator about every call
 *   sim_run     discrete-event replay of hosts, streams, events, copy
 *               engines, collectives and NICs
 *   sim_report  report.txt, report.json, timeline.json, timeline.svg
 */
#ifndef MAYA_SIM_H
#define MAYA_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "maya/estimator.h"
#include "maya/run_desc.h"

/* Where durations come from: est_estimate, or a test's own function.
 * Return 0, or -1 with a message. */
typedef int (*sim_estimate_fn)(void *ctx, const struct est_op *op, struct est_result *out);

struct sim_config {
    sim_estimate_fn estimate;
    void *estimate_ctx;
    const char *iteration_marker; /* NULL or "": detect the period of each rank's ops */
    const struct maya_gpu_spec *gpu; /* the target GPU, for MFU (NULL: no MFU) */
    /* FLOPs of a compute op, for MFU (est_op_flops; NULL: no MFU) */
    double (*flops)(const struct est_op *op);
    int keep_iterations;          /* report on the first N iterations found; 0: all */
    int keep_xfers;               /* keep each collective's and send/recv's size, kind and
                                     members (sim_export_chakra needs them) */
    int no_fold;                  /* replay every rank, even data-parallel replicas (sim/fold.c) */
    int estimate_by_content;      /* the estimate of an op depends on its record's content alone
                                     (not its rank, call number, times, thread, communicator id
                                     or member rank): identical questions are asked once */
    int fold_similar;             /* fold replicas whose work differs only in host gaps (measured
                                     noise), within SIM_FOLD_SIMILAR of the representative's total:
                                     they take its gaps (not exact) */
    /* what-if: these ranks' GPUs are slower, their kernels taking factor
     * times as long (a straggler) */
    const struct sim_slow_rank {
        int rank;
        double factor;
    } *slow;
    int nslow;
    double host_speed;            /* the target hosts' CPU speed relative to this machine: the
                                     program's host gaps and the calls' host costs are divided
                                     by it (0: 1) */
    int workload_failed;          /* some process did not exit 0: a replay that runs out of
                                     events is the end of what was recorded (simulated up to
                                     there), not a deadlock of the program */
    /* The nodes: which NIC each GPU sends through (nic_of_gpu). NULL: one
     * NIC per GPU (rail-optimised). */
    const struct maya_cluster_spec *cluster;
};

struct sim_job;

/* sim_config.fold_similar: a replica's total host gap may differ from its
 * representative's by this fraction of it. */
#define SIM_FOLD_SIMILAR 0.25

int sim_load(const char *job_path, const struct sim_config *cfg, struct sim_job **out);
/* Replay. 0, or -1 with a message (a job that deadlocks names the ops that wait). */
int sim_run(struct sim_job *job);
void sim_free(struct sim_job *job);

/* What the run found (after sim_run). */
struct sim_summary {
    int nranks;
    int replayed_ranks;         /* ranks the replay ran (the others were folded into them) */
    int iterations;             /* detected iterations (1 when none repeat) */
    int steady_iterations;      /* of which in the steady state (after the first, not partial) */
    uint64_t warmup_ops;        /* ops before the first iteration (set-up, warm-up), most on a rank */
    double warmup_emulation_s;  /* what emulating them took on this machine (trace clock), most on a rank */
    double iteration_s;         /* steady state: median of the steady iterations */
    double first_iteration_s;
    double makespan_s;          /* first host start to last completion */
    /* per steady iteration, mean over them and the ranks: their mean length
     * (breakdown_iteration_s) is compute_s + exposed_comm_s + exposed_copy_s
     * + idle_s; comm_s and copy_s count overlapped time too */
    double breakdown_iteration_s;
    double compute_s, comm_s, exposed_comm_s, copy_s, exposed_copy_s, idle_s;
    double host_work_s;         /* the program's host work (gaps, call costs) per steady iteration */
    int host_bound;             /* host_work_s is 80% or more of breakdown_iteration_s */
    double mfu;                 /* -1 when no FLOPs are known */
    uint64_t peak_memory_bytes; /* max over ranks */
    int oom;
    uint64_t ops, events;       /* the job's ops, events the replay processed */
    uint64_t replayed_ops;      /* ops the replay ran (folded ranks' are their representatives') */
    const char *fold_note;      /* why replicas were replayed on their own after all ("" none;
                                   valid until sim_free) */
    double fold_gap_diff;       /* fold_similar: the largest difference of a folded rank's total
                                   host work (gaps, host-only calls) from its representative's,
                                   as a fraction of it */
    uint64_t fold_host_calls;   /* fold_similar: the most host-only calls (ncclGetUniqueId, ...)
                                   a folded rank made more or fewer than its representative */
    int fold_gaps_only;         /* exact folding: replayed ranks that do the work of a rank on
                                   another node but for measured host gaps within
                                   SIM_FOLD_SIMILAR in total (what --fold similar can fold) */
    uint64_t unsupported_calls;
    uint64_t values_not_computed; /* small host reads of device bytes not real, all ranks */
    uint64_t extrapolated_ops;
    uint64_t kernel_launches;   /* launches of kernels (not library calls) */
    uint64_t no_code_launches;  /* of those, priced without the kernel's code (fallback rule) */
    uint64_t sass_unread_launches; /* of those, of kernels with SASS only, no nvdisasm to read it */
};
void sim_summarize(const struct sim_job *job, struct sim_summary *out);

/* Per-iteration times (seconds); n of them. Valid until sim_free. */
const double *sim_iteration_times(const struct sim_job *job, int *n);
/* The ops of iteration k (from 0, below the n above) on a rank: indexes
 * [first, end) among the rank's calls (trace order, as sim_op_times counts
 * them). 0, or -1 if the rank or iteration does not exist. */
int sim_iteration_ops(const struct sim_job *job, int rank, int k, uint64_t *first, uint64_t *end);

/* One op's simulated times (ns) by rank and position among the rank's calls
 * (trace order, from 0). host_start..host_end is the call on the host;
 * dev_start..dev_end its device work (both 0 for host-only calls).
 * 0, or -1 if there is no such op. */
struct sim_op_times {
    uint64_t host_start, host_end, dev_start, dev_end;
    const char *name;
    int stream;                 /* stream id in the rank's trace, 0 for none */
};
int sim_op_times(const struct sim_job *job, int rank, uint64_t index, struct sim_op_times *out);
uint64_t sim_rank_ops(const struct sim_job *job, int rank);

/* What the report says besides the replay. */
struct sim_report_info {
    const struct maya_run_desc *desc;   /* the run: configuration, exit statuses (may be NULL) */
    const struct maya_gpu_spec *gpu;    /* the target GPU (may be NULL) */
    const struct maya_cluster_spec *cluster;
    const char *estimator;              /* the models, as --estimator takes them */
    const char *error;                  /* why the pipeline stopped early, or NULL */
    const char *hardware;               /* where the GPU and cluster descriptions came from
                                           (a sentence), or NULL */
    int gpu_overridden;                 /* the GPU is not the description the run used: its
                                           memory was not the one allocations were made in */
    const char *models;                 /* which learned models served (a sentence), or NULL */
    const char *options;                /* which report options served and where from (a
                                           sentence), or NULL */
    int timeline;                       /* enum sim_timeline_mode */
};

/* What timeline.json and timeline.svg show (--timeline). */
enum sim_timeline_mode {
    SIM_TIMELINE_BOUNDED = 0,  /* the ranks and iterations a person looks at (sim/timeline_view.c) */
    SIM_TIMELINE_FULL = 1,     /* every rank, every iteration */
    SIM_TIMELINE_NONE = 2,     /* no timeline files */
};

/* Write report.txt and report.json into dir (logs/rank-N.err there gives a
 * failing rank's stderr tail), and, when job was replayed, timeline.json and
 * timeline.svg as info->timeline says (first: the report states their
 * sizes). job may be NULL (nothing could be loaded) or loaded but not
 * replayed (memory figures only). Files are written atomically; a stop
 * asked for (maya_stop_catch) leaves the files as they were. 0 or -1. */
int sim_report(const struct sim_job *job, const struct sim_report_info *info, const char *dir);
/* Write the replayed job as Chakra execution traces (the MLCommons Chakra
 * schema, sim/chakra_et.proto) into dir: PREFIX.<rank>.et per rank, in the
 * protobuf encoding Chakra's tools read, and PREFIX.comm_group.json naming
 * each communicator's ranks, as ASTRA-sim's --comm-group-configuration takes
 * it. The job must have been loaded with keep_xfers. 0, or -1 with a message. */
int sim_export_chakra(const struct sim_job *job, const char *dir, const char *prefix);

/* Print the report's short summary (a few lines) on fp; with dir, failing
 * ranks' stderr tails from dir/logs too. */
void sim_report_summary(const struct sim_job *job, const struct sim_report_info *info, const char *dir, FILE *fp);

#endif
