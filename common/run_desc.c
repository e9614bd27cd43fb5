/* The run description file (DIR/run.conf): writing and strict reading.
 *
 * One `key=value` per line; `#` starts a comment line. Values run to the end
 * of the line; a backslash, newline or carriage return inside a value is
 * written as `\\`, `\n` or `\r`. Per-process keys are `rank.N.FIELD`.
 */
#define _GNU_SOURCE
#include "maya/run_desc.h"
#include "maya/common.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void maya_run_desc_init(struct maya_run_desc *d)
{
    memset(d, 0, sizeof *d);
    d->version = MAYA_RUN_DESC_VERSION;
    d->nodes = 1;
    d->gpus_per_node = 1;
    d->gpu_count = 1;
}

int maya_run_desc_set_nprocs(struct maya_run_desc *d, int n)
{
    if (n < 0 || n > MAYA_RUN_MAX_PROCS)
        return maya_error("%d processes: expected 0 to %d", n, MAYA_RUN_MAX_PROCS);
    struct maya_run_proc *p = realloc(d->procs, (size_t)MAYA_MAX(n, 1) * sizeof *p);
    if (!p)
        return maya_error("out of memory");
    for (int i = d->nprocs; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].node = -1;
        p[i].local_rank = -1;
    }
    d->procs = p;
    d->nprocs = n;
    return 0;
}

void maya_run_desc_free(struct maya_run_desc *d)
{
    free(d->procs);
    d->procs = NULL;
    d->nprocs = 0;
}

static void put(FILE *fp, const char *key, const char *value)
{
    fprintf(fp, "%s=", key);
    for (const char *s = value; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", fp);
        else if (*s == '\n')
            fputs("\\n", fp);
        else if (*s == '\r')
            fputs("\\r", fp); /* a bare one would read back as the line's end */
        else
            fputc(*s, fp);
    }
    fputc('\n', fp);
}

int maya_run_desc_live(const struct maya_run_desc *d)
{
    if (strcmp(d->state, "running"))
        return 0;
    char host[256] = "";
    if (d->launcher_pid <= 0 || !d->launcher_host[0] || gethostname(host, sizeof host - 1) != 0 ||
        strcmp(host, d->launcher_host))
        return -1; /* a pid of another host (a shared file system) says nothing here */
    return kill((pid_t)d->launcher_pid, 0) == 0 || errno == EPERM;
}

int maya_run_desc_write(const char *path, const struct maya_run_desc *d)
{
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    FILE *fp = af.fp;
    fprintf(fp, "# maya run description (docs/run-dir.md)\n");
    fprintf(fp, "version=%d\n", d->version);
    put(fp, "launcher", d->launcher);
    put(fp, "gpu", d->gpu);
    fprintf(fp, "gpu_count=%d\n", d->gpu_count);
    put(fp, "cluster", d->cluster);
    fprintf(fp, "gpus_per_node=%d\nnodes=%d\nnprocs=%d\n", d->gpus_per_node, d->nodes, d->nprocs);
    put(fp, "command", d->command);
    put(fp, "workdir", d->workdir);
    put(fp, "start_time", d->start_time);
    put(fp, "end_time", d->end_time);
    fprintf(fp, "wall_s=%.3f\n", d->wall_s);
    put(fp, "iteration_marker", d->iteration_marker);
    if (d->iterations)
        fprintf(fp, "iterations=%d\n", d->iterations);
    put(fp, "estimator", d->estimator);
    put(fp, "oracle", d->oracle);
    if (d->state[0])
        put(fp, "state", d->state);
    if (d->launcher_pid > 0)
        fprintf(fp, "launcher_pid=%ld\n", d->launcher_pid);
    if (d->launcher_host[0])
        put(fp, "launcher_host", d->launcher_host);
    if (d->cause[0])
        put(fp, "cause", d->cause);
    for (int i = 0; i < d->nprocs; i++) {
        const struct maya_run_proc *p = &d->procs[i];
        if (p->node >= 0)
            fprintf(fp, "rank.%d.node=%d\n", i, p->node);
        if (p->local_rank >= 0)
            fprintf(fp, "rank.%d.local_rank=%d\n", i, p->local_rank);
        if (p->pid > 0)
            fprintf(fp, "rank.%d.pid=%ld\n", i, p->pid);
        if (p->end == MAYA_RUN_EXITED)
            fprintf(fp, "rank.%d.exit=%d\n", i, p->code);
        else if (p->end == MAYA_RUN_SIGNALED)
            fprintf(fp, "rank.%d.signal=%d\n", i, p->code);
        if (p->note[0]) {
            char key[64];
            snprintf(key, sizeof key, "rank.%d.note", i);
            put(fp, key, p->note);
        }
    }
    return maya_atomic_commit(&af);
}

