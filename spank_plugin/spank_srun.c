/* srun: the report of an interactive step.
 *
 * An srun that is not part of a batch job (it made its own allocation, or it
 * runs inside salloc) reports its step itself when its tasks have ended: it
 * is already the user, it is where the user is looking, and the job's epilog
 * would run too late to print anything. The summary goes to srun's stderr;
 * the files to the working directory: slurm-<jobid>.maya.txt/.json, or
 * slurm-<jobid>.<step>.maya.txt/.json for a step of a salloc session (or
 * of a batch job that was not itself given --maya-emulate). Inside a batch
 * job given the option, srun leaves the report to the job's epilog.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <slurm/slurm.h>

/* How sbatch passes --maya-emulate on to the batch script (and so to the
 * sruns in it): Slurm's variable for option maya-emulate of plugin maya. */
#define INHERITED_OPTION "SLURM_SPANK__SLURM_SPANK_OPTION_maya_maya_emulate"

static int inside_allocation;   /* srun started inside sbatch or salloc */
static int inherited;           /* ... which had --maya-emulate itself */
static uint32_t job_id, step_id;
static int launched;

void spank_srun_init(void)
{
    inside_allocation = getenv("SLURM_JOB_ID") != NULL || getenv("SLURM_JOBID") != NULL;
    inherited = getenv(INHERITED_OPTION) != NULL;
}

/* Is the job a batch job? (Then its epilog makes the report.) */
static int is_batch_job(void)
{
    job_info_msg_t *msg = NULL;
    int batch = 0;
    if (slurm_load_job(&msg, job_id, 0) != 0 || !msg)
        return 0;
    for (uint32_t i = 0; i < msg->record_count; i++)
        if (msg->job_array[i].job_id == job_id)
            batch = msg->job_array[i].batch_flag != 0;
    slurm_free_job_info_msg(msg);
    return batch;
}

/* srun --multi-prog picks each task's program after the plugin's task_init,
 * so the task cannot become maya-launch: refuse rather than run unemulated. */
static int multi_prog(void)
{
    char buf[65536];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0)
        buf[n] = 0;
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
        if (!strcmp(buf + i, "--multi-prog"))
            return 1;
    return getenv("SLURM_MULTI_PROG") != NULL;
}

int spank_srun_user_init(spank_t sp, const struct spank_conf *conf, const char *value)
{
    uint32_t ntasks = 0;
    struct spank_emulate em;
    char cwd[PATH_MAX];
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS)
        return maya_error("cannot get the job and step id from srun");
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    if (spank_emulate_load(conf, value, cwd[0] ? cwd : NULL, &em) < 0)
        return -1;
    if (multi_prog())
        return maya_error("--maya-emulate does not work with --multi-prog (Slurm chooses each task's program "
                          "after the plugin has made the task a launcher of ranks); run one program");
    if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) == ESPANK_SUCCESS && (int64_t)ntasks > em.count)
        return maya_error("--maya-emulate=%s: the step has %u tasks for %d emulated GPUs; run at most %d "
                          "tasks (each runs its share of the ranks)", value, ntasks, em.count, em.count);
    /* Step 0 of a job without a batch script is its first: nothing of this
     * job can be in its folder yet. */
    if (step_id == 0 && !(inside_allocation && inherited && is_batch_job())) {
        char user[256];
        spank_user_name(getuid(), user, sizeof user);
        if (spank_retire_job_dir(conf, user, job_id) < 0)
            return -1;
    }
    launched = 1;
    return 0;
}

int spank_srun_exit(spank_t sp, const struct spank_conf *conf, const char *value)
{
    /* A batch job given --maya-emulate is reported by its epilog; an srun
     * given the option in a batch job that was not reports its own step. */
    if (!launched || (inside_allocation && inherited && is_batch_job()))
        return 0;
    char user[256], run_dir[PATH_MAX], cwd[PATH_MAX], output[PATH_MAX + 64], why[1024];
    struct spank_post post = { 0 };
    struct spank_emulate em;
    if (!getcwd(cwd, sizeof cwd))
        return maya_error("cannot tell the working directory: %m");
    spank_user_name(getuid(), user, sizeof user);
    if (spank_run_dir(conf, user, job_id, step_id, run_dir, sizeof run_dir) < 0 ||
        spank_emulate_load(conf, value, cwd, &em) < 0)
        return -1;
    if (inside_allocation)
        snprintf(output, sizeof output, "%s/slurm-%u.%u.out", cwd, job_id, step_id);
    else
        snprintf(output, sizeof output, "%s/slurm-%u.out", cwd, job_id);
    post.uid = getuid();
    post.gid = getgid();
    post.job = job_id;
    post.run_dir = run_dir;
    post.emulate = value;
    post.workdir = cwd;
    post.batch_status = -1;
    post.print = 1;
    if (spank_report_paths(&post, em.report, output) < 0)
        return -1;
    if (spank_postprocess(conf, &post, why, sizeof why) < 0)
        return maya_error("%s", why);
    return 0;
}
