/* maya search --slurm: trials as Slurm job arrays.
 *
 * A wave of trials is one job array: DIR/slurm/wave-W/task-K.sh runs trial
 * K's command (maya run or maya report) with its output in the trial's
 * search-trial.log and then writes the command's exit status to the trial's
 * search-exit; array.sh runs task $SLURM_ARRAY_TASK_ID. The submitter polls
 * squeue until the job has left the queue (each poll one squeue process,
 * every POLL_MS). A trial whose search-exit is missing afterwards never
 * finished (preempted, cancelled, its node failed, out of time): the caller
 * submits it again or reports it. The job's id is kept in DIR/slurm/job, so
 * that a search started again while its array still runs waits for it
 * rather than running the same trials twice. With --srun-nodes N each task
 * is N nodes (one Slurm task a node) and its command is srun
 * --maya-emulate (run.c, trial_command), which spreads the trial's ranks
 * over them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "search.h"
#include "maya/common.h"

#define POLL_MS 300
/* squeue failing for other reasons than an unknown job (slurmctld busy or
 * restarting) is tried again for this long before the search gives up */
#define SQUEUE_PATIENCE_S 120

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Run argv (a Slurm client), its stdout and stderr into out (NUL-ended,
 * truncated to size). Its exit status, or -1 if it could not run. */
static int capture(char *const *argv, char *out, size_t size)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(fd[1], 1) < 0 || dup2(fd[1], 2) < 0)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    char buf[4096];
    for (ssize_t got; (got = read(fd[0], buf, sizeof buf)) != 0;) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        size_t keep = MAYA_MIN((size_t)got, size - 1 - n);
        memcpy(out + n, buf, keep);
        n += keep;
    }
    out[n] = 0;
    close(fd[0]);
    int ws;
    if (pid < 0)
        return -1;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* arg in single quotes for sh. */
static void put_quoted(FILE *fp, const char *arg)
{
    fputc('\'', fp);
    for (const char *p = arg; *p; p++)
        if (*p == '\'')
            fputs("'\\''", fp);
        else
            fputc(*p, fp);
    fputc('\'', fp);
}

static int write_script(const char *path, const char *text_a, char *const *argv, const char *text_b,
                        const char *dir)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return maya_error("cannot create %s: %m", path);
    fputs(text_a, fp);
    for (int i = 0; argv && argv[i]; i++) {
        put_quoted(fp, argv[i]);
        fputc(' ', fp);
    }
    if (dir) {
        /* the status reaches search-exit whole, or not at all */
        fputs("> ", fp);
        fprintf(fp, "%s/search-trial.log 2>&1\nrc=$?\nt1=$(date +%%s.%%N)\n"
                "awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { printf \"%%.3f\\n\", b - a }' > %s/search-time\n"
                "echo $rc > %s/search-exit.tmp && mv %s/search-exit.tmp %s/search-exit\n", dir, dir, dir, dir, dir);
    }
    fputs(text_b, fp);
    if (fclose(fp) != 0 || chmod(path, 0755) < 0)
        return maya_error("cannot write %s: %m", path);
    return 0;
}

/* Is job id still in the queue? 1 yes, 0 gone, -1 squeue keeps failing. */
static int queued(const char *id)
{
    char *argv[] = { "squeue", "-h", "-j", (char *)id, "-o", "%t", NULL };
    char out[4096];
    double first_error = -1;
    for (;;) {
        int rc = capture(argv, out, sizeof out);
        if (rc == 0)
            return strspn(out, " \t\r\n") != strlen(out);
        if (rc > 0 && strstr(out, "Invalid job id"))
            return 0;
        if (first_error < 0)
            first_error = search_now_s();
        if (search_now_s() - first_error > SQUEUE_PATIENCE_S)
            return maya_error("squeue -j %s keeps failing: %s", id, out);
        sleep_ms(1000);
    }
}

static void job_file(const struct search_slurm *sl, char *path, size_t size)
{
    snprintf(path, size, "%s/job", sl->dir);
}

/* Wait until job id has left the queue; on *stop, cancel it first. */
static int wait_job(struct search_slurm *sl, const char *id, volatile sig_atomic_t *stop)
{
    int cancelled = 0;
    for (;;) {
        if (*stop && !cancelled) {
            char *argv[] = { "scancel", (char *)id, NULL };
            char out[1024];
            capture(argv, out, sizeof out);
            cancelled = 1;
        }
        int q = queued(id);
        if (q <= 0) {
            char path[PATH_MAX + 8];
            job_file(sl, path, sizeof path);
            if (q == 0)
                unlink(path);
            return q;
        }
        sleep_ms(POLL_MS);
    }
}

