/* Where a job's traces live: one run directory (docs/run-dir.md) per step,
 *
 *   <trace_root>/<user>/job-<jobid>/step-<step>/{run.conf,traces/,logs/,slurm/}
 *
 * on storage every node and the post-processing node can read. The user's
 * folder is made by the user (trace_root is world-writable and sticky, like
 * /tmp, which also works on NFS with root squashing); one that exists must be
 * the user's own real directory, so nobody can plant a folder or a symbolic
 * link where another user's traces will go.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void spank_user_name(uid_t uid, char *buf, size_t size)
{
    struct passwd pw, *res = NULL;
    char tmp[4096];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, size, "%s", pw.pw_name);
    else
        snprintf(buf, size, "uid%u", (unsigned)uid);
}

int spank_job_dir(const struct spank_conf *conf, const char *user, uint32_t job, char *buf, size_t size)
{
    return maya_snprintf(buf, size, "%s/%s/job-%u", conf->trace_root, user, job);
}

int spank_run_dir(const struct spank_conf *conf, const char *user, uint32_t job, uint32_t step,
                  char *buf, size_t size)
{
    if (step == SPANK_STEP_BATCH)
        return maya_snprintf(buf, size, "%s/%s/job-%u/step-batch", conf->trace_root, user, job);
    return maya_snprintf(buf, size, "%s/%s/job-%u/step-%u", conf->trace_root, user, job, step);
}

static int make_dir(const char *path, mode_t mode)
{
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return maya_error("cannot create %s: %m", path);
    return 0;
}

int spank_make_run_dir(const struct spank_conf *conf, const char *user, uid_t uid, const char *dir)
{
    char user_dir[PATH_MAX], path[PATH_MAX];
    struct stat st;
    if (stat(conf->trace_root, &st) < 0 || !S_ISDIR(st.st_mode))
        return maya_error("trace_root %s (plugstack.conf) is not a directory", conf->trace_root);
    if (maya_snprintf(user_dir, sizeof user_dir, "%s/%s", conf->trace_root, user) < 0 ||
        make_dir(user_dir, 0700) < 0)
        return -1;
    if (lstat(user_dir, &st) < 0)
        return maya_error("cannot read %s: %m", user_dir);
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid)
        return maya_error("%s is not a directory of user %s; the traces cannot go there", user_dir, user);

    /* The rest, one level at a time, below the user's folder. */
    size_t base = strlen(user_dir);
    if (strncmp(dir, user_dir, base) != 0 || dir[base] != '/')
        return maya_error("run directory %s is not under %s", dir, user_dir);
    if (maya_snprintf(path, sizeof path, "%s", dir) < 0)
        return -1;
    for (char *p = path + base + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (make_dir(path, 0755) < 0)
            return -1;
        *p = '/';
    }
    if (make_dir(path, 0755) < 0)
        return -1;
    static const char *subs[] = { "traces", "logs", "slurm" };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(subs); i++) {
        char sub[PATH_MAX];
        if (maya_snprintf(sub, sizeof sub, "%s/%s", dir, subs[i]) < 0 || make_dir(sub, 0755) < 0)
            return -1;
    }
    return 0;
}

/* A job's folder left by an earlier job of the same id (job ids start again
 * when a cluster's state is reset) would mix its traces and launch records
 * into this job's report: move it aside, to job-<id>.old-<time>. Called
 * once per job, before any step writes (the batch script's user_init; srun
 * for step 0 of a job that has no batch script). */
int spank_retire_job_dir(const struct spank_conf *conf, const char *user, uint32_t job)
{
    char dir[PATH_MAX], old[PATH_MAX + 64];
    struct stat st;
    if (spank_job_dir(conf, user, job, dir, sizeof dir) < 0)
        return -1;
    if (lstat(dir, &st) < 0)
        return 0;
    snprintf(old, sizeof old, "%s.old-%lld", dir, (long long)st.st_mtime);
    if (rename(dir, old) < 0)
        return maya_error("cannot move %s, left by an earlier job %u, aside: %m", dir, job);
    maya_warn("%s was left by an earlier job %u; moved to %s", dir, job, old);
    return 0;
}
