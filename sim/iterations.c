/* Finding the training iterations in a replayed job.
 *
 * With a marker (--iteration-marker), each op it matches starts an
 * iteration (marker_iterations below): an NVTX range (push or start; the
 * iteration then ends with the range's pop or end), an NVTX mark, a kernel
 * or an API call, by whole name, by a kernel's short name (its qualified
 * name without return type, template arguments and parameters, or just its
 * last component), or by a glob over any of these ("Train step*",
 * "*adamw*").
 *
 * Without one, each rank's sequence of op shapes (what stays the same from
 * one iteration to the next: type, name, stream; not sizes, which may vary
 * a little between steps, as llm.c's uploads do; NVTX names with their
 * numbers left out, "Train step 7" as "Train step ") is searched for its
 * repeating period. Only the ops that make a step's structure count:
 * device work, stream and event ordering, synchronisation, NVTX markers;
 * host-only calls (cudaGetDevice, pointer and capture queries, event
 * queries, allocations) do not, because how many a step makes varies with
 * the framework's caches (torchtitan's steps differ by a few
 * cudaGetDevice calls); an iteration holds the host-only calls that follow
 * its ops up to the next iteration's first. For every shape occurring at
 * least twice, the gaps from each occurrence to the L-th next (L =
 * 1..MAX_LAG: a step may hold a shape several times, once per micro-batch
 * or parameter tensor, and no shape once) are compared (length and a
 * rolling hash of the shapes in between); a run of identical gaps is a
 * candidate loop. A period must hold device work (a kernel, copy or
 * collective) and the region must span at least a fifth of the rank's
 * ops (all of them) from its start to its end: a training loop runs to
 * the end, while set-up details do not. Among those, the loop whose
 * period holds the most kinds of device work (distinct shapes) wins, then
 * the one covering the most ops: a training step runs the whole model's kernels,
 * its optimizer's and its collectives, while a warm-up's benchmark loop
 * (torch.compile's autotuning: thousands of launches before the loop, each
 * candidate kernel timed between events after a cache-clearing memset)
 * repeats one kernel at a time, however long it runs. The winner's period
 * is cut to the shortest that repeats over the whole region (a lag may span
 * two steps); the region is then widened op by op both ways (the anchor may
 * sit anywhere in the step) and cut into whole periods back from its end
 * when the rank's trace is complete (the program finished its last step
 * where the loop ends; what comes before the first cut, a step that did
 * not repeat whole, is warm-up), unless the loop's last op is no host wait
 * and the cut from its start falls after one (what followed the loop began
 * as a step does); otherwise from its start, and when the trace ended
 * early its last iteration is the partial one (the ops after the last
 * whole period that repeat its start, if they hold device work). Steps of
 * CUDA graph launches are ops like any other: each launch's ops come in the
 * trace where it was launched. Grouping positions by shape and comparing
 * gaps costs O(n x MAX_LAG) for n structure ops (a gap's hash is O(1)
 * from prefix hashes and a table of powers; 44 bytes a structure op in
 * all, with positions, groups and the map back to the rank's ops);
 * counting a candidate period's kinds costs O(length) with a stamp per
 * shape, only for candidates that could beat the best so far and not
 * already counted in the same region (every window of a period's length
 * there holds the same shapes).
 *
 * Iteration k ends when the last of its ops completes (device or host); the
 * job's iteration k ends when it has ended on every rank, and its time is
 * the distance from the end of iteration k-1 (the first one's from the
 * host's start of its first op). Ops before the first iteration are set-up
 * and warm-up, in no iteration. The steady state is the median of the
 * iterations after the first (which carries warm-up: allocations, first-touch
 * copies, lazy compilation), leaving out partial ones: an iteration with
 * fewer device ops than nine tenths of the rank's median, or the last one
 * of a rank whose trace ended early. With a marker that does not close
 * (a point, a kernel), the last iteration would run to the rank's last op,
 * tear-down included: it is cut to the length of the one before when its
 * ops begin as those did.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <ctype.h>
#include <fnmatch.h>
#include <string.h>

#include "maya/common.h"
#include "maya/trace_format.h"

#define HASH_BASE 0x100000001b3ull

/* The hash of shapes [a, b): H holds prefix hashes, P the powers of the base. */
static uint64_t seg_hash(const uint64_t *H, const uint64_t *P, uint64_t a, uint64_t b)
{
    return H[b] - H[a] * P[b - a];
}