int search_slurm_resume(struct search_slurm *sl, int quiet, volatile sig_atomic_t *stop)
{
    char path[PATH_MAX + 8], *text;
    size_t len;
    job_file(sl, path, sizeof path);
    if (access(path, F_OK) != 0)
        return 0;
    if (maya_read_file(path, &text, &len) < 0)
        return -1;
    text[strcspn(text, " \r\n")] = 0;
    int rc = 0;
    if (!text[0] || strspn(text, "0123456789") != strlen(text))
        rc = maya_error("%s: expected a Slurm job id, found \"%s\"", path, text);
    else {
        if (!quiet)
            fprintf(stderr, "maya search: waiting for job %s, submitted by an earlier search in this directory\n",
                    text);
        rc = wait_job(sl, text, stop);
    }
    free(text);
    return rc;
}

int search_slurm_run(struct search_slurm *sl, struct search_trial *const *trials, char **const *argvs, int n,
                     volatile sig_atomic_t *stop)
{
    char wave[PATH_MAX], path[PATH_MAX + 64];
    double t0 = search_now_s();
    if (mkdir(sl->dir, 0755) < 0 && errno != EEXIST)
        return maya_error("cannot create %s: %m", sl->dir);
    if (maya_snprintf(wave, sizeof wave, "%s/wave-%d", sl->dir, ++sl->waves) < 0)
        return -1;
    if (mkdir(wave, 0755) < 0 && errno != EEXIST)
        return maya_error("cannot create %s: %m", wave);
    for (int k = 0; k < n; k++) {
        char head[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/task-%d.sh", wave, k);
        snprintf(head, sizeof head, "#!/bin/sh\n# maya search: trial %s\nt0=$(date +%%s.%%N)\n", trials[k]->id);
        char quoted[PATH_MAX + 8];
        FILE *q = fmemopen(quoted, sizeof quoted, "w");
        if (!q)
            return maya_error("out of memory");
        put_quoted(q, trials[k]->dir);
        fputc(0, q);
        fclose(q);
        if (write_script(path, head, argvs[k], "", quoted) < 0)
            return -1;
    }
    char array[PATH_MAX + 64], text[PATH_MAX + 128];
    snprintf(array, sizeof array, "%s/array.sh", wave);
    FILE *q = fmemopen(text, sizeof text, "w");
    if (!q)
        return maya_error("out of memory");
    fputs("#!/bin/sh\n# maya search: one trial per array task\nexec /bin/sh ", q);
    put_quoted(q, wave);
    fputs("/task-$SLURM_ARRAY_TASK_ID.sh\n", q);
    fputc(0, q);
    fclose(q);
    if (write_script(array, text, NULL, "", NULL) < 0)
        return -1;

    char **argv = calloc(sl->nsbatch + 10, sizeof *argv), range[32], output[PATH_MAX + 32], nodes[32];
    if (!argv)
        return maya_error("out of memory");
    snprintf(range, sizeof range, "--array=0-%d", n - 1);
    snprintf(nodes, sizeof nodes, "--nodes=%d", sl->srun_nodes);
    snprintf(output, sizeof output, "--output=%s/task-%%a.out", wave);
    int a = 0;
    argv[a++] = "sbatch";
    argv[a++] = "--parsable";
    argv[a++] = "--job-name=maya-search";
    argv[a++] = range;
    argv[a++] = output;
    if (sl->srun_nodes) { /* each task an allocation of that many nodes, one srun task on each */
        argv[a++] = nodes;
        argv[a++] = "--ntasks-per-node=1";
    }
    for (int i = 0; i < sl->nsbatch; i++)
        argv[a++] = sl->sbatch[i];
    argv[a++] = array;
    char out[4096];
    int rc = capture(argv, out, sizeof out);
    free(argv);
    out[strcspn(out, "\r\n")] = 0;
    char *semi = strchr(out, ';'); /* "ID;CLUSTER" on a federation */
    if (semi)
        *semi = 0;
    if (rc != 0 || !out[0] || strspn(out, "0123456789") != strlen(out))
        return maya_error("sbatch of %d trial%s failed (exit %d): %s", n, n == 1 ? "" : "s", rc, out);
    job_file(sl, path, sizeof path);
    FILE *fp = fopen(path, "w");
    if (!fp || fprintf(fp, "%s\n", out) < 0 || fclose(fp) != 0)
        return maya_error("cannot write %s: %m", path);
    snprintf(sl->last_job, sizeof sl->last_job, "%s", out);
    sl->submit_s += search_now_s() - t0;
    rc = wait_job(sl, out, stop);
    sl->array_s += search_now_s() - t0;
    sl->tasks += n;
    return rc < 0 ? -1 : 0;
}

int search_trial_exit_status(const struct search_trial *t)
{
    char path[PATH_MAX + 16], *text;
    size_t len;
    snprintf(path, sizeof path, "%s/search-exit", t->dir);
    if (access(path, F_OK) != 0 || maya_read_file(path, &text, &len) < 0)
        return -1;
    int64_t code;
    text[strcspn(text, "\r\n")] = 0;
    int ok = maya_parse_i64(text, &code) == 0 && code >= 0 && code <= 255;
    free(text);
    return ok ? (int)code : -1;
}
