/* maya profile --compare TRACE.json... RUN_DIR: maya's prediction of a
 * program (RUN_DIR, maya run) against PyTorch profiler traces of the same
 * program on real GPUs: the Chrome-trace JSON torch.profiler / Kineto
 * writes (export_chrome_trace, tensorboard_trace_handler), one file per
 * rank (its "distributedInfo": {"rank": N}, else the files' order).
 *
 * The device ops on each side are matched one to one, per rank, by class
 * and occurrence: the n-th GEMM with the n-th GEMM (cuBLAS runs kernels of
 * its own naming: sm90_xmma_gemm_..., cutlass..., so GEMMs match as a
 * class; the reduction kernel of a split-K GEMM is part of its GEMM), the
 * n-th all-reduce with the n-th ncclDevKernel_AllReduce_..., the
 * n-th memcpy and memset with theirs, and every other kernel by its name.
 * The comparison gives the error per estimator family, the matched ops that
 * differ most, and the ranks whose measured device time departs most from
 * the prediction (stragglers: a slow GPU, a rank with more work), into
 * RUN_DIR/compare.txt and compare.json, as the comparison with a maya
 * profile does.
 *
 * The JSON reader keeps only what the comparison needs from each event
 * ("ph" X, "cat" kernel / gpu_memcpy / gpu_memset, "name", "ts", "dur") and
 * skips the rest; it reads the whole file into memory once: O(file) time
 * and memory.
 */
#define _GNU_SOURCE
#include "profile.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/json.h"

/* ---- the Chrome trace ---- */

struct kop {
    char *cls;                  /* matching class: "gemm", "nccl:allreduce", "memcpy", ..., or the name */
    char *name;
    double ts_us, dur_us;
    double stream;              /* args.stream; -1 not given */
};

struct krank {
    int rank;
    struct kop *ops;
    size_t n, cap;
    const char *path;
};

struct reader {
    const char *p, *end, *path;
    const char *start;
};

static int bad(struct reader *r, const char *what)
{
    return maya_error("%s: not a Chrome trace: %s at byte %td", r->path, what, r->p - r->start);
}

static void ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

/* A JSON string into a malloc'd C string (\uXXXX as UTF-8; NUL bytes of
 * \u0000 are dropped). */
static int string(struct reader *r, char **out)
{
    ws(r);
    if (r->p >= r->end || *r->p != '"')
        return bad(r, "expected a string");
    r->p++;
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    if (!s)
        return maya_error("out of memory reading %s", r->path);
    while (r->p < r->end && *r->p != '"') {
        if (n + 8 > cap) {
            char *q = realloc(s, cap *= 2);
            if (!q) {
                free(s);
                return maya_error("out of memory reading %s", r->path);
            }
            s = q;
        }
        char c = *r->p++;
        if (c != '\\') {
            s[n++] = c;
            continue;
        }
        if (r->p >= r->end)
            break;
        c = *r->p++;
        switch (c) {
        case 'n': s[n++] = '\n'; break;
        case 't': s[n++] = '\t'; break;
        case 'r': s[n++] = '\r'; break;
        case 'b': s[n++] = '\b'; break;
        case 'f': s[n++] = '\f'; break;
        case 'u': {
            unsigned v = 0;
            for (int k = 0; k < 4; k++, r->p++) {
                char h = r->p < r->end ? *r->p : 0;
                int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (d < 0) {
                    free(s);
                    return bad(r, "a bad \\u escape");
                }
                v = v * 16 + (unsigned)d;
            }
            if (v == 0)
                break;
            if (v < 0x80) {
                s[n++] = (char)v;
            } else if (v < 0x800) {
                s[n++] = (char)(0xc0 | v >> 6);
                s[n++] = (char)(0x80 | (v & 0x3f));
            } else {
                s[n++] = (char)(0xe0 | v >> 12);
                s[n++] = (char)(0x80 | ((v >> 6) & 0x3f));
                s[n++] = (char)(0x80 | (v & 0x3f));
            }
            break;
        }
        default: s[n++] = c;
        }
    }
    if (r->p >= r->end) {
        free(s);
        return bad(r, "a string without its end");
    }
    r->p++;
    s[n] = 0;
    *out = s;
    return 0;
}

