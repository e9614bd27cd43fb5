/* After a job: collate, estimate, simulate and report, as the job's user.
 *
 * The caller (slurmd's epilog, as root, or srun, as the user) forks a child
 * that drops to the job's user (setgid, initgroups, setuid: it never touches
 * the user's files as root), merges the plugin's launch records into the run
 * directory's run.conf, runs `maya report DIR` and copies report.txt/.json to
 * where the user looks. The caller waits at most the plugstack.conf
 * time_limit, then kills the child's whole process group and has another
 * child write a note saying so. Whatever goes wrong, the user finds a file
 * saying why, and the caller gets -1 and the reason to log.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"
#include "maya/run_desc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- where the report goes ---- */

int spank_report_paths(struct spank_post *post, const char *report_base, const char *output)
{
    char base[PATH_MAX];
    if (report_base && *report_base) {
        /* report=BASE: BASE.txt and BASE.json, relative to the working directory */
        if (report_base[0] == '/' || !post->workdir)
            snprintf(base, sizeof base, "%s", report_base);
        else if (maya_snprintf(base, sizeof base, "%s/%s", post->workdir, report_base) < 0)
            return -1;
        if (maya_snprintf(post->out_txt, sizeof post->out_txt, "%s.txt", base) < 0 ||
            maya_snprintf(post->out_json, sizeof post->out_json, "%s.json", base) < 0)
            return -1;
        return 0;
    }
    /* next to the output: "slurm-12.out" -> "slurm-12.maya.txt" */
    if (maya_snprintf(base, sizeof base, "%s", output) < 0)
        return -1;
    char *slash = strrchr(base, '/'), *dot = strrchr(base, '.');
    if (dot && dot > (slash ? slash + 1 : base))
        *dot = 0;
    if (maya_snprintf(post->out_txt, sizeof post->out_txt, "%s.maya.txt", base) < 0 ||
        maya_snprintf(post->out_json, sizeof post->out_json, "%s.maya.json", base) < 0)
        return -1;
    return 0;
}

/* ---- which step of a job to report ---- */

static int count_traces(const char *run_dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/traces", run_dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".mtrace") != NULL;
    closedir(d);
    return n;
}

/* The last numbered step that left traces, else the batch script's, else the
 * last step at all (whose report then says no rank called CUDA). */
static int pick_step(const char *job_dir, char *out, size_t size)
{
    DIR *d = opendir(job_dir);
    if (!d)
        return maya_error("the job ran no step with --maya-emulate (no %s)", job_dir);
    long best_traced = -1, best_any = -1;
    int batch = 0, batch_traced = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[PATH_MAX];
        if (strncmp(e->d_name, "step-", 5) != 0)
            continue;
        if (maya_snprintf(path, sizeof path, "%s/%s", job_dir, e->d_name) < 0)
            continue;
        if (!strcmp(e->d_name + 5, "batch")) {
            batch = 1;
            batch_traced = count_traces(path) > 0;
            continue;
        }
        int64_t step;
        if (maya_parse_i64(e->d_name + 5, &step) < 0 || step < 0)
            continue;
        if (step > best_any)
            best_any = step;
        if (step > best_traced && count_traces(path) > 0)
            best_traced = step;
    }
    closedir(d);
    if (best_traced >= 0)
        return maya_snprintf(out, size, "%s/step-%ld", job_dir, best_traced);
    if (batch_traced || (batch && best_any < 0))
        return maya_snprintf(out, size, "%s/step-batch", job_dir);
    if (best_any >= 0)
        return maya_snprintf(out, size, "%s/step-%ld", job_dir, best_any);
    return maya_error("the job ran no step with --maya-emulate (%s is empty)", job_dir);
}

/* ---- run.conf from the launch records ---- */

/* Take what one launcher knew (its ranks' states, its times) into d. */
static void merge_task(struct maya_run_desc *d, const struct maya_run_desc *t)
{
    for (int i = 0; i < t->nprocs && i < d->nprocs; i++) {
        const struct maya_run_proc *p = &t->procs[i];
        if (p->pid > 0 || p->end != MAYA_RUN_UNKNOWN)
            d->procs[i] = *p;
    }
    /* ISO 8601 UTC times sort as text. */
    if (t->start_time[0] && (!d->start_time[0] || strcmp(t->start_time, d->start_time) < 0))
        snprintf(d->start_time, sizeof d->start_time, "%s", t->start_time);
    if (strcmp(t->end_time, d->end_time) > 0)
        snprintf(d->end_time, sizeof d->end_time, "%s", t->end_time);
    if (t->wall_s > d->wall_s)
        d->wall_s = t->wall_s;
    if (t->cause[0] && !d->cause[0]) /* the watchdog's (task 0) */
        snprintf(d->cause, sizeof d->cause, "%s", t->cause);
}