static int is_device_work(const struct sim_op *o)
{
    return o->kind == SK_KERNEL || o->kind == SK_COPY || o->kind == SK_COLL || o->kind == SK_P2P;
}

/* Does the host wait for the device at op o (a synchronize, a synchronous copy)? */
static int host_waits(const struct sim_op *o)
{
    return o->kind == SK_SYNC || (o->flags & SF_HOST_WAITS);
}

/* ---- shapes ---- */

static uint32_t mix(uint32_t h, uint64_t v)
{
    uint64_t x = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x ^ (x >> 29) ^ (x >> 32));
}

/* A name without its digits (FNV-1a), so that "Train step 7" and "Train
 * step 8" are one shape. */
static uint32_t name_shape(const char *s)
{
    uint32_t h = 2166136261u;
    for (; s && *s; s++)
        if (!isdigit((unsigned char)*s))
            h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* What op i looks like from one iteration to the next: the loader's
 * signature without sizes (grid, bytes, GEMM shapes). A send/recv's sub is
 * its estimated latency, a collective's the SMs it holds, not shapes: they
 * vary with the estimator (a profile's measured durations) and the size,
 * and stay out. */
static uint32_t op_shape(const struct sim_job *j, const struct sim_op *o)
{
    uint32_t lane = o->stream ? j->streams[o->stream - 1].lane + 1 : 0;
    uint16_t sub = o->kind == SK_P2P || o->kind == SK_COLL ? 0 : o->sub;
    uint32_t s = mix(mix(mix(0x2545f491u, o->rec_type), lane), (uint64_t)o->kind << 16 | sub);
    if (o->rec_type == MAYA_REC_MARKER)
        return mix(s, name_shape(sim_name(j, o->name)));
    return mix(s, o->name);
}

/* ---- automatic ---- */

struct group {
    uint64_t start, count;   /* positions[start .. start+count) */
};

#define MAX_LAG 8 /* occurrences of a shape per step that can anchor it */

/* Is op o part of a step's structure? Device work, stream and event
 * ordering, synchronisation and NVTX markers are; host-only calls
 * (cudaGetDevice, cuPointerGetAttribute, cudaStreamIsCapturing, event
 * queries, allocations) are not: how many of them a step makes depends on
 * the framework's caches and Python's state (torchtitan's steps differ by
 * a few cudaGetDevice calls), and counting them would break the period. */
static int in_structure(const struct sim_op *o)
{
    return o->kind != SK_HOST || o->rec_type == MAYA_REC_MARKER;
}

/* The kinds of device work (distinct shapes) of a candidate period, with
 * what the last count was for: every window of a period's length inside
 * one periodic region holds the same shapes, so a candidate anchored
 * elsewhere in the same region costs nothing. */
struct kinds_memo {
    uint64_t len, from, to; /* the region [from, to) counted for windows of len */
    uint64_t kinds;
};

/* Distinct shapes of device work in structure ops [a, a+len): O(len), with
 * seen[] (one stamp per group, stamp values never reused). */
static uint64_t device_kinds(const uint32_t *gid, const uint32_t *dev, uint64_t a, uint64_t len, uint64_t *seen,
                             uint64_t *stamp, struct kinds_memo *memo, uint64_t region_end)
{
    if (memo->len == len && a >= memo->from && a + len <= memo->to)
        return memo->kinds;
    uint64_t k = 0;
    ++*stamp;
    for (uint64_t i = a; i < a + len; i++) {
        if (dev[i + 1] == dev[i] || seen[gid[i]] == *stamp)
            continue;
        seen[gid[i]] = *stamp;
        k++;
    }
    *memo = (struct kinds_memo){ len, a, region_end, k };
    return k;
}

/* The repeating period of a rank's structure ops (in_structure), found
 * over them alone and set as anchors and length in the rank's ops. 0, or -1. */
static int detect_period(const struct sim_job *j, struct sim_rank *r)
{
    r->niter = 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < r->nops; i++)
        n += (uint64_t)in_structure(&r->ops[i]);
    if (n < 2)
        return 0;
    uint64_t *at = malloc(n * sizeof *at); /* structure op i is the rank's op at[i] */
    uint64_t *H = malloc((n + 1) * sizeof *H);
    uint64_t *P = malloc((n + 1) * sizeof *P); /* powers of HASH_BASE */
    uint64_t *pos = malloc(n * sizeof *pos);
    uint32_t *dev = malloc((n + 1) * sizeof *dev); /* device ops before position i */
    uint32_t *shape = malloc(n * sizeof *shape);
    uint32_t *gid = malloc(n * sizeof *gid); /* position i's group */
    uint64_t *seen = NULL;
    struct maya_map count = { 0 };
    struct group *groups = NULL;
    uint64_t ngroups = 0, capgroups = 0;
    int rc = -1;
    if (!at || !H || !P || !pos || !dev || !shape || !gid)
        goto out;
    H[0] = 0;
    P[0] = 1;
    dev[0] = 0;
    for (uint64_t i = 0, q = 0; i < r->nops; i++) {
        if (!in_structure(&r->ops[i]))
            continue;
        at[q] = i;
        shape[q] = op_shape(j, &r->ops[i]);
        H[q + 1] = H[q] * HASH_BASE + shape[q] + 1;
        P[q + 1] = P[q] * HASH_BASE;
        dev[q + 1] = dev[q] + (uint32_t)is_device_work(&r->ops[i]);
        uint64_t *c = maya_map_put(&count, shape[q], 0, NULL);
        if (!c)
            goto out;
        ++*c;
        q++;
    }
    /* counting sort of positions by shape: each map value becomes its
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
        pos[(*maya_map_get(&count, shape[i], 0))++] = i;
    for (uint64_t g = 0; g < ngroups; g++)
        for (uint64_t k = 0; k < groups[g].count; k++)
            gid[pos[groups[g].start + k]] = (uint32_t)g;
    seen = calloc(MAYA_MAX(ngroups, 1), sizeof *seen);
    if (!seen)
        goto out;
    uint64_t stamp = 0;
    struct kinds_memo memo = { 0 };

    uint64_t best_kinds = 0, best_cover = 0, best_start = 0, best_len = 0, best_iters = 0;
    for (uint64_t g = 0; g < ngroups; g++) {
        const uint64_t *p = pos + groups[g].start;
        uint64_t c = groups[g].count;
        /* lag L: the segments from each occurrence to the L-th next; a
         * shape that occurs L times per step (once per micro-batch, once
         * per parameter tensor) has steps of equal segments at its lag */
        for (uint64_t L = 1; L <= MAX_LAG && L < c; L++) {
            uint64_t a = 0; /* first segment of the current run */
            for (uint64_t k = 0; k + L < c; k++) {
                uint64_t len = p[k + L] - p[k];
                uint64_t h = seg_hash(H, P, p[k], p[k + L]);
                /* does the run go on after segment k? */
                int more = k + L + 1 < c && p[k + L + 1] - p[k + 1] == len &&
                           seg_hash(H, P, p[k + 1], p[k + L + 1]) == h;
                if (more)
                    continue;
                /* the run spans [p[a], p[k + L]): whole periods from its
                 * start, and one more where the ops after it repeat it */
                uint64_t iters = (p[k + L] - p[a]) / len;
                uint64_t last = p[a] + iters * len;
                int tail = last + len <= n && seg_hash(H, P, last, last + len) == h;
                iters += (uint64_t)tail;
                uint64_t cover = iters * len;
                uint64_t dev_ops = dev[p[a] + len] - dev[p[a]];
                /* a loop that runs to the end: a fifth of the rank's ops that
                 * follow its start (all of them, host-only calls too: two
                 * uploads in a row, with the allocations between them left
                 * out, are no loop of a short program) */
                uint64_t spans = at[p[a] + cover - 1] + 1 - at[p[a]];
                int to_end = spans * 5 >= r->nops - at[p[a]];
                if (iters < 2 || !dev_ops || !to_end)
                    goto next;
                /* a step runs the whole model's kernels, a benchmark loop one
                 * candidate kernel and a cache-clearing memset, repeated: the
                 * period with the most kinds of device work wins, then the one
                 * covering the most ops, so that autotuning's long loops before
                 * training (20 k kernels) do not outweigh the training loop's
                 * few steps. The kinds are at most the period's device ops. */
                if (dev_ops < best_kinds || (dev_ops == best_kinds && cover < best_cover))
                    goto next;
                uint64_t kinds = device_kinds(gid, dev, p[a], len, seen, &stamp, &memo, p[a] + cover);
                if (kinds > best_kinds || (kinds == best_kinds && cover > best_cover) ||
                    (kinds == best_kinds && cover == best_cover && p[a] < best_start) ||
                    (kinds == best_kinds && cover == best_cover && p[a] == best_start && len < best_len)) {
                    best_kinds = kinds;
                    best_cover = cover;
                    best_start = p[a];
                    best_len = len;
                    best_iters = iters;
                }
            next:
                a = k + 1;
            }
        }
    }
    if (best_iters >= 2) {
        /* A period found at a lag above 1 may be a multiple of the step
         * (two steps, at the lag of a shape occurring four times per
         * step): the shortest period that repeats over the whole region
         * and holds device work is the step. O(MAX_LAG x region). */
        uint64_t end = best_start + best_iters * best_len;
        for (uint64_t m = MAX_LAG; m >= 2; m--) {
            uint64_t q = best_len / m, i = best_start;
            if (best_len % m || dev[best_start + q] == dev[best_start])
                continue;
            while (i + q < end && shape[i] == shape[i + q])
                i++;
            if (i + q == end) {
                best_iters *= m;
                best_len = q;
                break;
            }
        }
        /* The anchor may sit anywhere in the loop body (a sync at its end):
         * widen the periodic region [a, b) op by op both ways, then cut it
         * into whole periods from its start. */
        uint64_t a = best_start, b = best_start + best_iters * best_len;
        while (a > 0 && shape[a - 1] == shape[a - 1 + best_len])
            a--;
        while (b < n && shape[b] == shape[b - best_len])
            b++;
        /* The region rarely holds whole periods from its start: the anchor
         * may sit anywhere in the step (torchtitan's steps begin with
         * zero_grad's memsets, found at its graph launch), and what follows
         * the loop may begin as a step does (an evaluation's forward). A
         * program that ran to its end finished its last step where the
         * region ends, unless that op is no host wait and the cut from the
         * region's start falls after one (a step ends reading its loss or
         * synchronising): cut the periods back from the region's end, and
         * the ops before the first cut, the end of a step that did not
         * repeat whole, stay warm-up. Otherwise they are cut from its
         * start. */
        uint64_t rem = (b - a) % best_len;
        if (r->complete && rem && (b - a) / best_len >= 2 &&
            (host_waits(&r->ops[at[b - 1]]) || !host_waits(&r->ops[at[a + best_len - 1]])))
            a += rem;
        best_start = a;
        best_iters = (b - a) / best_len;
        /* in a trace that ended early, what follows the last whole period
         * and repeats its start is the last step cut short: an iteration of
         * its own if it holds device work, which the steady state leaves
         * out as partial; in a complete one it is what came after the loop */
        uint64_t whole = best_start + best_iters * best_len;
        uint64_t niter = best_iters + (uint64_t)(!r->complete && dev[b] > dev[whole]);
        r->iter_start = malloc(niter * sizeof *r->iter_start);
        r->iter_stop = malloc(niter * sizeof *r->iter_stop);
        if (!r->iter_start || !r->iter_stop)
            goto out;
        /* back to the rank's ops: an iteration starts at its first
         * structure op and holds the host-only calls up to the next one's;
         * the last ends with its last structure op (the calls after it are
         * tear-down) */
        for (uint64_t k = 0; k < niter; k++) {
            uint64_t first = best_start + k * best_len, stop = MAYA_MIN(first + best_len, b);
            r->iter_start[k] = at[first];
            r->iter_stop[k] = k + 1 < niter ? at[stop] : at[stop - 1] + 1;
        }
        best_iters = niter;
        r->niter = (int)MAYA_MIN(best_iters, (uint64_t)INT32_MAX);
    }
    rc = 0;
out:
    if (rc < 0)
        maya_error("out of memory finding iterations");
    free(at);
    free(H);
    free(P);
    free(pos);
    free(dev);
    free(shape);
    free(gid);
    free(seen);
    free(groups);
    maya_map_free(&count);
    return rc;
}