static int number(struct reader *r, double *out)
{
    ws(r);
    char *e;
    *out = strtod(r->p, &e);
    if (e == r->p)
        return bad(r, "expected a number");
    r->p = e;
    return 0;
}

static int skip(struct reader *r, int depth)
{
    ws(r);
    if (r->p >= r->end)
        return bad(r, "the file ends early");
    if (depth > 64)
        return bad(r, "values nested too deep");
    char c = *r->p;
    if (c == '"') {
        char *s;
        if (string(r, &s) < 0)
            return -1;
        free(s);
        return 0;
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->p++;
        ws(r);
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                char *k;
                if (string(r, &k) < 0)
                    return -1;
                free(k);
                ws(r);
                if (r->p >= r->end || *r->p != ':')
                    return bad(r, "expected ':'");
                r->p++;
            }
            if (skip(r, depth + 1) < 0)
                return -1;
            ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            if (r->p < r->end && *r->p == close) {
                r->p++;
                return 0;
            }
            return bad(r, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (!strncmp(r->p, "true", 4) || !strncmp(r->p, "null", 4)) {
        r->p += 4;
        return 0;
    }
    if (!strncmp(r->p, "false", 5)) {
        r->p += 5;
        return 0;
    }
    double d;
    return number(r, &d);
}

/* Walk an object: fn(r, key, ctx) reads or skips each value. */
static int object(struct reader *r, int (*fn)(struct reader *, const char *, void *), void *ctx)
{
    ws(r);
    if (r->p >= r->end || *r->p != '{')
        return bad(r, "expected an object");
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        char *k;
        if (string(r, &k) < 0)
            return -1;
        ws(r);
        if (r->p >= r->end || *r->p != ':') {
            free(k);
            return bad(r, "expected ':'");
        }
        r->p++;
        int rc = fn(r, k, ctx);
        free(k);
        if (rc < 0)
            return -1;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return 0;
        }
        return bad(r, "expected ',' or '}'");
    }
}

struct event {
    char *ph, *cat, *name;
    double ts, dur, stream;
    int has_ts, has_dur;
};

static int args_field(struct reader *r, const char *k, void *ctx)
{
    ws(r);
    if (strcmp(k, "stream") || r->p >= r->end || *r->p == '"' || *r->p == '{' || *r->p == '[')
        return skip(r, 2);
    return number(r, &((struct event *)ctx)->stream);
}

static int event_field(struct reader *r, const char *k, void *ctx)
{
    struct event *e = ctx;
    if (!strcmp(k, "ph") || !strcmp(k, "cat") || !strcmp(k, "name")) {
        char **slot = k[0] == 'p' ? &e->ph : k[0] == 'c' ? &e->cat : &e->name;
        ws(r);
        if (r->p < r->end && *r->p != '"')
            return skip(r, 1);
        free(*slot);
        return string(r, slot);
    }
    if (!strcmp(k, "ts") || !strcmp(k, "dur")) {
        ws(r);
        if (r->p < r->end && *r->p == '"') { /* some writers quote them */
            char *s;
            if (string(r, &s) < 0)
                return -1;
            double v = strtod(s, NULL);
            free(s);
            *(k[0] == 't' ? &e->ts : &e->dur) = v;
        } else if (number(r, k[0] == 't' ? &e->ts : &e->dur) < 0) {
            return -1;
        }
        *(k[0] == 't' ? &e->has_ts : &e->has_dur) = 1;
        return 0;
    }
    if (!strcmp(k, "args")) {
        ws(r);
        if (r->p < r->end && *r->p == '{')
            return object(r, args_field, e);
    }
    return skip(r, 1);
}

static int lower_has(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (!strncasecmp(s, w, n))
            return 1;
    return 0;
}