/* run.conf = slurm/step.conf (written at launch) + every slurm/task-N.conf. */
static int write_run_conf(const char *run_dir, int batch_status)
{
    char path[PATH_MAX], dir[PATH_MAX + 8];
    struct maya_run_desc d;
    if (maya_snprintf(path, sizeof path, "%s/slurm/step.conf", run_dir) < 0 ||
        maya_run_desc_read(path, &d) < 0)
        return -1;
    snprintf(dir, sizeof dir, "%s/slurm", run_dir);
    DIR *dp = opendir(dir);
    struct dirent *e;
    int ntasks = 0, rc = 0;
    while (rc == 0 && dp && (e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        struct maya_run_desc t;
        if (strncmp(e->d_name, "task-", 5) != 0 || len < 6 || strcmp(e->d_name + len - 5, ".conf") != 0)
            continue;
        if (maya_snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < 0 || maya_run_desc_read(path, &t) < 0) {
            rc = -1;
            break;
        }
        merge_task(&d, &t);
        maya_run_desc_free(&t);
        ntasks++;
    }
    if (dp)
        closedir(dp);
    if (rc == 0 && batch_status >= 0 && ntasks == 0 && d.nprocs == 1) {
        /* The batch script: one process, ended as Slurm saw it end. */
        d.procs[0].end = WIFSIGNALED(batch_status) ? MAYA_RUN_SIGNALED : MAYA_RUN_EXITED;
        d.procs[0].code = WIFSIGNALED(batch_status) ? WTERMSIG(batch_status) : WEXITSTATUS(batch_status);
    }
    if (rc == 0 && maya_snprintf(path, sizeof path, "%s/run.conf", run_dir) == 0)
        rc = maya_run_desc_write(path, &d);
    maya_run_desc_free(&d);
    return rc;
}

/* ---- running as the user ---- */

static int become_user(uid_t uid, gid_t gid)
{
    if (getuid() == uid && geteuid() == uid)
        return 0;
    if (geteuid() != 0)
        return maya_error("cannot act as uid %u from uid %u", (unsigned)uid, (unsigned)geteuid());
    struct passwd pw, *res = NULL;
    char buf[4096];
    int have_pw = getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res;
    if ((have_pw ? initgroups(pw.pw_name, gid) : setgroups(1, &gid)) < 0)
        return maya_error("cannot take the groups of uid %u: %m", (unsigned)uid);
    if (setgid(gid) < 0 || setuid(uid) < 0)
        return maya_error("cannot become uid %u gid %u: %m", (unsigned)uid, (unsigned)gid);
    if (uid != 0 && (setuid(0) == 0 || geteuid() == 0))
        return maya_error("dropping privileges to uid %u did not stick", (unsigned)uid);
    return 0;
}

/* A minimal, predictable environment for maya report. */
static void user_env(uid_t uid, const struct spank_conf *conf)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    clearenv();
    setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
    setenv("LANG", "C.UTF-8", 1);
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) {
        setenv("HOME", pw.pw_dir, 1);
        setenv("USER", pw.pw_name, 1);
        setenv("LOGNAME", pw.pw_name, 1);
    }
    setenv("MAYA_HWSPEC_DIR", conf->hwspecs, 1);
}

/* ---- the note when there is no report ---- */

static void print_file(const char *path)
{
    char *data;
    if (maya_read_file(path, &data, NULL) == 0) {
        fputs(data, stderr);
        free(data);
    }
}


static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(fp, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", fp);
        else if (c < 0x20)
            fprintf(fp, "\\u%04x", c);
        else
            fputc(c, fp);
    }
    fputc('"', fp);
}

