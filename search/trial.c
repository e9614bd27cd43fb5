/* maya search: one trial is one `maya run` in its own directory; its result
 * is read back from the run's report.json and run.conf (docs/run-dir.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "search.h"
#include "maya/common.h"
#include "maya/run_desc.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- the few top-level values of report.json the search needs ---- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *skip_string(const char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p + 1 : NULL;
}

/* Past one value (scalar, string, object or array); NULL if malformed. */
static const char *skip_value(const char *p)
{
    int depth = 0;
    do {
        p = skip_ws(p);
        if (*p == '"')
            p = skip_string(p);
        else if (*p == '{' || *p == '[')
            depth++, p++;
        else if (*p == '}' || *p == ']')
            p = --depth < 0 ? NULL : p + 1;
        else if (*p == ',' || *p == ':')
            p = depth ? p + 1 : NULL;
        else if (*p)
            p += strcspn(p, ",:{}[]\" \t\r\n");
        else
            p = NULL;
    } while (p && depth > 0);
    return p;
}

/* The value of key in the top-level object (its first character), or NULL. */
static const char *json_top(const char *text, const char *key)
{
    const char *p = skip_ws(text);
    if (*p++ != '{')
        return NULL;
    size_t klen = strlen(key);
    for (;;) {
        p = skip_ws(p);
        if (*p != '"')
            return NULL;
        const char *k = p + 1, *end = skip_string(p);
        if (!end)
            return NULL;
        p = skip_ws(end);
        if (*p++ != ':')
            return NULL;
        p = skip_ws(p);
        if ((size_t)(end - 1 - k) == klen && !strncmp(k, key, klen))
            return p;
        if (!(p = skip_value(p)))
            return NULL;
        p = skip_ws(p);
        if (*p++ != ',')
            return NULL;
    }
}

static double json_top_num(const char *text, const char *key)
{
    const char *v = json_top(text, key);
    char *end;
    double d = v ? strtod(v, &end) : -1;
    return v && end != v ? d : -1;
}

static int json_top_true(const char *text, const char *key)
{
    const char *v = json_top(text, key);
    return v && !strncmp(v, "true", 4);
}

/* A string value into buf (escapes other than \" and \\ kept as written). */
static void json_top_str(const char *text, const char *key, char *buf, size_t size)
{
    const char *v = json_top(text, key);
    size_t n = 0;
    if (v && *v == '"')
        for (v++; *v && *v != '"' && n + 1 < size; v++)
            buf[n++] = *v == '\\' && (v[1] == '"' || v[1] == '\\') ? *++v : *v;
    buf[n] = 0;
}

/* A valid trial's steady iterations may differ by this factor at most
 * (host noise moves them by percents); beyond it the iteration finder cut
 * them at the wrong places (seen: 2.0 and 27.4 ms after a 1,421 ms first
 * iteration, minigpt with interleaved stages and 128 micro-batches on 32
 * GPUs), and the trial is failed rather than ranked by a wrong time. */
#define UNSTEADY 2.0

/* The shortest and longest of the report's steady iterations (its
 * "iterations" array): how many there are. */
static int steady_range(const char *text, double *lo, double *hi)
{
    const char *p = json_top(text, "iterations");
    int n = 0;
    if (!p || *p++ != '[')
        return 0;
    for (;;) {
        p = skip_ws(p);
        if (*p != '{')
            break;
        double t = json_top_num(p, "time_s");
        if (json_top_true(p, "steady") && t > 0) {
            *lo = n ? fmin(*lo, t) : t;
            *hi = n ? fmax(*hi, t) : t;
            n++;
        }
        if (!(p = skip_value(p)))
            break;
        p = skip_ws(p);
        if (*p++ != ',')
            break;
    }
    return n;
}

/* ---- running ---- */

static int read_report(const struct search_trial *t, char **text)
{
    char path[PATH_MAX + 16];
    size_t len;
    snprintf(path, sizeof path, "%s/report.json", t->dir);
    if (access(path, F_OK) != 0)
        return -1;
    return maya_read_file(path, text, &len);
}

