/* Oracle durations from a maya profile: every measured op of the profile
 * keyed by (rank, name, nth), and a lookup that numbers the asking trace's
 * ops the same way as they come. Sequence numbers cannot be the key: a
 * profile records only the calls the profiler traces, an emulated trace
 * every call, so the same launch has different seqs in the two.
 *
 * Load: O(ops of the profile); lookup: O(1) (two hash probes). */
#include <stdlib.h>
#include <string.h>

#include "est_profile.h"
#include "maya/common.h"
#include "maya/map.h"

struct est_measured {
    struct maya_map index;       /* (name key, nth) -> entry + 1 */
    struct maya_map counts;      /* load: (name key, 0) -> ops of that name so far */
    struct maya_map seen;        /* lookup: (name key, 0) -> nth of the last op, (name key, 1) -> its seq + 1 */
    int64_t *dev, *host;
    size_t n, cap;
};

static int add(const struct est_profile_op *p, void *arg)
{
    struct est_measured *m = arg;
    uint64_t key = est_name_hash(p->name, p->op.rank);
    uint64_t *count = maya_map_put(&m->counts, key, 0, NULL);
    if (!count)
        return maya_error("out of memory");
    uint64_t nth = ++*count;
    if (!p->measured && !p->host_known)
        return 0;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        int64_t *d = realloc(m->dev, cap * sizeof *d), *h = d ? realloc(m->host, cap * sizeof *h) : NULL;
        if (d)
            m->dev = d;
        if (!d || !h)
            return maya_error("out of memory");
        m->host = h;
        m->cap = cap;
    }
    uint64_t *v = maya_map_put(&m->index, key, nth, NULL);
    if (!v)
        return maya_error("out of memory");
    m->dev[m->n] = p->measured ? (int64_t)p->device_ns : -1;
    m->host[m->n] = p->host_known ? (int64_t)p->host_ns : -1;
    *v = ++m->n;
    return 0;
}

int est_measured_load(const char *dir, struct est_measured **out)
{
    struct est_measured *m = calloc(1, sizeof *m);
    if (!m)
        return maya_error("out of memory");
    if (est_profile_walk(dir, add, m, NULL, 0) < 0) {
        est_measured_free(m);
        return -1;
    }
    maya_map_free(&m->counts);
    *out = m;
    return 0;
}

void est_measured_free(struct est_measured *m)
{
    if (!m)
        return;
    maya_map_free(&m->index);
    maya_map_free(&m->counts);
    maya_map_free(&m->seen);
    free(m->dev);
    free(m->host);
    free(m);
}

int est_measured_lookup(struct est_measured *m, const struct est_op *op, int64_t *dev_ns, int64_t *host_ns)
{
    *dev_ns = *host_ns = -1;
    if (!op->rec || !maya_rec_is_call(op->rec->type))
        return 0;
    uint64_t seq = ((const struct maya_rec_call *)op->rec)->call.seq;
    uint64_t key = est_name_hash(op->kernel_name ? op->kernel_name : op->api, op->rank);
    uint64_t *nth = maya_map_put(&m->seen, key, 0, NULL);
    uint64_t *last = nth ? maya_map_put(&m->seen, key, 1, NULL) : NULL;
    if (!nth || !last)
        return maya_error("out of memory");
    nth = maya_map_get(&m->seen, key, 0); /* the second put may have moved it */
    if (*last == 0 || seq + 1 > *last) {
        ++*nth;
        *last = seq + 1;
    } else if (seq + 1 < *last) {
        return 0; /* asked out of trace order: no answer rather than a wrong one */
    }
    uint64_t *v = maya_map_get(&m->index, key, *nth);
    if (v) {
        *dev_ns = m->dev[*v - 1];
        *host_ns = m->host[*v - 1];
    }
    return 0;
}
