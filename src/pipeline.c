/* The report pipeline on a run directory (shared by maya run and maya report). */
#define _GNU_SOURCE
#include "pipeline.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maya/common.h"

int pipeline_parse_option(struct pipeline_opts *o, const char *name, const char *value)
{
    if (!strcmp(name, "--iteration-marker")) {
        if (!value || !*value)
            return maya_error("--iteration-marker: expected the name of an op, kernel or API");
        o->iteration_marker = value;
    } else if (!strcmp(name, "--estimator")) {
        if (!value || !*value)
            return maya_error("--estimator: expected MODEL or FAMILY=MODEL,...");
        o->estimator = value;
    } else if (!strcmp(name, "--oracle")) {
        if (!value || !*value)
            return maya_error("--oracle: expected a file of measured durations");
        o->oracle = value;
    } else {
        return 0;
    }
    return 1;
}

int pipeline_check_options(const struct pipeline_opts *o)
{
    if (o->oracle && access(o->oracle, R_OK) != 0)
        return maya_error("--oracle %s: cannot read it: %m", o->oracle);
    return 0;
}

void pipeline_opts_to_desc(const struct pipeline_opts *o, struct maya_run_desc *d)
{
    if (o->iteration_marker)
        snprintf(d->iteration_marker, sizeof d->iteration_marker, "%s", o->iteration_marker);
    if (o->estimator)
        snprintf(d->estimator, sizeof d->estimator, "%s", o->estimator);
    if (o->oracle && !realpath(o->oracle, d->oracle))
        snprintf(d->oracle, sizeof d->oracle, "%s", o->oracle);
}

/* The last lines of a file (at most max_bytes), into a malloc'd string. */
static char *file_tail(const char *path, size_t max_bytes, int max_lines)
{
    char *data;
    size_t len;
    if (access(path, R_OK) != 0 || maya_read_file(path, &data, &len) < 0)
        return NULL;
    while (len && data[len - 1] == '\n')
        data[--len] = 0;
    size_t start = len > max_bytes ? len - max_bytes : 0;
    int lines = 0;
    for (size_t i = len; i > start; i--)
        if (data[i - 1] == '\n' && ++lines >= max_lines) {
            start = i;
            break;
        }
    memmove(data, data + start, len - start + 1);
    return data;
}

int pipeline_run(const char *dir, const struct pipeline_opts *o)
{
    struct maya_run_desc d;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_DESC_FILE);
    if (maya_run_desc_read(path, &d) < 0)
        return -1;
    int failed = 0;
    for (int i = 0; i < d.nprocs; i++) {
        const struct maya_run_proc *p = &d.procs[i];
        if (maya_run_proc_ok(p) || p->note[0])
            continue;
        char st[64];
        maya_run_proc_status(p, st, sizeof st);
        snprintf(path, sizeof path, "%s/logs/rank-%d.err", dir, i);
        char *tail = file_tail(path, 2048, 10);
        fprintf(stderr, "maya: rank %d failed (%s); %s ends with:\n%s\n", i, st, path,
                tail ? tail : "(nothing)");
        free(tail);
        failed++;
    }
    snprintf(path, sizeof path, "%s/traces", dir);
    DIR *dp = opendir(path);
    int traces = 0;
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp)))
            if (strlen(e->d_name) > 7 && !strcmp(e->d_name + strlen(e->d_name) - 7, ".mtrace"))
                traces++;
        closedir(dp);
    }
    if (!o->quiet)
        fprintf(stderr, "maya: %d trace%s in %s/traces\n", traces, traces == 1 ? "" : "s", dir);
    maya_run_desc_free(&d);
    return traces > 0 ? 0 : maya_error("%s/traces holds no trace: did the workload use CUDA?", dir);
}
