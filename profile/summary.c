/* What a profile measured: device time per op name (kernel, or library call
 * for GEMMs, copies and collectives) over every rank, into DIR/profile.txt
 * and, shortened, for the terminal. */
#define _GNU_SOURCE
#include "profile.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/map.h"
#include "maya/trace_reader.h"

struct entry {
    uint32_t name;
    uint64_t count, total_ns, min_ns, max_ns;
};

struct summary {
    struct profile_names names;
    struct entry *e;             /* by name id - 1 */
    size_t cap;
    uint64_t device_ops, measured, ranks;
    char gpu[64];
};

static int is_device_op(uint16_t type)
{
    return type == MAYA_REC_LAUNCH || type == MAYA_REC_MEMCPY || type == MAYA_REC_MEMSET ||
           type == MAYA_REC_GEMM || type == MAYA_REC_DNN || type == MAYA_REC_COLL;
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint32_t profile_name_id(struct profile_names *t, const char *name)
{
    uint64_t h = hash_name(name), k2 = 0;
    /* names whose hashes collide take the next probe number */
    for (uint64_t *v; (v = maya_map_get(&t->index, h, k2)); k2++)
        if (!strcmp(t->names[*v - 1], name))
            return (uint32_t)*v;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **n = realloc(t->names, cap * sizeof *n);
        if (!n)
            return 0;
        t->names = n;
        t->cap = cap;
    }
    char *copy = strdup(name);
    uint64_t *v = copy ? maya_map_put(&t->index, h, k2, NULL) : NULL;
    if (!v) {
        free(copy);
        return 0;
    }
    t->names[t->n++] = copy;
    *v = t->n;
    return (uint32_t)t->n;
}

const char *profile_name(const struct profile_names *t, uint32_t id)
{
    return id >= 1 && id <= t->n ? t->names[id - 1] : "?";
}

void profile_names_free(struct profile_names *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    maya_map_free(&t->index);
    memset(t, 0, sizeof *t);
}

static int add(struct summary *s, const char *name, uint64_t ns)
{
    uint32_t id = profile_name_id(&s->names, name);
    if (!id)
        return maya_error("out of memory");
    if (id > s->cap) {
        size_t cap = MAYA_MAX(s->cap * 2, (size_t)id);
        struct entry *n = realloc(s->e, cap * sizeof *n);
        if (!n)
            return maya_error("out of memory");
        memset(n + s->cap, 0, (cap - s->cap) * sizeof *n);
        s->e = n;
        s->cap = cap;
    }
    struct entry *x = &s->e[id - 1];
    if (!x->count)
        *x = (struct entry){ id, 0, 0, ns, ns };
    x->count++;
    x->total_ns += ns;
    x->min_ns = MAYA_MIN(x->min_ns, ns);
    x->max_ns = MAYA_MAX(x->max_ns, ns);
    return 0;
}

static int take(const struct est_profile_op *p, void *arg)
{
    struct summary *s = arg;
    const struct maya_rec_hdr *h = p->op.rec;
    if (!s->ranks || p->op.rank + 1 > (int)s->ranks)
        s->ranks = (uint64_t)p->op.rank + 1;
    if (!is_device_op(h->type) || maya_rec_call(h)->result != 0 || (h->flags & MAYA_F_CAPTURING))
        return 0;
    s->device_ops++;
    if (!p->measured)
        return 0;
    s->measured++;
    return add(s, p->name, p->device_ns);
}

static int by_total(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : (x->name > y->name) - (x->name < y->name);
}

void profile_print_name(FILE *fp, const char *name, size_t max)
{
    size_t n = strlen(name);
    if (max && n > max)
        fprintf(fp, "%.*s...\n", (int)(max - 3), name);
    else
        fprintf(fp, "%s\n", name);
}

static void line(FILE *fp, const struct summary *s, const struct entry *x, size_t max)
{
    fprintf(fp, "%8" PRIu64 " %12.1f %10.2f %10.2f %10.2f  ", x->count, x->total_ns / 1e3,
            x->total_ns / 1e3 / (double)x->count, x->min_ns / 1e3, x->max_ns / 1e3);
    profile_print_name(fp, profile_name(&s->names, x->name), max);
}

int profile_summary(const char *dir, FILE *fp)
{
    struct summary s;
    memset(&s, 0, sizeof s);
    char path[PATH_MAX + 64];
    int rc = est_profile_walk(dir, take, &s, s.gpu, sizeof s.gpu);
    uint64_t total = 0;
    size_t n = 0;
    for (size_t i = 0; i < s.cap; i++)
        if (s.e[i].count) {
            total += s.e[i].total_ns;
            s.e[n++] = s.e[i];
        }
    if (rc == 0) {
        qsort(s.e, n, sizeof *s.e, by_total);
        struct maya_atomic_file af;
        snprintf(path, sizeof path, "%s/profile.txt", dir);
        if (maya_atomic_open(&af, path) < 0) {
            rc = -1;
        } else {
            fprintf(af.fp, "# maya profile: measured device time per op name, all ranks (docs/run-dir.md)\n"
                           "# gpu=%s ranks=%" PRIu64 " device_ops=%" PRIu64 " measured=%" PRIu64
                           " measured_total_us=%.1f\n"
                           "#  count     total_us    mean_us     min_us     max_us  name\n",
                    s.gpu, s.ranks, s.device_ops, s.measured, total / 1e3);
            for (size_t i = 0; i < n; i++)
                line(af.fp, &s, &s.e[i], 0);
            rc = maya_atomic_commit(&af);
        }
    }
    if (rc == 0 && fp) {
        fprintf(fp, "maya profile: %" PRIu64 " of %" PRIu64 " device ops measured on %" PRIu64 " rank%s (%s), "
                    "%.1f us of device time; the most:\n", s.measured, s.device_ops, s.ranks,
                s.ranks == 1 ? "" : "s", s.gpu, total / 1e3);
        fprintf(fp, "   count     total_us    mean_us     min_us     max_us  name\n");
        for (size_t i = 0; i < n && i < 8; i++)
            line(fp, &s, &s.e[i], PROFILE_NAME_WIDTH);
        fprintf(fp, "maya profile: every op in %s/profile.txt; the trace: maya trace dump %s/traces/rank-0.mtrace\n",
                dir, dir);
    }
    free(s.e);
    profile_names_free(&s.names);
    return rc;
}