/* ---- reading ---- */

struct parse {
    const char *path;
    int line;
};

static int bad(const struct parse *ps, const char *fmt, ...) MAYA_PRINTF(2, 3);
static int bad(const struct parse *ps, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return maya_error("%s:%d: %s", ps->path, ps->line, msg);
}

static int get_str(const struct parse *ps, const char *key, const char *v, char *out, size_t size)
{
    size_t n = 0;
    for (const char *s = v; *s; s++) {
        char c = *s;
        if (c == '\\') {
            if (s[1] == '\\')
                c = '\\';
            else if (s[1] == 'n')
                c = '\n';
            else if (s[1] == 'r')
                c = '\r';
            else
                return bad(ps, "%s: expected \\\\, \\n or \\r after a backslash", key);
            s++;
        }
        if (n + 1 >= size)
            return bad(ps, "%s: value longer than %zu bytes", key, size - 1);
        out[n++] = c;
    }
    out[n] = 0;
    return 0;
}

static int get_int(const struct parse *ps, const char *key, const char *v, int lo, int hi, int *out)
{
    int64_t x;
    if (maya_parse_i64(v, &x) < 0 || x < lo || x > hi)
        return bad(ps, "%s=\"%s\": expected a whole number from %d to %d", key, v, lo, hi);
    *out = (int)x;
    return 0;
}

static int get_proc_field(const struct parse *ps, struct maya_run_desc *d, const char *key, const char *v)
{
    /* rank.N.FIELD */
    const char *num = key + 5;
    char *dot = strchr(num, '.');
    int64_t n;
    char nbuf[32];
    if (!dot || (size_t)(dot - num) >= sizeof nbuf)
        return bad(ps, "\"%s\": expected rank.N.FIELD", key);
    memcpy(nbuf, num, (size_t)(dot - num));
    nbuf[dot - num] = 0;
    if (maya_parse_i64(nbuf, &n) < 0 || n < 0 || n >= MAYA_RUN_MAX_PROCS)
        return bad(ps, "\"%s\": rank \"%s\" is not a number from 0 to %d", key, nbuf, MAYA_RUN_MAX_PROCS - 1);
    if (n >= d->nprocs && maya_run_desc_set_nprocs(d, (int)n + 1) < 0)
        return -1;
    struct maya_run_proc *p = &d->procs[n];
    const char *f = dot + 1;
    int x = 0;
    if (!strcmp(f, "exit")) {
        if (get_int(ps, key, v, 0, 255, &x) < 0)
            return -1;
        p->end = MAYA_RUN_EXITED;
        p->code = x;
    } else if (!strcmp(f, "signal")) {
        if (get_int(ps, key, v, 1, 128, &x) < 0)
            return -1;
        p->end = MAYA_RUN_SIGNALED;
        p->code = x;
    } else if (!strcmp(f, "node")) {
        return get_int(ps, key, v, 0, 1 << 20, &p->node);
    } else if (!strcmp(f, "local_rank")) {
        return get_int(ps, key, v, 0, 1 << 20, &p->local_rank);
    } else if (!strcmp(f, "pid")) {
        if (get_int(ps, key, v, 1, 1 << 30, &x) < 0)
            return -1;
        p->pid = x;
    } else if (!strcmp(f, "note")) {
        return get_str(ps, key, v, p->note, sizeof p->note);
    } else {
        return bad(ps, "unknown field \"%s\"; rank fields: exit, signal, node, local_rank, pid, note", f);
    }
    return 0;
}