/* ---- markers ---- */

static int has_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* A demangled kernel name's qualified name without return type, template
 * arguments and parameters ("void at::native::foo<float, 4>(int, float*)"
 * gives "at::native::foo"), into buf. "(anonymous namespace)" stays. */
static void short_name(const char *name, char *buf, size_t size)
{
    size_t n = 0, last_space = 0;
    int depth = 0;
    for (const char *p = name; *p && n + 1 < size; p++) {
        if (!strncmp(p, "(anonymous namespace)", 21) && depth == 0) {
            size_t k = MAYA_MIN((size_t)21, size - 1 - n);
            memcpy(buf + n, p, k);
            n += k;
            p += 20;
            continue;
        }
        if (*p == '<') {
            depth++;
        } else if (*p == '>') {
            depth -= depth > 0;
        } else if (depth == 0) {
            if (*p == '(')
                break;
            if (*p == ' ') {
                last_space = n + 1; /* a return type or qualifier before */
                buf[n++] = ' ';
            } else {
                buf[n++] = *p;
            }
        }
    }
    buf[n] = 0;
    if (last_space)
        memmove(buf, buf + last_space, n - last_space + 1);
}

/* Does a name match the marker? Exact, or the short name or its last
 * component exactly, or a glob over any of the three. */
static int marker_matches(const char *marker, const char *name)
{
    if (!strcmp(marker, name))
        return 1;
    char s[512];
    short_name(name, s, sizeof s);
    const char *last = s;
    for (const char *p = s; (p = strstr(p, "::")); p += 2)
        last = p + 2;
    if (!has_glob(marker))
        return s[0] && (!strcmp(marker, s) || !strcmp(marker, last));
    return fnmatch(marker, name, 0) == 0 || fnmatch(marker, s, 0) == 0 || fnmatch(marker, last, 0) == 0;
}