/* The class a measured kernel matches by (see the top). */
static const char *kineto_class(const char *cat, const char *name)
{
    if (!strcmp(cat, "gpu_memcpy"))
        return "memcpy";
    if (!strcmp(cat, "gpu_memset"))
        return "memset";
    if (!strncmp(name, "nccl", 4)) {
        /* ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_AllGather_RING_LL_Sum_int8_t */
        static const char *const colls[][2] = {
            { "AllReduce", "nccl:allreduce" }, { "AllGather", "nccl:allgather" },
            { "ReduceScatter", "nccl:reducescatter" },
            { "Broadcast", "nccl:broadcast" }, { "SendRecv", "nccl:sendrecv" }, { "Send", "nccl:sendrecv" },
            { "Recv", "nccl:sendrecv" }, { "AllToAll", "nccl:sendrecv" }, { "Reduce", "nccl:reduce" },
        };
        for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
            if (strstr(name, colls[i][0]))
                return colls[i][1];
        return "nccl:other";
    }
    /* cuBLAS's split-K GEMMs end with a reduction kernel of their own: part
     * of the GEMM maya prices as one op (folded into it, read_trace) */
    if (strstr(name, "splitKreduce"))
        return "gemm:reduce";
    if (lower_has(name, "gemm") || lower_has(name, "xmma") || lower_has(name, "cutlass") || lower_has(name, "cublas"))
        return "gemm";
    return NULL; /* by name */
}

static int add_event(struct krank *kr, struct event *e)
{
    int keep = e->ph && !strcmp(e->ph, "X") && e->cat && e->name && e->has_dur &&
               (!strcmp(e->cat, "kernel") || !strcmp(e->cat, "gpu_memcpy") || !strcmp(e->cat, "gpu_memset"));
    if (keep) {
        if (kr->n == kr->cap) {
            size_t cap = kr->cap ? kr->cap * 2 : 1024;
            struct kop *q = realloc(kr->ops, cap * sizeof *q);
            if (!q)
                return maya_error("out of memory reading %s", kr->path);
            kr->ops = q;
            kr->cap = cap;
        }
        const char *c = kineto_class(e->cat, e->name);
        struct kop *o = &kr->ops[kr->n++];
        o->name = e->name;
        o->cls = c ? strdup(c) : strdup(e->name);
        o->ts_us = e->ts;
        o->dur_us = e->dur;
        o->stream = e->stream;
        e->name = NULL;
        if (!o->cls)
            return maya_error("out of memory reading %s", kr->path);
    }
    free(e->ph);
    free(e->cat);
    free(e->name);
    memset(e, 0, sizeof *e);
    e->stream = -1;
    return 0;
}

static int dist_field(struct reader *r, const char *k, void *ctx)
{
    if (strcmp(k, "rank"))
        return skip(r, 1);
    double v;
    if (number(r, &v) < 0)
        return -1;
    if (v < 0 || v > 1e7 || v != floor(v))
        return bad(r, "distributedInfo.rank is not a rank");
    *(int *)ctx = (int)v;
    return 0;
}

static int top_field(struct reader *r, const char *k, void *ctx)
{
    struct krank *kr = ctx;
    if (!strcmp(k, "distributedInfo"))
        return object(r, dist_field, &kr->rank);
    if (strcmp(k, "traceEvents"))
        return skip(r, 1);
    ws(r);
    if (r->p >= r->end || *r->p != '[')
        return bad(r, "traceEvents is not an array");
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        struct event e = { .stream = -1 };
        if (object(r, event_field, &e) < 0 || add_event(kr, &e) < 0) {
            free(e.ph);
            free(e.cat);
            free(e.name);
            return -1;
        }
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return 0;
        }
        return bad(r, "expected ',' or ']' in traceEvents");
    }
}

static int by_ts(const void *a, const void *b)
{
    const struct kop *x = a, *y = b;
    return (x->ts_us > y->ts_us) - (x->ts_us < y->ts_us);
}

/* Each split-K reduction into the GEMM before it on its stream (the one
 * before it at all when the trace names no streams): one cuBLAS call, one
 * op, as maya has it. The scan back is short: the GEMM is the stream's
 * previous kernel. O(ops). */
static void fold_split_k(struct krank *kr)
{
    size_t w = 0;
    for (size_t i = 0; i < kr->n; i++) {
        struct kop *o = &kr->ops[i];
        if (strcmp(o->cls, "gemm:reduce")) {
            kr->ops[w++] = *o;
            continue;
        }
        size_t k = w;
        while (k > 0 && kr->ops[k - 1].stream != o->stream)
            k--;
        if (k > 0 && !strcmp(kr->ops[k - 1].cls, "gemm")) {
            kr->ops[k - 1].dur_us += o->dur_us;
            free(o->cls);
            free(o->name);
        } else {
            kr->ops[w++] = *o; /* no GEMM before it: it matches nothing */
        }
    }
    kr->n = w;
}