static int parse_line(const struct parse *ps, struct maya_run_desc *d, char *line, int *declared_nprocs)
{
    char *eq = strchr(line, '=');
    if (!eq)
        return bad(ps, "expected key=value, found \"%.60s\"", line);
    *eq = 0;
    const char *key = line, *v = eq + 1;
    if (!strncmp(key, "rank.", 5))
        return get_proc_field(ps, d, key, v);
#define STR(k) if (!strcmp(key, #k)) return get_str(ps, key, v, d->k, sizeof d->k)
#define INT(k, lo, hi) if (!strcmp(key, #k)) return get_int(ps, key, v, lo, hi, &d->k)
    INT(version, 1, MAYA_RUN_DESC_VERSION);
    STR(launcher);
    STR(gpu);
    INT(gpu_count, 1, 1000000);
    STR(cluster);
    INT(gpus_per_node, 1, 1024);
    INT(nodes, 1, 1000000);
    STR(command);
    STR(workdir);
    STR(start_time);
    STR(end_time);
    STR(iteration_marker);
    INT(iterations, 1, 1000000);
    STR(estimator);
    STR(oracle);
    STR(cause);
    STR(launcher_host);
#undef STR
    if (!strcmp(key, "state")) {
        if (strcmp(v, "running") && strcmp(v, "ended"))
            return bad(ps, "state=\"%s\": expected running or ended", v);
        snprintf(d->state, sizeof d->state, "%s", v);
        return 0;
    }
    if (!strcmp(key, "launcher_pid")) {
        int x = 0;
        if (get_int(ps, key, v, 1, 1 << 30, &x) < 0)
            return -1;
        d->launcher_pid = x;
        return 0;
    }
#undef INT
    if (!strcmp(key, "nprocs")) {
        int n = 0;
        if (get_int(ps, key, v, 0, MAYA_RUN_MAX_PROCS, &n) < 0)
            return -1;
        *declared_nprocs = n;
        return n > d->nprocs ? maya_run_desc_set_nprocs(d, n) : 0;
    }
    if (!strcmp(key, "wall_s")) {
        if (maya_parse_double(v, &d->wall_s) < 0 || d->wall_s < 0)
            return bad(ps, "wall_s=\"%s\": expected seconds (a number >= 0)", v);
        return 0;
    }
    return bad(ps, "unknown key \"%s\"; keys: version, launcher, gpu, gpu_count, cluster, "
               "gpus_per_node, nodes, nprocs, command, workdir, start_time, end_time, wall_s, "
               "iteration_marker, iterations, estimator, oracle, state, launcher_pid, launcher_host, cause, "
               "rank.N.{exit,signal,node,local_rank,pid,note}", key);
}

int maya_run_desc_read(const char *path, struct maya_run_desc *d)
{
    char *text;
    if (maya_read_file(path, &text, NULL) < 0)
        return -1;
    maya_run_desc_init(d);
    struct parse ps = { path, 0 };
    int declared = -1, rc = 0;
    char *save = NULL;
    /* strtok_r would skip empty lines and lose the count: walk by hand. */
    for (char *line = text; line && rc == 0; line = save) {
        char *nl = strchr(line, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        ps.line++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[--len] = 0;
        if (!len || line[0] == '#')
            continue;
        rc = parse_line(&ps, d, line, &declared);
    }
    free(text);
    if (rc == 0 && declared < 0)
        rc = maya_error("%s: no nprocs=N line: is this a maya run description?", path);
    if (rc == 0 && d->nprocs > declared)
        rc = maya_error("%s: rank.%d.* given, but nprocs=%d", path, d->nprocs - 1, declared);
    if (rc == 0 && !d->gpu[0])
        rc = maya_error("%s: no gpu=KEY line (the emulated GPU)", path);
    if (rc < 0)
        maya_run_desc_free(d);
    return rc;
}

void maya_run_proc_status(const struct maya_run_proc *p, char *buf, size_t size)
{
    if (p->end == MAYA_RUN_EXITED)
        snprintf(buf, size, "exit %d", p->code);
    else if (p->end == MAYA_RUN_SIGNALED)
        snprintf(buf, size, "signal %d (%s)", p->code, strsignal(p->code));
    else
        snprintf(buf, size, "unknown");
}

int maya_run_proc_ok(const struct maya_run_proc *p)
{
    return p->end == MAYA_RUN_EXITED && p->code == 0;
}

void maya_utc_now(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
