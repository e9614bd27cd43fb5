/* The maya SPANK plugin: what its files share.
 *
 * One file per job (pyxis style): spank_maya.c holds the SPANK entry points
 * and dispatches on the context; spank_config.c parses the plugstack.conf
 * arguments; spank_option.c the --maya-emulate value; spank_task.c turns a
 * step's tasks into emulated ranks (slurmstepd); spank_report.c runs the
 * post-processing as the job's user with a time limit; spank_epilog.c and
 * spank_srun.c decide when and where it runs (after a batch job, after an
 * interactive srun). maya_launch.c is the program a task becomes.
 *
 * Design notes are in man/maya-srun.1 (DESIGN section).
 */
#ifndef SPANK_MAYA_H
#define SPANK_MAYA_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include <slurm/spank.h>

#include "maya/hwspec.h"

/* Between these, maya_error() messages are collected rather than logged,
 * for a caller that repeats them with more context. end returns them joined
 * with "; " (valid until the next begin). */
void spank_capture_begin(void);
const char *spank_capture_end(void);

/* ---- plugstack.conf arguments (spank_config.c) ---- */

struct spank_conf {
    char prefix[PATH_MAX];      /* maya install prefix: bin/maya, lib/maya, share/maya */
    char trace_root[PATH_MAX];  /* shared storage for run directories */
    char hwspecs[PATH_MAX];     /* GPU/cluster descriptions (prefix/share/maya/hwspecs) */
    int time_limit_s;           /* post-processing limit */
    int pin;                    /* pin emulation processes to cores */
};

/* Parse the plugin's arguments strictly: every argument is key=value with a
 * known key and a valid value. 0, or -1 with a message naming the allowed
 * keys. prefix defaults to the install the plugin was loaded from. */
int spank_conf_parse(int argc, char **argv, struct spank_conf *conf);

/* ---- the --maya-emulate value (spank_option.c) ---- */

#define SPANK_OPTION_NAME "maya-emulate"

struct spank_emulate {
    char gpu[MAYA_NAME_MAX];    /* hwspec key */
    int count;                  /* emulated GPUs = ranks */
    char cluster[PATH_MAX];     /* cluster key, absolute file path, or "" (default) */
    int cluster_is_file;
    int gpus_per_node;          /* of the emulated cluster */
    int nodes;
    enum maya_intra_link intra; /* how the cluster's GPUs are linked inside a node */
    char report[PATH_MAX];      /* report=BASE (files BASE.txt, BASE.json); "" = next to the output */
    char marker[256];           /* marker=NAME: what starts each iteration; "" = detect */
    int iterations;             /* iters=N: report on the first N iterations; 0 = all */
    int dedup;                  /* dedup=yes: duplicate-rank elimination (MAYA_DEDUP=1, docs/dedup.md) */
    char replicas[256];         /* replicas=N:S[,N:S...]: declared replicas (MAYA_REPLICAS); "" none */
};

/* Parse and check "<gpu>x<count>[,key=value...]" against the hwspecs. A
 * relative cluster file is taken from base_dir. 0, or -1 with a message that
 * says what is allowed. */
int spank_emulate_parse(const struct maya_hwspecs *hw, const char *value, const char *base_dir,
                        struct spank_emulate *e);

/* Only the report=PATH of a value ("" when it has none), read from the
 * text alone: no hwspecs, no cluster file. For the epilog, which runs as
 * root and must open nothing the job names. 0, or -1 when too long. */
int spank_emulate_report(const char *value, char *report, size_t size);

/* Load the hwspecs named by conf and parse value (both with messages). */
int spank_emulate_load(const struct spank_conf *conf, const char *value, const char *base_dir,
                       struct spank_emulate *e);

/* ---- run directories (docs/run-dir.md) ---- */

/* Step ids as Slurm numbers them (slurm.h): the batch script's step. */
#define SPANK_STEP_BATCH 0xfffffffbu
#define SPANK_STEP_EXTERN 0xfffffffcu
#define SPANK_STEP_INTERACTIVE 0xfffffffau

/* <trace_root>/<user>/job-<jobid>/step-<step> ("step-batch" for the batch
 * script). The plugin's own files live in its slurm/ folder. */
int spank_run_dir(const struct spank_conf *conf, const char *user, uint32_t job, uint32_t step,
                  char *buf, size_t size);
int spank_job_dir(const struct spank_conf *conf, const char *user, uint32_t job, char *buf, size_t size);

/* mkdir -p of a run directory as the calling (unprivileged) user; the user's
 * folder under the trace root must be a directory the user owns. */
int spank_make_run_dir(const struct spank_conf *conf, const char *user, uid_t uid, const char *dir);

/* Move aside a job folder left by an earlier job of the same id. */
int spank_retire_job_dir(const struct spank_conf *conf, const char *user, uint32_t job);

/* The user name of uid ("uid N" if unknown). */
void spank_user_name(uid_t uid, char *buf, size_t size);

/* ---- post-processing (spank_report.c) ---- */

struct spank_post {
    uid_t uid;
    gid_t gid;
    uint32_t job;
    const char *run_dir;        /* run directory, or NULL: pick the job's best step */
    const char *job_dir;        /* <trace_root>/<user>/job-<id> when run_dir is NULL */
    const char *emulate;        /* the --maya-emulate value */
    const char *workdir;        /* the job's working directory */
    char out_txt[PATH_MAX];     /* where the report goes */
    char out_json[PATH_MAX];
    int batch_status;           /* the batch script's wait status, -1 if not a batch job */
    int print;                  /* also print the report on stderr (interactive srun) */
};

/* Collate, estimate, simulate and report, as post->uid (privileges are dropped
 * in a child when running as root), within conf->time_limit_s. The report, or
 * a note saying why there is none, is written to out_txt/out_json. Returns 0
 * when a report was made, -1 otherwise (message in *why). Never exits. */
int spank_postprocess(const struct spank_conf *conf, const struct spank_post *post, char *why,
                      size_t why_size);

/* out_txt/out_json from a report=BASE value or an output file name:
 * "dir/slurm-12.out" -> "dir/slurm-12.maya.txt" and ".maya.json". */
int spank_report_paths(struct spank_post *post, const char *report_base, const char *output);

/* ---- where things run ---- */

int spank_task_user_init(spank_t sp, const struct spank_conf *conf, const char *value);
int spank_task_init(spank_t sp, const struct spank_conf *conf, const char *value);
int spank_epilog(spank_t sp, const struct spank_conf *conf, const char *value);
void spank_srun_init(void);
int spank_srun_user_init(spank_t sp, const struct spank_conf *conf, const char *value);
int spank_srun_exit(spank_t sp, const struct spank_conf *conf, const char *value);

#endif