/* The job's names the marker matches: matched[id - 1]. How many, or -1. */
static long match_names(const struct sim_job *j, const char *marker, uint8_t **matched)
{
    *matched = calloc(MAYA_MAX(j->nnames, 1), 1);
    if (!*matched)
        return maya_error("out of memory finding iterations");
    long k = 0;
    for (uint32_t i = 0; i < j->nnames; i++)
        if (marker_matches(marker, j->names[i]))
            (*matched)[i] = 1, k++;
    return k;
}

static int starts(const struct sim_op *o)
{
    return o->rec_type != MAYA_REC_MARKER || o->sub == MAYA_MARK_PUSH || o->sub == MAYA_MARK_START ||
           o->sub == MAYA_MARK_POINT;
}

static int ends(const struct sim_op *o)
{
    return o->rec_type == MAYA_REC_MARKER && (o->sub == MAYA_MARK_POP || o->sub == MAYA_MARK_END);
}

/* Iterations start at each op the marker matches (ranges: their outermost
 * push or start) and end at the next start, or at the range's pop or end. */
static int marker_iterations(const struct sim_job *j, struct sim_rank *r, const uint8_t *matched)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < r->nops; i++)
        k += matched[r->ops[i].name - 1] && starts(&r->ops[i]);
    r->niter = 0;
    if (!k)
        return 0;
    r->iter_start = malloc(k * sizeof *r->iter_start);
    r->iter_stop = malloc(k * sizeof *r->iter_stop);
    if (!r->iter_start || !r->iter_stop)
        return maya_error("out of memory finding iterations");
    int depth = 0, open = 0; /* open: the last iteration has not ended */
    for (uint64_t i = 0; i < r->nops; i++) {
        const struct sim_op *o = &r->ops[i];
        if (!matched[o->name - 1])
            continue;
        if (ends(o)) {
            if (depth > 0 && --depth == 0 && open) {
                r->iter_stop[r->niter - 1] = i + 1;
                open = 0;
            }
            continue;
        }
        int range = o->rec_type == MAYA_REC_MARKER && o->sub != MAYA_MARK_POINT;
        if (range && depth++ > 0)
            continue; /* nested in a range of the same name */
        if (open)
            r->iter_stop[r->niter - 1] = i;
        r->iter_start[r->niter++] = i;
        open = 1;
    }
    if (open) {
        /* runs to the rank's last op: cut off a tear-down that follows ops
         * shaped as the iteration before's */
        int n = r->niter;
        r->iter_stop[n - 1] = r->nops;
        if (n >= 2) {
            uint64_t a = r->iter_start[n - 1], len = r->iter_stop[n - 2] - r->iter_start[n - 2];
            int same = a + len <= r->nops && len > 0;
            for (uint64_t i = 0; same && i < len; i++)
                same = op_shape(j, &r->ops[a + i]) == op_shape(j, &r->ops[r->iter_start[n - 2] + i]);
            if (same)
                r->iter_stop[n - 1] = a + len;
        }
    }
    return 0;
}

