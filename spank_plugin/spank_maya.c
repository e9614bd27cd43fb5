/* spank_maya.so: `--maya-emulate=<gpu>x<count>[,key=value...]` for srun,
 * sbatch and salloc. The SPANK entry points; each hands over to the file that
 * does the work of its context (see spank_maya.h).
 *
 *   srun/sbatch/salloc  option callback: check the value against the hwspecs
 *   srun                local_user_init: check the task count; exit: report
 *                       an interactive step (not a batch job's)
 *   slurmstepd          user_init: make the step's run directory;
 *                       task_init: the task becomes maya-launch, which starts
 *                       the task's share of emulated ranks
 *   slurmd epilog       job_epilog: report a batch job, as its user, once,
 *                       on the batch host; always returns 0 (never drains)
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SPANK_PLUGIN(maya, 1);

static int capturing;
static char captured[4096];

static struct spank_conf conf;
static int conf_ok;
static char *option_value;  /* as given to the callback */

/* maya_error() and maya_warn() from the shared code go to Slurm's log: on the
 * user's terminal in srun/sbatch ("srun: error: ..."), in slurmd's log on
 * the nodes. */
static void log_to_slurm(const char *kind, const char *raw)
{
    /* Messages quote what users gave (the option's value, file names):
     * control characters are escaped so that none can forge or break a
     * line of slurmd's log or a terminal. */
    char msg[2048];
    maya_escape_controls(raw, msg, sizeof msg);
    if (capturing) {
        size_t used = strlen(captured);
        if (!kind[0])
            snprintf(captured + used, sizeof captured - used, "%s%s", used ? "; " : "", msg);
        return;
    }
    if (kind[0])
        slurm_info("maya: %s%s", kind, msg);
    else
        slurm_error("maya: %s", msg);
}

void spank_capture_begin(void)
{
    capturing = 1;
    captured[0] = 0;
}

const char *spank_capture_end(void)
{
    capturing = 0;
    return captured;
}

static int load_conf(int argc, char **argv)
{
    maya_set_error_handler(log_to_slurm);
    if (spank_conf_parse(argc, argv, &conf) < 0)
        return -1;
    conf_ok = 1;
    return 0;
}

static int option_cb(int val, const char *optarg, int remote)
{
    (void)val;
    free(option_value);
    option_value = optarg ? strdup(optarg) : NULL;
    if (!conf_ok)
        return -1;
    if (remote)
        return 0; /* checked again in user_init, where the job's directory is known */
    char cwd[PATH_MAX];
    struct spank_emulate e;
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    return spank_emulate_load(&conf, optarg, cwd[0] ? cwd : NULL, &e) < 0 ? -1 : 0;
}

static struct spank_option option = {
    SPANK_OPTION_NAME, "<gpu>x<count>[,key=value...]",
    "Run the job's tasks as ranks of a job on emulated GPUs and report what it would cost "
    "on them (maya-srun(1)); e.g. h100x8. Keys: cluster=NAME|FILE, marker=NAME, iters=N, report=PATH.",
    1, 0, option_cb
};

/* The option's value in contexts after option processing, or NULL. */
static const char *option_get(spank_t sp)
{
    char *v = NULL;
    if (option_value)
        return option_value;
    if (spank_option_getopt(sp, &option, &v) != ESPANK_SUCCESS || !v)
        return NULL;
    option_value = strdup(v);
    return option_value;
}

int slurm_spank_init(spank_t sp, int argc, char **argv)
{
    if (load_conf(argc, argv) < 0)
        return -1;
    if (spank_context() == S_CTX_SLURMD)
        return 0;
    if (spank_context() == S_CTX_LOCAL)
        spank_srun_init();
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
        slurm_error("maya: cannot register --%s", SPANK_OPTION_NAME);
        return -1;
    }
    return 0;
}

int slurm_spank_local_user_init(spank_t sp, int argc, char **argv)
{
    const char *v = option_get(sp);
    return v ? spank_srun_user_init(sp, &conf, v) : 0;
}

int slurm_spank_user_init(spank_t sp, int argc, char **argv)
{
    const char *v = option_get(sp);
    return v ? spank_task_user_init(sp, &conf, v) : 0;
}

int slurm_spank_task_init(spank_t sp, int argc, char **argv)
{
    const char *v = option_get(sp);
    return v ? spank_task_init(sp, &conf, v) : 0;
}

int slurm_spank_exit(spank_t sp, int argc, char **argv)
{
    if (spank_context() != S_CTX_LOCAL || !option_value || !conf_ok)
        return 0;
    spank_srun_exit(sp, &conf, option_value);
    return 0; /* the report's failure is the user's to read, not srun's exit status */
}

int slurm_spank_job_epilog(spank_t sp, int argc, char **argv)
{
    /* Slurm calls no init before the epilog: read the arguments here. */
    if (load_conf(argc, argv) < 0)
        return 0;
    const char *v = option_get(sp);
    if (v)
        spank_epilog(sp, &conf, v);
    return 0; /* a non-zero return would drain the node */
}
