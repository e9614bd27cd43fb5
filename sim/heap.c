/* The simulator's event queue: a binary min-heap keyed by (time, sequence).
 *
 * push and pop cost O(log n) for n pending events; n stays small (about one
 * event per busy host, stream and transfer), so the heap lives in cache. The
 * sequence number makes equal times come out in the order they were pushed,
 * so a replay is deterministic.
 */
#include "sim_internal.h"

static inline int before(const struct sim_heap_ev *a, const struct sim_heap_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int sim_heap_push(struct sim_heap *h, uint64_t t, uint32_t type, uint32_t id, uint32_t version)
{
    if (SIM_GROW(h->v, h->cap, h->n + 1) < 0)
        return -1;
    struct sim_heap_ev e = { t, h->seq++, type, id, version, 0 };
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &h->v[parent]))
            break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = e;
    return 0;
}

int sim_heap_pop(struct sim_heap *h, struct sim_heap_ev *out)
{
    if (h->n == 0)
        return 0;
    *out = h->v[0];
    struct sim_heap_ev last = h->v[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!before(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n)
        h->v[i] = last;
    return 1;
}

void sim_heap_free(struct sim_heap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}
