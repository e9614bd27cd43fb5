/* slurmd epilog: the report of a batch job.
 *
 * job_epilog runs as root on every node of the job once it has ended. The
 * report is made once, on the batch host, as the job's user, and written next
 * to the job's output (slurm-<jobid>.out -> slurm-<jobid>.maya.txt/.json).
 * Interactive steps (srun outside a batch job, srun inside salloc) are
 * reported by srun itself when it ends (spank_srun.c). Nothing here may fail
 * the epilog: a failure is logged and left in the report's place for the user.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <slurm/slurm.h>

/* Expand the %-patterns Slurm allows in --output for a batch job's output
 * file name. 0, or -1 for a pattern this does not know (then the caller
 * falls back to the default name). */
static int expand_output(const slurm_job_info_t *j, const char *pattern, char *out, size_t size)
{
    size_t used = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[512];
        if (*p != '%') {
            piece[0] = *p;
            piece[1] = 0;
        } else {
            p++;
            switch (*p) {
            case '%': snprintf(piece, sizeof piece, "%%"); break;
            case 'j': snprintf(piece, sizeof piece, "%u", j->job_id); break;
            case 'J': snprintf(piece, sizeof piece, "%u.batch", j->job_id); break;
            case 'A': snprintf(piece, sizeof piece, "%u", j->array_task_id != NO_VAL ? j->array_job_id : j->job_id); break;
            case 'a': snprintf(piece, sizeof piece, "%u", j->array_task_id != NO_VAL ? j->array_task_id : 4294967294u); break;
            case 'x': snprintf(piece, sizeof piece, "%s", j->name ? j->name : ""); break;
            case 'N': snprintf(piece, sizeof piece, "%s", j->batch_host ? j->batch_host : ""); break;
            case 'n': case 't': snprintf(piece, sizeof piece, "0"); break;
            case 's': snprintf(piece, sizeof piece, "batch"); break;
            case 'u': spank_user_name(j->user_id, piece, sizeof piece); break;
            default: return -1;
            }
        }
        int n = snprintf(out + used, size - used, "%s", piece);
        if (n < 0 || (size_t)n >= size - used)
            return -1;
        used += (size_t)n;
    }
    return 0;
}

/* The file the job's standard output went to. */
static int output_path(const slurm_job_info_t *j, char *out, size_t size)
{
    char name[PATH_MAX];
    int ok = j->std_out && j->std_out[0] && strcmp(j->std_out, "/dev/null") != 0 &&
             expand_output(j, j->std_out, name, sizeof name) == 0;
    if (!ok) {
        if (j->array_task_id != NO_VAL)
            snprintf(name, sizeof name, "slurm-%u_%u.out", j->array_job_id, j->array_task_id);
        else
            snprintf(name, sizeof name, "slurm-%u.out", j->job_id);
    }
    if (name[0] == '/')
        return maya_snprintf(out, size, "%s", name);
    return maya_snprintf(out, size, "%s/%s", j->work_dir ? j->work_dir : "/", name);
}

static int report_job(const struct spank_conf *conf, const char *value, const slurm_job_info_t *j)
{
    char user[256], job_dir[PATH_MAX], output[PATH_MAX], why[1024];
    struct spank_post post = { 0 };
    char report[PATH_MAX];
    spank_user_name(j->user_id, user, sizeof user);
    if (spank_job_dir(conf, user, j->job_id, job_dir, sizeof job_dir) < 0 ||
        output_path(j, output, sizeof output) < 0)
        return -1;
    post.uid = j->user_id;
    post.gid = j->group_id;
    post.job = j->job_id;
    post.job_dir = job_dir;
    post.emulate = value;
    post.workdir = j->work_dir;
    post.batch_status = (int)j->exit_code;
    /* Only report= matters here, and it is taken from the text: this runs
     * as root, so the value is not parsed against files (its cluster=PATH
     * is the job's to name and is read by maya report, as the user). A value
     * too long to hold gets its report next to the output. */
    if (spank_emulate_report(value, report, sizeof report) < 0)
        report[0] = 0;
    if (spank_report_paths(&post, report, output) < 0)
        return -1;
    if (spank_postprocess(conf, &post, why, sizeof why) < 0)
        return maya_error("job %u: %s", j->job_id, why);
    slurm_info("maya: job %u: report written to %s", j->job_id, post.out_txt);
    return 0;
}

int spank_epilog(spank_t sp, const struct spank_conf *conf, const char *value)
{
    uint32_t job;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
        return maya_error("epilog: cannot get the job id");
    job_info_msg_t *msg = NULL;
    if (slurm_load_job(&msg, job, SHOW_DETAIL) != 0 || !msg)
        return maya_error("epilog: cannot load job %u: %s", job, slurm_strerror(slurm_get_errno()));
    int rc = 0;
    const char *node = getenv("SLURMD_NODENAME");
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t *j = &msg->job_array[i];
        if (j->job_id != job)
            continue;
        /* Once per job: on the node that ran the batch script. */
        if (j->batch_flag && node && j->batch_host && !strcmp(node, j->batch_host))
            rc = report_job(conf, value, j);
        break;
    }
    slurm_free_job_info_msg(msg);
    return rc;
}