/* The last lines of a log, indented, for the note. */
static void tail_of(const char *path, char *buf, size_t size, int lines)
{
    char *data;
    size_t len;
    buf[0] = 0;
    if (access(path, R_OK) < 0 || maya_read_file(path, &data, &len) < 0)
        return;
    size_t start = len;
    if (start && data[start - 1] == '\n')
        start--;
    for (int n = 0; start > 0; start--)
        if (data[start - 1] == '\n' && ++n == lines)
            break;
    size_t used = 0;
    for (char *l = data + start, *next; *l && used + 1 < size; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = 0;
        else
            next = l + strlen(l);
        int n = snprintf(buf + used, size - used, "  | %s\n", l);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    free(data);
}

static int write_note(const struct spank_post *post, const char *run_dir, const char *reason)
{
    char log[PATH_MAX], tail[4096] = "";
    struct maya_atomic_file af;
    if (run_dir && maya_snprintf(log, sizeof log, "%s/logs/report.log", run_dir) == 0)
        tail_of(log, tail, sizeof tail, 15);
    if (maya_atomic_open(&af, post->out_txt) < 0)
        return -1;
    fprintf(af.fp, "maya: no report for Slurm job %u\n", post->job);
    fprintf(af.fp, "reason: %s\n", reason);
    if (run_dir)
        fprintf(af.fp, "run directory: %s\n(maya report %s tries again)\n", run_dir, run_dir);
    if (tail[0])
        fprintf(af.fp, "last lines of %s:\n%s", log, tail);
    if (maya_atomic_commit(&af) < 0)
        return -1;
    if (post->print)
        print_file(post->out_txt);
    if (maya_atomic_open(&af, post->out_json) < 0)
        return -1;
    fprintf(af.fp, "{\"job_id\": %u, \"report\": null, \"error\": ", post->job);
    json_string(af.fp, reason);
    fprintf(af.fp, ", \"run_dir\": ");
    if (run_dir)
        json_string(af.fp, run_dir);
    else
        fputs("null", af.fp);
    fprintf(af.fp, "}\n");
    return maya_atomic_commit(&af);
}

/* ---- the work, in the child, as the user ---- */


static int copy_file(const char *from, const char *to)
{
    char *data;
    size_t len;
    if (maya_read_file(from, &data, &len) < 0)
        return -1;
    int rc = maya_write_file_atomic(to, data, len);
    free(data);
    return rc;
}

/* Run maya report on run_dir; its output goes to logs/report.log. Returns
 * its wait status, or -1. */
static int run_maya_report(const struct spank_conf *conf, const char *run_dir)
{
    char maya[PATH_MAX], log[PATH_MAX];
    if (maya_snprintf(maya, sizeof maya, "%s/bin/maya", conf->prefix) < 0 ||
        maya_snprintf(log, sizeof log, "%s/logs/report.log", run_dir) < 0)
        return -1;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return maya_error("cannot create %s: %m", log);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        return maya_error("fork: %m");
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execl(maya, "maya", "report", run_dir, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", maya, strerror(errno));
        _exit(127);
    }
    close(fd);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return maya_error("waitpid: %m");
    return status;
}

static void describe_status(int status, char *buf, size_t size)
{
    if (WIFEXITED(status))
        snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, size, "wait status %#x", status);
}

/* No report: leave the note; 1, or 2 when not even the note could be written. */
static int noted(const struct spank_post *post, const char *run_dir, const char *reason)
{
    return write_note(post, run_dir, reason) < 0 ? 2 : 1;
}

/* The work, as the user: 0 a report was made; else noted() (why in reason). */
static int work(const struct spank_conf *conf, const struct spank_post *post, char *reason, size_t size)
{
    char run_dir[PATH_MAX], txt[PATH_MAX + 16], json[PATH_MAX + 16];
    if (post->run_dir) {
        snprintf(run_dir, sizeof run_dir, "%s", post->run_dir);
    } else if (pick_step(post->job_dir, run_dir, sizeof run_dir) < 0) {
        snprintf(reason, size, "%s", maya_last_error());
        return noted(post, NULL, reason);
    }
    if (write_run_conf(run_dir, post->batch_status) < 0) {
        snprintf(reason, size, "%s", maya_last_error());
        return noted(post, run_dir, reason);
    }
    snprintf(txt, sizeof txt, "%s/report.txt", run_dir);
    snprintf(json, sizeof json, "%s/report.json", run_dir);
    unlink(txt);
    unlink(json);
    int status = run_maya_report(conf, run_dir);
    if (status == -1 || access(txt, R_OK) < 0 || access(json, R_OK) < 0) {
        char how[128] = "could not start";
        if (status != -1)
            describe_status(status, how, sizeof how);
        snprintf(reason, size, "maya report %s ended with %s and wrote no report", run_dir, how);
        return noted(post, run_dir, reason);
    }
    if (copy_file(txt, post->out_txt) < 0 || copy_file(json, post->out_json) < 0) {
        snprintf(reason, size, "%s", maya_last_error());
        return 2;
    }
    if (post->print)
        print_file(post->out_txt);
    return 0;
}

