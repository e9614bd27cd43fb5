/* Reading a maya profile directory (DIR/traces/rank-N.mtrace, recorded on real
 * GPUs by maya profile): every call of every rank as the estimator sees an
 * op, with what was measured of it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "est_profile.h"
#include "maya/common.h"
#include "maya/trace_reader.h"

static int walk_trace(const char *path, est_profile_fn fn, void *arg, char *gpu, size_t gpu_size)
{
    struct maya_trace_reader *r;
    if (maya_trace_open(path, &r) < 0)
        return -1;
    maya_trace_allow_truncated(r, 1);
    const struct maya_trace_header *hd = maya_trace_header(r);
    if (!(hd->flags & MAYA_TRACE_F_PASSTHROUGH)) {
        maya_trace_close(r);
        return maya_error("%s was not recorded by maya profile (its header has no passthrough flag): "
                          "expected a profile directory", path);
    }
    if (gpu && gpu_size) {
        if (gpu[0] && strcmp(gpu, hd->gpu)) {
            maya_trace_close(r);
            return maya_error("%s was recorded on %s, other traces of the profile on %s", path, hd->gpu, gpu);
        }
        snprintf(gpu, gpu_size, "%s", hd->gpu);
    }
    if (!fn) {
        maya_trace_close(r);
        return 0;
    }
    const struct maya_rec_hdr *h;
    int rc;
    while ((rc = maya_trace_next(r, &h)) == 1) {
        if (!maya_rec_is_call(h->type))
            continue;
        const struct maya_call *c = maya_rec_call(h);
        struct est_profile_op p;
        memset(&p, 0, sizeof p);
        p.op.rec = h;
        p.op.rank = hd->rank < 0 ? 0 : hd->rank;
        p.op.api = maya_trace_string(r, c->api);
        if (h->type == MAYA_REC_LAUNCH) {
            p.op.kernel = maya_trace_kernel(r, ((const struct maya_rec_launch *)h)->kernel);
            p.op.kernel_name = p.op.kernel ? maya_trace_string(r, p.op.kernel->name) : NULL;
        }
        if (h->type == MAYA_REC_COLL) {
            /* maya profile runs on one machine: every member on one node */
            const struct maya_rec_coll *k = (const void *)h;
            p.op.coll_nodes = 1;
            p.op.coll_ranks_per_node = k->op == MAYA_COLL_SEND || k->op == MAYA_COLL_RECV ? 2 : k->nranks;
        }
        p.name = p.op.kernel_name ? p.op.kernel_name : p.op.api;
        p.measured = (h->flags & MAYA_F_MEASURED) != 0 && c->result == 0;
        p.device_ns = c->measured_ns;
        /* The call's own host time, where it did not wait for the device. */
        /* (a graph's nodes carry their launch's times, not their own) */
        p.host_known = c->result == 0 && h->type != MAYA_REC_SYNC &&
                       !(h->flags & (MAYA_F_HOST_WAITS | MAYA_F_DEVICE_SYNC | MAYA_F_FROM_GRAPH)) &&
                       c->t_exit_ns >= c->t_enter_ns;
        p.host_ns = p.host_known ? c->t_exit_ns - c->t_enter_ns : 0;
        if ((rc = fn(&p, arg)) < 0)
            break;
    }
    maya_trace_close(r);
    return rc < 0 ? -1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int est_profile_walk(const char *dir, est_profile_fn fn, void *arg, char *gpu, size_t gpu_size)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/traces", dir);
    DIR *d = opendir(path);
    if (!d)
        return maya_error("%s: cannot open it (%m): expected a profile directory made by maya profile", path);
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 7, ".mtrace"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = maya_error("out of memory");
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = maya_error("out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (rc == 0 && !n)
        rc = maya_error("%s holds no trace (rank-N.mtrace): expected a profile directory made by maya profile", path);
    qsort(names, n, sizeof *names, cmp_str); /* the same order every time */
    if (gpu && gpu_size)
        gpu[0] = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/traces/%s", dir, names[i]);
        rc = walk_trace(path, fn, arg, gpu, gpu_size);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

uint64_t est_name_hash(const char *s, int rank)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= (uint64_t)(uint32_t)rank * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}