int search_trial_done(const struct search_trial *t)
{
    char *text;
    if (read_report(t, &text) < 0)
        return 0;
    /* written atomically by the pipeline: whole when it is there at all */
    int done = json_top(text, "iteration_time_s") != NULL;
    free(text);
    return done;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) < 0 && errno != ENOENT ? maya_error("cannot remove %s: %m", path) : 0;
}

int search_trial_prepare(struct search_trial *t)
{
    /* what an interrupted earlier search left: maya run wants a fresh directory */
    if (access(t->dir, F_OK) == 0 && nftw(t->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return -1;
    if (mkdir(t->dir, 0755) < 0)
        return maya_error("cannot create %s: %m", t->dir);
    return 0;
}

/* A copy of src/name in t's directory, if src has it. */
static int copy_in(const struct search_trial *t, const char *src, const char *name)
{
    char from[PATH_MAX + 64], to[PATH_MAX + 64], *text;
    size_t len;
    snprintf(from, sizeof from, "%s/%s", src, name);
    snprintf(to, sizeof to, "%s/%s", t->dir, name);
    if (access(from, F_OK) != 0)
        return 0;
    if (maya_read_file(from, &text, &len) < 0)
        return -1;
    FILE *fp = fopen(to, "w");
    int ok = fp && fwrite(text, 1, len, fp) == len;
    free(text);
    if (!fp || fclose(fp) != 0 || !ok)
        return maya_error("cannot write %s: %m", to);
    return 0;
}

int search_trial_prepare_reuse(struct search_trial *t, const char *src)
{
    static const char *const linked[] = { "traces", "logs" };
    static const char *const copied[] = { MAYA_RUN_DESC_FILE, "gpu.conf", "cluster.conf" };
    if (search_trial_prepare(t) < 0)
        return -1;
    /* the ranks' traces stay where they were written: maya report only reads them */
    for (size_t i = 0; i < MAYA_ARRAY_LEN(linked); i++) {
        char from[PATH_MAX + 16], to[PATH_MAX + 16];
        snprintf(from, sizeof from, "%s/%s", src, linked[i]);
        snprintf(to, sizeof to, "%s/%s", t->dir, linked[i]);
        if (access(from, F_OK) == 0 && symlink(from, to) < 0)
            return maya_error("cannot link %s to %s: %m", to, from);
    }
    for (size_t i = 0; i < MAYA_ARRAY_LEN(copied); i++)
        if (copy_in(t, src, copied[i]) < 0)
            return -1;
    return 0;
}

int search_trial_spawn(struct search_trial *t, char *const *argv)
{
    char log[PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/search-trial.log", t->dir);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return maya_error("cannot create %s: %m", log);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* a trial does not outlive a search that was killed outright */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        fprintf(stderr, "maya search: cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    if (pid < 0)
        return maya_error("cannot start a trial: %m");
    t->pid = pid;
    return 0;
}

void search_trial_save_time(const struct search_trial *t, double secs)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/search-time", t->dir);
    FILE *fp = fopen(path, "w");
    if (fp) {
        fprintf(fp, "%.3f\n", secs);
        fclose(fp);
    }
}

double search_trial_load_time(const struct search_trial *t)
{
    char path[PATH_MAX + 16], *text;
    size_t len;
    double secs = -1;
    snprintf(path, sizeof path, "%s/search-time", t->dir);
    if (access(path, R_OK) == 0 && maya_read_file(path, &text, &len) == 0) {
        text[strcspn(text, "\r\n")] = 0;
        if (maya_parse_double(text, &secs) < 0 || secs < 0)
            secs = -1;
        free(text);
    }
    return secs;
}

/* The last non-empty line of a file into buf ("" if none). */
static void last_line(const char *path, char *buf, size_t size)
{
    char *text;
    size_t len;
    buf[0] = 0;
    if (access(path, R_OK) != 0 || maya_read_file(path, &text, &len) < 0)
        return;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = 0;
    char *line = strrchr(text, '\n');
    snprintf(buf, size, "%s", line ? line + 1 : text);
    free(text);
}

/* Why the workload failed, from run.conf and the ranks' stderr: the first
 * rank that failed on its own (else the first that maya stopped: a
 * --timeout), and the last line of its stderr. Ranks that fail together
 * (a bad option) may not all say why, and maya run stops the others as soon
 * as one fails: when that rank said nothing, another failed rank's line is
 * quoted, naming it. */
static void workload_reason(struct search_trial *t)
{
    struct maya_run_desc d;
    char path[PATH_MAX + 32], status[64], line[400] = "";
    maya_run_desc_init(&d);
    snprintf(path, sizeof path, "%s/%s", t->dir, MAYA_RUN_DESC_FILE);
    snprintf(t->reason, sizeof t->reason, "the workload failed");
    int culprit = -1, said = -1;
    if (maya_run_desc_read(path, &d) == 0)
        for (int i = 0; i < d.nprocs; i++)
            if (!maya_run_proc_ok(&d.procs[i]) &&
                (culprit < 0 || (d.procs[culprit].note[0] && !d.procs[i].note[0])))
                culprit = i;
    for (int k = -1; culprit >= 0 && k < d.nprocs && !line[0]; k++) {
        int i = k < 0 ? culprit : k; /* the culprit first, then the others that failed */
        if (k >= 0 && (k == culprit || maya_run_proc_ok(&d.procs[k])))
            continue;
        snprintf(path, sizeof path, "%s/logs/rank-%d.err", t->dir, i);
        last_line(path, line, sizeof line);
        said = i;
    }
    if (culprit >= 0) {
        const struct maya_run_proc *p = &d.procs[culprit];
        maya_run_proc_status(p, status, sizeof status);
        int n = snprintf(t->reason, sizeof t->reason, "rank %d %s%s%s", culprit, status, p->note[0] ? ": " : "",
                         p->note);
        size_t at = MAYA_MIN((size_t)n, sizeof t->reason - 1);
        if (line[0] && said == culprit)
            snprintf(t->reason + at, sizeof t->reason - at, ": %s", line);
        else if (line[0])
            snprintf(t->reason + at, sizeof t->reason - at, " (rank %d: %s)", said, line);
    }
    maya_run_desc_free(&d);
}

void search_trial_read(struct search_trial *t, int ws)
{
    char *text = NULL, error[400];
    double lo = 0, hi = 0;
    t->status = SEARCH_FAILED;
    t->iteration_s = -1;
    t->peak_bytes = -1;
    if (read_report(t, &text) < 0) {
        char path[PATH_MAX + 32], line[400];
        snprintf(path, sizeof path, "%s/search-trial.log", t->dir);
        last_line(path, line, sizeof line);
        int code = ws >= 0 && WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
        snprintf(t->reason, sizeof t->reason, "maya %s %s %d, no report%s%s", t->reused[0] ? "report" : "run",
                 code >= 0 ? "exit" : "signal", code >= 0 ? code : ws >= 0 ? WTERMSIG(ws) : 0,
                 line[0] ? ": " : "", line);
        return;
    }
    t->peak_bytes = json_top_num(text, "peak_memory_bytes");
    double iter = json_top_num(text, "iteration_time_s");
    json_top_str(text, "error", error, sizeof error);
    if (json_top_true(text, "oom")) {
        t->status = SEARCH_OOM;
        snprintf(t->reason, sizeof t->reason, "out of GPU memory (peak %.2f GiB of %.2f GiB)",
                 t->peak_bytes / GIB, json_top_num(text, "gpu_memory_bytes") / GIB);
    } else if (!json_top_true(text, "workload_ok")) {
        workload_reason(t);
    } else if (!json_top_true(text, "simulated") || iter <= 0) {
        snprintf(t->reason, sizeof t->reason, "%s", error[0] ? error : "no iteration time in the report");
    } else if (steady_range(text, &lo, &hi) >= 2 && hi > UNSTEADY * lo) {
        /* iterations that repeat the same work but differ this much were
         * cut at the wrong places: their mean is no iteration's time, and
         * a search must not choose by it */
        snprintf(t->reason, sizeof t->reason, "its steady iterations are not alike (%.3f to %.3f ms), so the "
                 "iteration time (%.3f ms) cannot be trusted; --iteration-marker would say where iterations start",
                 lo * 1e3, hi * 1e3, iter * 1e3);
    } else {
        t->status = SEARCH_OK;
        t->iteration_s = iter;
        t->reason[0] = 0;
    }
    free(text);
}
