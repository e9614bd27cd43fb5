/* The report pipeline shared by `maya run` and `maya report`: collate the
 * traces of a run directory, estimate, simulate and write the report
 * (docs/run-dir.md). */
#ifndef MAYA_CLI_PIPELINE_H
#define MAYA_CLI_PIPELINE_H

#include "maya/estimator.h"
#include "maya/run_desc.h"
#include "maya/sim.h"

#define PIPELINE_MAX_SLOW 64

struct pipeline_opts {
    const char *iteration_marker; /* NULL: as run.conf says */
    const char *estimator;        /* NULL: as run.conf says */
    const char *oracle;           /* NULL: as run.conf says */
    const char *oracle_profile;   /* a maya profile directory: measured durations (not kept in run.conf) */
    int iterations;               /* report on the first N iterations; 0: as run.conf says */
    /* maya report only: descriptions other than those the run recorded */
    const char *gpu;              /* a GPU name or file (-g); NULL: the recorded one */
    const char *cluster;          /* a cluster name or file (--cluster); NULL: the recorded one */
    const char *hwspec_dir;       /* where -g and --cluster names are looked up, and the run's
                                     GPU by name instead of its recorded description */
    const char *chakra_dir;       /* maya trace export --chakra: write Chakra traces of the
                                     replay there instead of the report */
    int keep_options;             /* maya report: write the options given into run.conf once the
                                     report is complete, so that later reports use them */
    int timeline;                 /* enum sim_timeline_mode (bounded by default) */
    int no_fold;                  /* --fold no: replay every rank */
    int fold_similar;             /* --fold similar */
    struct sim_slow_rank slow[PIPELINE_MAX_SLOW]; /* --slow-rank what-ifs */
    int nslow;
    int quiet;
    int show_tails;               /* the summary quotes failing ranks' stderr (maya run: their
                                     output went to files, not to the terminal) */
};

#define PIPELINE_OPTIONS_HELP \
    "  --iteration-marker NAME  what starts each iteration: an NVTX range, kernel (or its\n" \
    "                           short name), op or API, or a glob ('step*'); default:\n" \
    "                           found from the repeating sequence of ops\n" \
    "  --iterations N           report on the first N iterations only (default: all)\n" \
    "  --estimator SPEC         estimator models: MODEL for all families, or\n" \
    "                           FAMILY=MODEL,... (models: analytical, learned, oracle)\n" \
    "  --oracle FILE            measured durations for the oracle model\n" \
    "  --oracle-profile DIR     durations measured by maya profile (DIR) for the oracle model:\n" \
    "                           the n-th op of a name on a rank takes what the profile's did\n" \
    "  --slow-rank R[:F],...    what-if: rank R's GPU is slower, its kernels taking F times as\n" \
    "                           long (default 1.2); a straggler's effect on the whole job\n" \
    "  --fold yes|similar|no    yes (default): ranks doing the same work as a lower rank\n" \
    "                           (data-parallel replicas) are replayed once, exactly; similar: also\n" \
    "                           when only their host work differs (measured gaps within 25%, calls\n" \
    "                           taking host time only: ncclGetUniqueId); no: every rank\n" \
    "  --timeline MODE          bounded (default: rank 0, its pipeline's stages and the busiest\n" \
    "                           rank; at most the first 3 iterations and 2,000,000 events), full,\n" \
    "                           or none\n"

/* One option of the pipeline (name, value): 1 taken, 0 not ours, -1 bad value. */
int pipeline_parse_option(struct pipeline_opts *o, const char *name, const char *value);
/* The same, and the options naming other hardware descriptions (-g/--gpu,
 * --cluster, --hwspec-dir) that maya report and maya trace export take. */
int pipeline_parse_report_option(struct pipeline_opts *o, const char *name, const char *value);
/* Check the values given (files exist, models parse); 0 or -1 with a message. */
int pipeline_check_options(const struct pipeline_opts *o);
/* The models for every family: spec (as --estimator takes it), else oracle
 * everywhere when durations are given (oracle: a file or a profile), else
 * learned. 0 or -1. */
int pipeline_models(const char *spec, int oracle, enum est_model model[EST_NFAMILIES]);
/* Record the options in a run description. */
void pipeline_opts_to_desc(const struct pipeline_opts *o, struct maya_run_desc *d);

/* The cluster count GPUs run on: cluster is a file (relative to base_dir
 * unless absolute), an installed cluster's name, or ""/NULL for the GPU's
 * default node; nodes and GPUs per node are fitted to count. 0 or -1. */
struct maya_hwspecs;
struct maya_gpu_spec;
struct maya_cluster_spec;
int pipeline_cluster(const struct maya_hwspecs *hw, const struct maya_gpu_spec *gpu, int count,
                     const char *cluster, const char *base_dir, struct maya_cluster_spec *out);
/* Only find the cluster (a file or a name), as it is written. 0 or -1. */
int pipeline_cluster_lookup(const struct maya_hwspecs *hw, const char *cluster, const char *base_dir,
                            struct maya_cluster_spec *out);

/* The one GPU of a description file (a run's gpu.conf, a file given to -g;
 * the one named want if it holds several), loaded into own (freed by the
 * caller); NULL with a message. */
const struct maya_gpu_spec *pipeline_gpu_from_file(const char *path, const char *want, struct maya_hwspecs *own);

/* Collate, estimate, simulate and report on dir. 0, or -1 (message printed)
 * when the pipeline could not produce a report. */
int pipeline_run(const char *dir, const struct pipeline_opts *o);

#endif