/* ---- the job's iterations ---- */

/* When the ops [a, b) of a rank are all done. */
static uint64_t ops_end(const struct sim_rank *r, uint64_t a, uint64_t b)
{
    uint64_t t = 0;
    for (uint64_t i = a; i < b; i++)
        t = MAYA_MAX(t, MAYA_MAX(r->times[i].host_end, r->times[i].dev_end));
    return t;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t device_ops(const struct sim_rank *r, uint64_t a, uint64_t b)
{
    uint64_t k = 0;
    for (uint64_t i = a; i < b; i++)
        k += (uint64_t)is_device_work(&r->ops[i]);
    return k;
}

/* Mark the job's iterations that are partial on this rank (of its first K). */
static int mark_partial(const struct sim_rank *r, int K, uint8_t *partial)
{
    uint64_t *v = malloc((size_t)K * sizeof *v), *sorted = malloc((size_t)K * sizeof *sorted);
    if (!v || !sorted) {
        free(v);
        free(sorted);
        return maya_error("out of memory finding iterations");
    }
    for (int k = 0; k < K; k++)
        sorted[k] = v[k] = device_ops(r, r->iter_start[k], r->iter_stop[k]);
    qsort(sorted, (size_t)K, sizeof *sorted, cmp_u64);
    uint64_t median = sorted[K / 2];
    for (int k = 0; k < K; k++)
        if (v[k] * 10 < median * 9)
            partial[k] = 1;
    if (!r->complete && K == r->niter)
        partial[K - 1] = 1; /* the trace ended early: its last iteration is cut */
    free(v);
    free(sorted);
    return 0;
}

int sim_find_iterations(struct sim_job *j)
{
    uint8_t *matched = NULL;
    if (j->marker[0]) {
        long k = match_names(j, j->marker, &matched);
        if (k < 0)
            return -1;
        if (!k) {
            free(matched);
            return maya_error("iteration marker \"%s\" matches no op, kernel, API call or NVTX range name "
                              "in the job (a kernel by its name or short name, a glob such as \"step*\")",
                              j->marker);
        }
    }
    int K = -1;
    j->makespan = 0;
    j->warmup_ops = 0;
    j->warmup_emulation_s = 0;
    for (int i = 0; i < j->nranks; i++) {
        struct sim_rank *r = &j->ranks[i];
        j->makespan = MAYA_MAX(j->makespan, r->done_at);
        if (!r->nops)
            continue;
        if ((matched ? marker_iterations(j, r, matched) : detect_period(j, r)) < 0) {
            free(matched);
            return -1;
        }
        if (!r->niter) {
            /* no repetition here: the whole run is one iteration */
            r->iter_start = malloc(sizeof *r->iter_start);
            r->iter_stop = malloc(sizeof *r->iter_stop);
            if (!r->iter_start || !r->iter_stop) {
                free(matched);
                return maya_error("out of memory finding iterations");
            }
            r->iter_start[0] = 0;
            r->iter_stop[0] = r->nops;
            r->niter = 1;
        }
        j->warmup_ops = MAYA_MAX(j->warmup_ops, r->iter_start[0]);
        j->warmup_emulation_s = MAYA_MAX(j->warmup_emulation_s, r->ops[r->iter_start[0]].trace_ms / 1e3);
        K = K < 0 ? r->niter : MAYA_MIN(K, r->niter);
    }
    free(matched);
    if (K < 1)
        K = 1;
    j->iterations_found = K;
    if (j->keep_iterations > 0 && K > j->keep_iterations)
        K = j->keep_iterations; /* later iterations stay simulated but are not reported */
    free(j->iter_end);
    free(j->iter_times_s);
    free(j->iter_partial);
    j->iter_end = calloc((size_t)K, sizeof *j->iter_end);
    j->iter_times_s = calloc((size_t)K, sizeof *j->iter_times_s);
    j->iter_partial = calloc((size_t)K, sizeof *j->iter_partial);
    if (!j->iter_end || !j->iter_times_s || !j->iter_partial)
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
        if (mark_partial(r, K, j->iter_partial) < 0)
            return -1;
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

int sim_iteration_steady(const struct sim_job *j, int k)
{
    if (k < 0 || k >= j->niter)
        return 0;
    if (j->niter == 1)
        return 1;
    return k > 0 && !j->iter_partial[k];
}

int sim_steady_count(const struct sim_job *j)
{
    int n = 0;
    for (int k = 0; k < j->niter; k++)
        n += sim_iteration_steady(j, k);
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sim_steady_iteration_s(const struct sim_job *j)
{
    if (j->niter <= 0)
        return 0;
    double *v = malloc((size_t)j->niter * sizeof *v);
    if (!v)
        return j->iter_times_s[0];
    int n = 0;
    for (int k = 0; k < j->niter; k++)
        if (sim_iteration_steady(j, k))
            v[n++] = j->iter_times_s[k];
    if (!n) /* every later one partial: the first is all there is */
        v[n++] = j->iter_times_s[0];
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}
