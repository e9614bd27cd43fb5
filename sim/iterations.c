/* Finding the training iterations in a replayed job.
 *
 * With a marker name, each op of that name starts an iteration. Without one,
 * each rank's sequence of op signatures (what stays the same from one
 * iteration to the next: type, name, stream, shapes) is searched for its
 * repeating period: for every signature occurring at least twice, the gaps
 * between its occurrences are compared (length and a rolling hash of the
 * signatures in between); the longest run of identical gaps, by ops covered,
 * gives the iteration's length; the region with that period is then widened
 * op by op both ways (the anchor may be the loop's last op) and cut into
 * whole periods from its start. A period must hold device work
 * (a kernel, copy or collective) and cover at least a fifth of the rank's ops,
 * so that set-up details (three cudaMallocs in a row) are not taken for a
 * training loop. Grouping positions by signature and comparing gaps costs
 * O(n) for n ops, plus O(log n) per gap for the hash.
 *
 * Iteration k ends when the last of its ops completes (device or host); the
 * job's iteration k ends when it has ended on every rank, and its time is
 * the distance from the end of iteration k-1 (the first one's from the
 * host's start of its first op). The steady state is the median of the
 * iterations after the first, which carries warm-up (allocations,
 * autotuning, first-touch copies).
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <string.h>

#include "maya/common.h"

#define HASH_BASE 0x100000001b3ull

static uint64_t power(uint64_t b, uint64_t e)
{
    uint64_t r = 1;
    for (; e; e >>= 1, b *= b)
        if (e & 1)
            r *= b;
    return r;
}

static uint64_t seg_hash(const uint64_t *H, uint64_t a, uint64_t b)
{
    return H[b] - H[a] * power(HASH_BASE, b - a);
}

struct group {
    uint64_t start, count;   /* positions[start .. start+count) */
};

/* The repeating period of a rank's ops: anchors and length. 0, or -1. */
static int detect_period(struct sim_rank *r)
{
    uint64_t n = r->nops;
    r->niter = 0;
    if (n < 2)
        return 0;
    uint64_t *H = malloc((n + 1) * sizeof *H);
    uint64_t *pos = malloc(n * sizeof *pos);
    uint32_t *dev = malloc((n + 1) * sizeof *dev); /* device ops before position i */
    struct maya_map count = { 0 };
    struct group *groups = NULL;
    uint64_t ngroups = 0, capgroups = 0;
    int rc = -1;
    if (!H || !pos || !dev)
        goto out;
    H[0] = 0;
    dev[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        H[i + 1] = H[i] * HASH_BASE + r->ops[i].sig + 1;
        uint8_t k = r->ops[i].kind;
        dev[i + 1] = dev[i] + (k == SK_KERNEL || k == SK_COPY || k == SK_COLL || k == SK_P2P);
        uint64_t *c = maya_map_put(&count, r->ops[i].sig, 0, NULL);
        if (!c)
            goto out;
        ++*c;
    }
    /* counting sort of positions by signature: each map value becomes its
     * group's write cursor */
    uint64_t off = 0;
    for (size_t s = 0; s < count.cap; s++) {
        struct maya_map_slot *sl = &count.slots[s];
        if (!sl->used)
            continue;
        if (SIM_GROW(groups, capgroups, ngroups + 1) < 0)
            goto out;
        groups[ngroups++] = (struct group){ off, sl->value };
        uint64_t c = sl->value;
        sl->value = off;
        off += c;
    }
    for (uint64_t i = 0; i < n; i++)
        pos[(*maya_map_get(&count, r->ops[i].sig, 0))++] = i;

    uint64_t best_cover = 0, best_start = 0, best_len = 0, best_iters = 0;
    for (uint64_t g = 0; g < ngroups; g++) {
        const uint64_t *p = pos + groups[g].start;
        uint64_t c = groups[g].count;
        if (c < 2)
            continue;
        uint64_t a = 0; /* first segment of the current run */
        for (uint64_t k = 0; k + 1 < c; k++) {
            uint64_t len = p[k + 1] - p[k];
            uint64_t h = seg_hash(H, p[k], p[k + 1]);
            /* does the run go on after segment k? */
            int more = k + 2 < c && p[k + 2] - p[k + 1] == len && seg_hash(H, p[k + 1], p[k + 2]) == h;
            if (more)
                continue;
            uint64_t segs = k - a + 1;
            /* the occurrence that ends the run may start one more whole period */
            uint64_t last = p[k + 1];
            int tail = last + len <= n && seg_hash(H, last, last + len) == h;
            uint64_t iters = segs + (uint64_t)tail;
            uint64_t cover = iters * len;
            int device_work = dev[p[a] + len] > dev[p[a]];
            if (iters >= 2 && device_work && cover * 5 >= n && (cover > best_cover || (cover == best_cover && p[a] < best_start) ||
                               (cover == best_cover && p[a] == best_start && len < best_len))) {
                best_cover = cover;
                best_start = p[a];
                best_len = len;
                best_iters = iters;
            }
            a = k + 1;
        }
    }
    if (best_iters >= 2) {
        /* The anchor may sit anywhere in the loop body (a sync at its end):
         * widen the periodic region [a, b) op by op both ways, then cut it
         * into whole periods from its start. */
        uint64_t a = best_start, b = best_start + best_iters * best_len;
        while (a > 0 && r->ops[a - 1].sig == r->ops[a - 1 + best_len].sig)
            a--;
        while (b < n && r->ops[b].sig == r->ops[b - best_len].sig)
            b++;
        best_start = a;
        best_iters = (b - a) / best_len;
        r->iter_start = malloc(best_iters * sizeof *r->iter_start);
        r->iter_stop = malloc(best_iters * sizeof *r->iter_stop);
        if (!r->iter_start || !r->iter_stop)
            goto out;
        for (uint64_t k = 0; k < best_iters; k++) {
            r->iter_start[k] = best_start + k * best_len;
            r->iter_stop[k] = r->iter_start[k] + best_len;
        }
        r->niter = (int)MAYA_MIN(best_iters, (uint64_t)INT32_MAX);
    }
    rc = 0;
out:
    if (rc < 0)
        maya_error("out of memory finding iterations");
    free(H);
    free(pos);
    free(dev);
    free(groups);
    maya_map_free(&count);
    return rc;
}