/* The whole file, gzip'd or not: tensorboard_trace_handler(use_gzip=True)
 * writes .pt.trace.json.gz, and zlib reads a plain file as it is. */
static int read_whole(const char *path, char **data, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return maya_error("cannot open %s: %m", path);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    int got = 0;
    while (buf) {
        if (n == cap) {
            char *q = cap < ((size_t)1 << 34) ? realloc(buf, 2 * cap + 1) : NULL;
            if (!q) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = q;
            cap *= 2;
        }
        unsigned want = (unsigned)MAYA_MIN(cap - n, (size_t)1 << 30);
        if ((got = gzread(gz, buf + n, want)) <= 0)
            break;
        n += (size_t)got;
    }
    int err = 0;
    const char *msg = got < 0 ? gzerror(gz, &err) : NULL;
    gzclose(gz);
    if (!buf)
        return maya_error("%s: out of memory reading it", path);
    if (msg) {
        free(buf);
        return maya_error("%s: cannot read it: %s", path, msg);
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

static int read_trace(const char *path, int index, struct krank *kr)
{
    char *data = NULL;
    size_t len = 0;
    memset(kr, 0, sizeof *kr);
    kr->rank = -1;
    kr->path = path;
    if (read_whole(path, &data, &len) < 0)
        return -1;
    struct reader r = { data, data + len, path, data };
    int rc = object(&r, top_field, kr);
    free(data);
    if (rc < 0)
        return -1;
    if (kr->rank < 0)
        kr->rank = index;
    if (!kr->n)
        return maya_error("%s: no kernel, gpu_memcpy or gpu_memset events: expected a PyTorch profiler trace "
                          "of a GPU run (torch.profiler with ProfilerActivity.CUDA)", path);
    qsort(kr->ops, kr->n, sizeof *kr->ops, by_ts);
    fold_split_k(kr);
    return 0;
}

static void free_rank(struct krank *kr)
{
    for (size_t i = 0; i < kr->n; i++) {
        free(kr->ops[i].cls);
        free(kr->ops[i].name);
    }
    free(kr->ops);
}

/* ---- matching ---- */

/* The class a predicted op matches by, from its estimator family: what
 * cuBLAS and cuDNN run shows up under kernel names of their own. */
static const char *maya_class(const struct profile_pred_op *o)
{
    switch (o->family) {
    case EST_GEMM:
    case EST_BATCHED_GEMM:
    case EST_CONV: return "gemm";
    case EST_COPY: return "memcpy";
    case EST_MEMSET: return "memset";
    case EST_ALLREDUCE: return "nccl:allreduce";
    case EST_ALLGATHER: return "nccl:allgather";
    case EST_REDUCESCATTER: return "nccl:reducescatter";
    case EST_BROADCAST: return !strcmp(o->name, "ncclReduce") ? "nccl:reduce" : "nccl:broadcast";
    case EST_ALLTOALL:
    case EST_SENDRECV: return "nccl:sendrecv"; /* NCCL runs all-to-all as grouped send/recv */
    default: return o->name;
    }
}

struct pair {
    int rank;
    const char *name;            /* the measured kernel's */
    int family;
    double meas_us, pred_us;
};

static int by_abs_diff(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    double dx = fabs(x->pred_us - x->meas_us), dy = fabs(y->pred_us - y->meas_us);
    return (dx < dy) - (dx > dy);
}

struct rank_sum {
    int rank;
    double meas_us, pred_us;
    size_t ops, matched;
};

static double ratio_off(const struct rank_sum *s)
{
    return s->pred_us > 0 ? fabs(log(s->meas_us / s->pred_us)) : 0;
}

static int by_off(const void *a, const void *b)
{
    double x = ratio_off(a), y = ratio_off(b);
    return (x < y) - (x > y);
}

static double pct(double pred, double meas)
{
    return meas > 0 ? 100.0 * (pred - meas) / meas : NAN;
}

struct fam {
    size_t n;
    double meas_us, pred_us, ape;
};

struct outcome {
    const char *run_dir;
    int ntraces;
    const char *const *traces;
    struct fam fam[EST_NFAMILIES];
    struct pair *pairs;
    size_t npairs, pred_ops, meas_ops;
    struct rank_sum *ranks;
    int nranks;
};

/* Fewer than half of the ops on either side matched: the figures describe
 * a small part of the job, or ops paired that are not the same work. NULL
 * when most matched. */
static const char *coverage_note(const struct outcome *o)
{
    if (2 * o->npairs >= o->pred_ops && 2 * o->npairs >= o->meas_ops)
        return NULL;
    return "fewer than half of the ops matched: the traces should be of the same program with the same "
           "settings, over the steps maya ran (a profiler schedule that records a few steps leaves the others "
           "unmatched; ops of other work pair by kind, not by what they do)";
}

/* A collective's measured time includes its wait for peers; the other
 * families' is their own work. */
static int is_collective(int family)
{
    return family >= EST_ALLREDUCE && family <= EST_SENDRECV;
}

/* The top pairs that differ most (o->pairs is sorted so), only those of
 * computing ops when computing. */
static void write_pairs(FILE *fp, const struct outcome *o, size_t top, int computing)
{
    fprintf(fp, "  %6s %12s %12s %9s  %s\n", "rank", "measured_us", "predicted_us", "error_pct", "kernel");
    for (size_t i = 0, shown = 0; i < o->npairs && shown < top; i++) {
        const struct pair *p = &o->pairs[i];
        if (computing && is_collective(p->family))
            continue;
        fprintf(fp, "  %6d %12.2f %12.2f %+9.1f  ", p->rank, p->meas_us, p->pred_us, pct(p->pred_us, p->meas_us));
        profile_print_name(fp, p->name, PROFILE_NAME_WIDTH);
        shown++;
    }
}

static void json_pairs(struct json *j, const struct outcome *o, const char *key, int computing)
{
    json_arr(j, key);
    for (size_t i = 0, shown = 0; i < o->npairs && shown < 50; i++) {
        const struct pair *p = &o->pairs[i];
        if (computing && is_collective(p->family))
            continue;
        json_obj(j, NULL);
        json_int(j, "rank", p->rank);
        json_str(j, "name", p->name);
        json_str(j, "family", est_family_name((enum est_family)p->family));
        json_num(j, "measured_s", p->meas_us / 1e6);
        json_num(j, "predicted_s", p->pred_us / 1e6);
        json_end_obj(j);
        shown++;
    }
    json_end_arr(j);
}

static void write_text(FILE *fp, const struct outcome *o, size_t top)
{
    fprintf(fp, "maya profile --compare: the prediction %s against %d PyTorch profiler trace%s (%s%s)\n",
            o->run_dir, o->ntraces, o->ntraces == 1 ? "" : "s", o->traces[0], o->ntraces > 1 ? ", ..." : "");
    fprintf(fp, "device ops matched one to one per rank (GEMMs, collectives, copies and memsets by kind and "
                "occurrence,\nother kernels by name and occurrence): %zu of %zu predicted, %zu measured\n\n",
            o->npairs, o->pred_ops, o->meas_ops);
    const char *note = coverage_note(o);
    if (note)
        fprintf(fp, "note: %s\n\n", note);
    fprintf(fp, "  %-14s %8s %14s %14s %9s %9s\n", "family", "ops", "measured_ms", "predicted_ms", "error_pct",
            "mape_pct");
    for (int f = 0; f < EST_NFAMILIES; f++) {
        const struct fam *x = &o->fam[f];
        if (x->n)
            fprintf(fp, "  %-14s %8zu %14.3f %14.3f %+9.1f %9.1f\n", est_family_name((enum est_family)f), x->n,
                    x->meas_us / 1e3, x->pred_us / 1e3, pct(x->pred_us, x->meas_us), 100 * x->ape / (double)x->n);
    }
    fprintf(fp, "\nranks, furthest from the prediction first (device time of matched ops; stragglers on top)\n");
    fprintf(fp, "  %6s %14s %14s %9s %10s\n", "rank", "measured_ms", "predicted_ms", "error_pct", "matched");
    for (int i = 0; i < o->nranks && (size_t)i < top; i++) {
        const struct rank_sum *s = &o->ranks[i];
        fprintf(fp, "  %6d %14.3f %14.3f %+9.1f %5zu/%-5zu\n", s->rank, s->meas_us / 1e3, s->pred_us / 1e3,
                pct(s->pred_us, s->meas_us), s->matched, s->ops);
    }
    fprintf(fp, "\nthe ops that differ most (measured - predicted)\n");
    write_pairs(fp, o, top, 0);
    fprintf(fp, "\nthe computing ops that differ most (collectives left out: a profiler times a collective with "
                "its wait\nfor peers, so a straggler's peers' collectives head the list above)\n");
    write_pairs(fp, o, top, 1);
}

static void write_json(FILE *fp, const struct outcome *o)
{
    struct json j;
    json_begin(&j, fp, 1);
    json_obj(&j, NULL);
    json_str(&j, "source", "kineto");
    json_str(&j, "run_dir", o->run_dir);
    json_arr(&j, "traces");
    for (int i = 0; i < o->ntraces; i++)
        json_str(&j, NULL, o->traces[i]);
    json_end_arr(&j);
    json_uint(&j, "predicted_device_ops", o->pred_ops);
    json_uint(&j, "measured_device_ops", o->meas_ops);
    json_uint(&j, "matched_ops", o->npairs);
    const char *note = coverage_note(o);
    if (note)
        json_str(&j, "note", note);
    else
        json_null(&j, "note");
    json_obj(&j, "families");
    for (int f = 0; f < EST_NFAMILIES; f++) {
        const struct fam *x = &o->fam[f];
        if (!x->n)
            continue;
        json_obj(&j, est_family_name((enum est_family)f));
        json_uint(&j, "ops", x->n);
        json_num(&j, "measured_s", x->meas_us / 1e6);
        json_num(&j, "predicted_s", x->pred_us / 1e6);
        json_num(&j, "error_pct", pct(x->pred_us, x->meas_us));
        json_num(&j, "mape_pct", 100 * x->ape / (double)x->n);
        json_end_obj(&j);
    }
    json_end_obj(&j);
    json_arr(&j, "ranks");
    for (int i = 0; i < o->nranks; i++) {
        const struct rank_sum *s = &o->ranks[i];
        json_obj(&j, NULL);
        json_int(&j, "rank", s->rank);
        json_num(&j, "measured_s", s->meas_us / 1e6);
        json_num(&j, "predicted_s", s->pred_us / 1e6);
        json_num(&j, "error_pct", pct(s->pred_us, s->meas_us));
        json_uint(&j, "matched_ops", s->matched);
        json_uint(&j, "predicted_ops", s->ops);
        json_end_obj(&j);
    }
    json_end_arr(&j);
    json_pairs(&j, o, "most_different_ops", 0);
    json_pairs(&j, o, "most_different_compute_ops", 1);
    json_end_obj(&j);
}

/* Match rank r's predicted ops (pred[0..n)) with its measured ones. */
static int match_rank(struct outcome *o, const struct krank *kr, const struct profile_pred_op *pred, size_t n,
                      struct rank_sum *sum)
{
    /* the next unmatched measured op of each class: a map from class to a
     * cursor would be O(1); classes are few, so a list scanned per op
     * (O(ops x classes)) stays simple */
    struct cursor { const char *cls; size_t next; } *cur = NULL;
    size_t ncur = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *cls = maya_class(&pred[i]);
        sum->ops++;
        size_t c = 0;
        while (c < ncur && strcmp(cur[c].cls, cls))
            c++;
        if (c == ncur) {
            struct cursor *q = realloc(cur, (ncur + 1) * sizeof *q);
            if (!q) {
                rc = maya_error("out of memory matching ops");
                break;
            }
            cur = q;
            cur[ncur++] = (struct cursor){ cls, 0 };
        }
        size_t k = cur[c].next;
        while (k < kr->n && strcmp(kr->ops[k].cls, cls))
            k++;
        cur[c].next = k + 1;
        if (k >= kr->n)
            continue;
        const struct kop *m = &kr->ops[k];
        double pus = (double)pred[i].dev_ns / 1e3;
        struct pair *p = &o->pairs[o->npairs++];
        *p = (struct pair){ kr->rank, m->name, pred[i].family, m->dur_us, pus };
        if (p->family >= 0 && p->family < EST_NFAMILIES && m->dur_us > 0) {
            struct fam *f = &o->fam[p->family];
            f->n++;
            f->meas_us += m->dur_us;
            f->pred_us += pus;
            f->ape += fabs(pus - m->dur_us) / m->dur_us;
        }
        sum->matched++;
        sum->meas_us += m->dur_us;
        sum->pred_us += pus;
    }
    free(cur);
    return rc;
}

int profile_compare_kineto(const char *const *traces, int ntraces, const char *run_dir, int quiet)
{
    struct krank *kr = calloc((size_t)ntraces, sizeof *kr);
    struct profile_pred pred = { 0 };
    struct outcome o = { .run_dir = run_dir, .ntraces = ntraces, .traces = traces };
    int rc = kr ? 0 : maya_error("out of memory");
    for (int i = 0; rc == 0 && i < ntraces; i++)
        rc = read_trace(traces[i], i, &kr[i]);
    for (int i = 0; rc == 0 && i < ntraces; i++)
        for (int k = 0; k < i; k++)
            if (kr[i].rank == kr[k].rank)
                rc = maya_error("%s and %s are both rank %d's trace", traces[k], traces[i], kr[i].rank);
    if (rc == 0)
        rc = profile_predict(run_dir, &pred);
    if (rc == 0) {
        o.pairs = calloc(MAYA_MAX(pred.n, 1), sizeof *o.pairs);
        o.ranks = calloc((size_t)ntraces, sizeof *o.ranks);
        if (!o.pairs || !o.ranks)
            rc = maya_error("out of memory");
    }
    for (int i = 0; rc == 0 && i < ntraces; i++) {
        size_t a = 0;
        while (a < pred.n && pred.ops[a].rank != kr[i].rank)
            a++;
        size_t b = a;
        while (b < pred.n && pred.ops[b].rank == kr[i].rank)
            b++;
        if (a == b) {
            rc = maya_error("%s is rank %d's trace, and %s has no rank %d", traces[i], kr[i].rank, run_dir,
                            kr[i].rank);
            break;
        }
        o.meas_ops += kr[i].n;
        o.ranks[o.nranks].rank = kr[i].rank;
        rc = match_rank(&o, &kr[i], pred.ops + a, b - a, &o.ranks[o.nranks]);
        o.pred_ops += o.ranks[o.nranks].ops;
        o.nranks++;
    }
    if (rc == 0 && o.npairs == 0)
        rc = maya_error("no op of %s matched one of the traces: are they of the same program?", run_dir);
    if (rc == 0) {
        qsort(o.pairs, o.npairs, sizeof *o.pairs, by_abs_diff);
        qsort(o.ranks, (size_t)o.nranks, sizeof *o.ranks, by_off);
        char path[PATH_MAX];
        struct maya_atomic_file af;
        if (maya_snprintf(path, sizeof path, "%s/compare.txt", run_dir) < 0 || maya_atomic_open(&af, path) < 0)
            rc = -1;
        else {
            write_text(af.fp, &o, 30);
            rc = maya_atomic_commit(&af);
        }
        if (rc == 0 && (maya_snprintf(path, sizeof path, "%s/compare.json", run_dir) < 0 ||
                        maya_atomic_open(&af, path) < 0))
            rc = -1;
        else if (rc == 0) {
            write_json(af.fp, &o);
            rc = maya_atomic_commit(&af);
        }
        if (rc == 0 && !quiet) {
            write_text(stderr, &o, 8);
            fprintf(stderr, "maya profile: comparison in %s/compare.txt and compare.json\n", run_dir);
        }
    }
    for (int i = 0; kr && i < ntraces; i++)
        free_rank(&kr[i]);
    free(kr);
    profile_pred_free(&pred);
    free(o.pairs);
    free(o.ranks);
    return rc;
}