static int work_fn(const struct spank_conf *conf, const struct spank_post *post, const char *arg,
                   char *reason, size_t size)
{
    return work(conf, post, reason, size);
}

static int note_fn(const struct spank_conf *conf, const struct spank_post *post, const char *arg,
                   char *reason, size_t size)
{
    snprintf(reason, size, "%s", arg);
    return noted(post, NULL, arg);
}

typedef int (*user_fn)(const struct spank_conf *, const struct spank_post *, const char *, char *, size_t);

/* Fork a child that becomes the user and runs fn; its own process group, so
 * that a time limit ends everything it started. The reason it gives for a
 * failure comes back through *reason_fd (for the node's log). */
static pid_t spawn_as_user(const struct spank_conf *conf, const struct spank_post *post, user_fn fn,
                           const char *arg, int *reason_fd)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid != 0) {
        close(fds[1]);
        if (pid < 0)
            close(fds[0]);
        *reason_fd = fds[0];
        return pid;
    }
    char reason[2048] = "";
    setpgid(0, 0);
    if (dup3(fds[1], 3, O_CLOEXEC) < 0)
        _exit(2);
    closefrom(4);
    /* Our messages go to stderr: the user's terminal under srun. */
    maya_set_error_handler(NULL);
    maya_set_error_prefix("maya (Slurm plugin)");
    int rc = 3;
    if (become_user(post->uid, post->gid) < 0) {
        snprintf(reason, sizeof reason, "%s", maya_last_error());
    } else {
        umask(022);
        user_env(post->uid, conf);
        if (post->workdir && chdir(post->workdir) < 0 && chdir("/") < 0)
            snprintf(reason, sizeof reason, "cannot enter %s: %s", post->workdir, strerror(errno));
        else
            rc = fn(conf, post, arg, reason, sizeof reason);
    }
    if (rc != 0 && write(3, reason, strlen(reason)) < 0)
        rc = 2;
    _exit(rc);
}

/* Wait for pid until deadline (monotonic ns; 0 = no limit): 1 ended (status
 * set), 0 still running at the deadline. */
static int wait_until(pid_t pid, uint64_t deadline, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 1;
        if (r < 0 && errno != EINTR) {
            *status = 0x7f00; /* somebody else reaped it: treat as failed */
            return 1;
        }
        if (deadline && maya_mono_ns() >= deadline)
            return 0;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* What the child said, after it ended. */
static void read_reason(int fd, char *buf, size_t size)
{
    ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;
    buf[n > 0 ? n : 0] = 0;
    if (fd >= 0)
        close(fd);
}

int spank_postprocess(const struct spank_conf *conf, const struct spank_post *post, char *why,
                      size_t why_size)
{
    int status, fd = -1;
    char reason[2048];
    pid_t pid = spawn_as_user(conf, post, work_fn, NULL, &fd);
    if (pid < 0) {
        snprintf(why, why_size, "cannot start the post-processing: %s", strerror(errno));
        return -1;
    }
    uint64_t deadline = maya_mono_ns() + (uint64_t)conf->time_limit_s * 1000000000ull;
    if (!wait_until(pid, deadline, &status)) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        wait_until(pid, 0, &status);
        close(fd);
        snprintf(why, why_size, "the post-processing (collate, estimate, simulate, report) took longer "
                 "than time_limit=%d s (plugstack.conf) and was stopped", conf->time_limit_s);
        pid_t note = spawn_as_user(conf, post, note_fn, why, &fd);
        if (note > 0 && !wait_until(note, maya_mono_ns() + 10000000000ull, &status)) {
            kill(-note, SIGKILL);
            wait_until(note, 0, &status);
        }
        if (note > 0)
            close(fd);
        return -1;
    }
    read_reason(fd, reason, sizeof reason);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
        snprintf(why, why_size, "no report: %s (the note in %s says so)", reason, post->out_txt);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        snprintf(why, why_size, "cannot act as the job's user (uid %u): %s", (unsigned)post->uid, reason);
    else
        snprintf(why, why_size, "no report, and no note in %s: %s", post->out_txt,
                 reason[0] ? reason : "the post-processing died");
    return -1;
}