/* Iterations start at each op named marker. */
static int marker_iterations(struct sim_rank *r, uint32_t marker)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < r->nops; i++)
        k += r->ops[i].name == marker;
    r->niter = 0;
    if (!k)
        return 0;
    r->iter_start = malloc(k * sizeof *r->iter_start);
    r->iter_stop = malloc(k * sizeof *r->iter_stop);
    if (!r->iter_start || !r->iter_stop)
        return maya_error("out of memory finding iterations");
    for (uint64_t i = 0; i < r->nops; i++)
        if (r->ops[i].name == marker) {
            if (r->niter)
                r->iter_stop[r->niter - 1] = i;
            r->iter_start[r->niter++] = i;
        }
    r->iter_stop[r->niter - 1] = r->nops;
    return 0;
}

/* When the ops [a, b) of a rank are all done. */
static uint64_t ops_end(const struct sim_rank *r, uint64_t a, uint64_t b)
{
    uint64_t t = 0;
    for (uint64_t i = a; i < b; i++)
        t = MAYA_MAX(t, MAYA_MAX(r->times[i].host_end, r->times[i].dev_end));
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int sim_find_iterations(struct sim_job *j)
{
    uint32_t marker = 0;
    if (j->marker[0]) {
        for (uint32_t i = 0; i < j->nnames && !marker; i++)
            if (!strcmp(j->names[i], j->marker))
                marker = i + 1;
        if (!marker)
            return maya_error("iteration marker \"%s\" matches no op, kernel, API call or marker name "
                              "in the job", j->marker);
    }
    int K = -1;
    j->makespan = 0;
    for (int i = 0; i < j->nranks; i++) {
        struct sim_rank *r = &j->ranks[i];
        j->makespan = MAYA_MAX(j->makespan, r->done_at);
        if (!r->nops)
            continue;
        if ((marker ? marker_iterations(r, marker) : detect_period(r)) < 0)
            return -1;
        if (!r->niter) {
            /* no repetition here: the whole run is one iteration */
            r->iter_start = malloc(sizeof *r->iter_start);
            r->iter_stop = malloc(sizeof *r->iter_stop);
            if (!r->iter_start || !r->iter_stop)
                return maya_error("out of memory finding iterations");
            r->iter_start[0] = 0;
            r->iter_stop[0] = r->nops;
            r->niter = 1;
        }
        K = K < 0 ? r->niter : MAYA_MIN(K, r->niter);
    }
    if (K < 1)
        K = 1;
    j->iterations_found = K;
    if (j->keep_iterations > 0 && K > j->keep_iterations)
        K = j->keep_iterations; /* later iterations stay simulated but are not reported */
    free(j->iter_end);
    free(j->iter_times_s);
    j->iter_end = calloc((size_t)K, sizeof *j->iter_end);
    j->iter_times_s = calloc((size_t)K, sizeof *j->iter_times_s);
    if (!j->iter_end || !j->iter_times_s)
        return maya_error("out of memory finding iterations");
    j->niter = K;
    j->iter_t0 = UINT64_MAX;
    for (int i = 0; i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (!r->nops)
            continue;
        const struct sim_op *first = &r->ops[r->iter_start[0]];
        const struct sim_time *ft = &r->times[r->iter_start[0]];
        j->iter_t0 = MAYA_MIN(j->iter_t0, ft->host_end - first->host_ns);
        for (int k = 0; k < K; k++)
            j->iter_end[k] = MAYA_MAX(j->iter_end[k], ops_end(r, r->iter_start[k], r->iter_stop[k]));
    }
    if (j->iter_t0 == UINT64_MAX)
        j->iter_t0 = 0;
    for (int k = 0; k < K; k++) {
        uint64_t from = k ? j->iter_end[k - 1] : j->iter_t0;
        j->iter_times_s[k] = j->iter_end[k] > from ? (double)(j->iter_end[k] - from) / 1e9 : 0;
    }
    return 0;
}

int sim_iteration_ops(const struct sim_job *j, int rank, int k, uint64_t *first, uint64_t *end)
{
    for (int i = 0; i < j->nranks; i++) {
        if (j->ranks[i].rank != rank)
            continue;
        const struct sim_rank *r = SIM_REPLAYED(j, &j->ranks[i]);
        if (k < 0 || k >= r->niter || k >= j->niter)
            return -1;
        *first = r->iter_start[k];
        *end = r->iter_stop[k];
        return 0;
    }
    return -1;
}

const double *sim_iteration_times(const struct sim_job *j, int *n)
{
    *n = j->niter;
    return j->iter_times_s;
}

double sim_steady_iteration_s(const struct sim_job *j)
{
    if (j->niter <= 0)
        return 0;
    if (j->niter == 1)
        return j->iter_times_s[0];
    int n = j->niter - 1;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return j->iter_times_s[1];
    memcpy(v, j->iter_times_s + 1, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}
