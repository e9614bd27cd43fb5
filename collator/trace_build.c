/* `maya trace build TEXT OUT`: a rank trace from a few lines of text, so that
 * tests and examples can state a schedule exactly (times, streams, events,
 * collectives) without running a program. Field names follow `maya trace
 * dump`. Strings, kernels, streams and devices are defined on first use.
 */
#define _GNU_SOURCE
#include "maya/collator.h"
#include "rebuild.h"
#include "maya/common.h"
#include "maya/trace_format.h"
#include "maya/trace_reader.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char col_trace_build_help[] =
    "One record per line; '#' starts a comment. Values may be double-quoted.\n"
    "  header rank=R world_size=N local_rank=L node=K gpus_per_node=G gpu=KEY total_mem=SIZE\n"
    "         [passthrough]               (optional; first line if present; passthrough: as\n"
    "                                     maya profile records on real GPUs)\n"
    "  stream id=S dev=D [legacy] [non_blocking] [per_thread] [priority=P]\n"
    "  comm id=C rank=R nranks=N [dev=D] [gpu=GLOBAL_GPU] [parent=C] [color=X] [key=Y]\n"
    "Calls (all take t=ENTER..EXIT, api=NAME, stream=S, dev=D, tid=T, result=E,\n"
    "measured=DUR and the flags unsupported, host_waits, device_sync, from_graph,\n"
    "capturing; times and durations are ns unless suffixed us, ms or s):\n"
    "  call\n"
    "  launch kernel=NAME [grid=X,Y,Z] [block=X,Y,Z] [smem=BYTES]\n"
    "  gemm m=M n=N k=K [batch=B] [transa=0|1] [transb=0|1] [atype=T] [btype=T] [ctype=T]\n"
    "       [dtype=T] [compute=C] [lib=cublas|cublasLt]\n"
    "  memcpy kind=h2d|d2h|d2d|h2h|peer bytes=SIZE [async] [pinned]\n"
    "  memset bytes=SIZE [value=V] [async]\n"
    "  alloc|free bytes=SIZE [kind=device|async|managed|host] [ptr=P] [alloc_dev=D]\n"
    "  event_record|stream_wait event=E version=V\n"
    "  sync sync=device|stream|event [target=ID] [version=V]\n"
    "  host_func [fn=ADDR]\n"
    "  coll op=allreduce|broadcast|reduce|allgather|reducescatter|send|recv|alltoall|gather|scatter\n"
    "       comm=C cseq=Q rank=R nranks=N count=K [dtype=T] [bytes=SIZE] [peer=P] [group=G] [redop=O]\n"
    "  marker name=TEXT [kind=push|pop|point|start|end]\n"
    "  eliminated source=S [how=matched|declared] [stop_op=K] [stop_hash=H]\n"
    "       duplicate-rank elimination stopped this rank (docs/dedup.md); stop_op and stop_hash\n"
    "       default to the coll records so far and their hash\n"
    "  graph graph_exec=G phase=begin|end [nodes=N]\n"
    "  end [oom=1] [unsupported_calls=N]    (optional: written at the end anyway)\n";

struct builder {
    const char *path;
    int line;
    FILE *fp;
    struct col_writer *w;
    struct maya_trace_header hdr;
    int header_written;
    char **strs;               /* by id - 1 */
    uint32_t nstrs;
    uint32_t *kernel_of_str;   /* string id -> kernel id (0 none) */
    uint32_t nkernels;
    uint64_t streams[256];
    int nstreams;
    int devices_defined[64];
    uint64_t dev_used[64], dev_peak[64];
    uint64_t total_mem;
    uint64_t seq, last_exit;
    uint64_t unsupported;
    int oom, ended;
    struct col_shape *shape;   /* communicators and NCCL operations so far (the eliminated line's hash) */
};

static int bad(struct builder *b, const char *fmt, ...) MAYA_PRINTF(2, 3);
static int bad(struct builder *b, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return maya_error("%s:%d: %s", b->path, b->line, msg);
}

static uint32_t intern(struct builder *b, const char *s)
{
    for (uint32_t i = 0; i < b->nstrs; i++)
        if (!strcmp(b->strs[i], s))
            return i + 1;
    char **p = realloc(b->strs, (b->nstrs + 1) * sizeof *p);
    uint32_t *k = realloc(b->kernel_of_str, (b->nstrs + 2) * sizeof *k);
    if (p)
        b->strs = p;
    if (k)
        b->kernel_of_str = k;
    if (!p || !k || !(b->strs[b->nstrs] = strdup(s)))
        return 0;
    uint32_t id = ++b->nstrs;
    b->kernel_of_str[id] = 0;
    size_t len = strlen(s);
    uint32_t bytes = MAYA_REC_ALIGN((uint32_t)(sizeof(struct maya_rec_string) + len));
    unsigned char *rec = calloc(1, bytes);
    if (!rec)
        return 0;
    struct maya_rec_string r = { .h = { MAYA_REC_STRING, 0, bytes }, .id = id, .len = (uint32_t)len };
    memcpy(rec, &r, sizeof r);
    memcpy(rec + sizeof r, s, len);
    int rc = col_writer_emit(b->w, rec);
    free(rec);
    return rc < 0 ? 0 : id;
}

static int write_header(struct builder *b)
{
    if (b->header_written)
        return 0;
    if (fwrite(&b->hdr, sizeof b->hdr, 1, b->fp) != 1)
        return maya_error("cannot write %s: %m", b->path);
    b->header_written = 1;
    struct maya_rec_process p;
    memset(&p, 0, sizeof p);
    p.h = (struct maya_rec_hdr){ MAYA_REC_PROCESS, 0, sizeof p };
    p.hostname = intern(b, "built");
    p.cmdline = intern(b, "maya trace build");
    p.mode = 1;
    return col_writer_emit(b->w, &p);
}

/* ---- values ---- */

static int parse_u64(struct builder *b, const char *key, const char *v, uint64_t *out)
{
    if (maya_parse_u64(v, out) < 0)
        return bad(b, "%s=\"%s\": expected a whole number >= 0", key, v);
    return 0;
}

static int parse_i64(struct builder *b, const char *key, const char *v, int64_t *out)
{
    if (maya_parse_i64(v, out) < 0)
        return bad(b, "%s=\"%s\": expected a whole number", key, v);
    return 0;
}

static int parse_int(struct builder *b, const char *key, const char *v, int32_t *out)
{
    int64_t x;
    if (parse_i64(b, key, v, &x) < 0)
        return -1;
    if (x < INT32_MIN || x > INT32_MAX)
        return bad(b, "%s=%s: out of range", key, v);
    *out = (int32_t)x;
    return 0;
}

static int parse_size(struct builder *b, const char *key, const char *v, uint64_t *out)
{
    if (maya_parse_size(v, out) < 0)
        return bad(b, "%s=\"%s\": expected a size in bytes (e.g. 4096, 64K, 2G)", key, v);
    return 0;
}

/* A time or duration: ns, or a number with ns/us/ms/s. */
static int parse_time(struct builder *b, const char *key, const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    double scale = 0;
    if (end != v && !errno && isfinite(x) && x >= 0) {
        if (!*end || !strcmp(end, "ns"))
            scale = 1;
        else if (!strcmp(end, "us"))
            scale = 1e3;
        else if (!strcmp(end, "ms"))
            scale = 1e6;
        else if (!strcmp(end, "s"))
            scale = 1e9;
    }
    if (scale == 0 || x * scale > 1.8e19)
        return bad(b, "%s=\"%s\": expected a time (e.g. 1500, 1.5us, 14ms)", key, v);
    *out = (uint64_t)llround(x * scale);
    return 0;
}

static int parse_dim3(struct builder *b, const char *key, const char *v, uint32_t d[3])
{
    d[0] = d[1] = d[2] = 1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    int i = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), i++) {
        uint64_t x;
        if (i >= 3 || maya_parse_u64(t, &x) < 0 || x == 0 || x > UINT32_MAX)
            return bad(b, "%s=\"%s\": expected X[,Y[,Z]] of positive numbers", key, v);
        d[i] = (uint32_t)x;
    }
    return 0;
}

static int parse_name(struct builder *b, const char *key, const char *v, const char *const *names,
                      int n, uint32_t *out)
{
    for (int i = 1; i < n; i++)
        if (names[i] && !strcasecmp(v, names[i])) {
            *out = (uint32_t)i;
            return 0;
        }
    char allowed[512] = "";
    for (int i = 1; i < n; i++)
        if (names[i])
            snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                     allowed[0] ? ", " : "", names[i]);
    return bad(b, "%s=\"%s\": expected one of %s", key, v, allowed);
}

/* ---- tokens ---- */

struct kv {
    char *key, *value; /* value NULL for a bare word */
    int used;
};

/* Split a line into words; "quoted values" may hold spaces and \" \\. */
static int tokenize(struct builder *b, char *s, struct kv *kv, int max, int *n)
{
    *n = 0;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            return 0;
        if (*n >= max)
            return bad(b, "more than %d words on a line", max);
        struct kv *t = &kv[(*n)++];
        t->key = s;
        t->value = NULL;
        t->used = 0;
        while (*s && !isspace((unsigned char)*s) && *s != '=')
            s++;
        if (*s != '=') {
            if (*s)
                *s++ = 0;
            continue;
        }
        *s++ = 0;
        if (*s == '"') {
            char *out = ++s;
            t->value = out;
            while (*s && *s != '"') {
                if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
                    s++;
                *out++ = *s++;
            }
            if (*s != '"')
                return bad(b, "%s: unterminated quoted value", t->key);
            s++;
            *out = 0;
            if (*s && !isspace((unsigned char)*s))
                return bad(b, "%s: expected a space after the quoted value", t->key);
        } else {
            t->value = s;
            while (*s && !isspace((unsigned char)*s))
                s++;
            if (*s)
                *s++ = 0;
        }
    }
}

static struct kv *find(struct kv *kv, int n, const char *key)
{
    for (int i = 1; i < n; i++) /* kv[0] is the record type */
        if (!strcmp(kv[i].key, key)) {
            kv[i].used = 1;
            return &kv[i];
        }
    return NULL;
}

static const char *val(struct kv *kv, int n, const char *key)
{
    struct kv *t = find(kv, n, key);
    return t ? (t->value ? t->value : "") : NULL;
}

static int flag(struct kv *kv, int n, const char *key)
{
    struct kv *t = find(kv, n, key);
    return t && !t->value;
}

#define U64(key, dst) do { const char *v_ = val(kv, n, key); \
    if (v_ && parse_u64(b, key, v_, &(dst)) < 0) return -1; } while (0)
#define SIZE(key, dst) do { const char *v_ = val(kv, n, key); \
    if (v_ && parse_size(b, key, v_, &(dst)) < 0) return -1; } while (0)
#define INT(key, dst) do { const char *v_ = val(kv, n, key); \
    if (v_ && parse_int(b, key, v_, &(dst)) < 0) return -1; } while (0)
#define I64(key, dst) do { const char *v_ = val(kv, n, key); \
    if (v_ && parse_i64(b, key, v_, &(dst)) < 0) return -1; } while (0)

/* ---- definitions ---- */

static int define_device(struct builder *b, int dev)
{
    if (dev < 0 || dev >= 64 || b->devices_defined[dev])
        return 0;
    struct maya_rec_device d;
    memset(&d, 0, sizeof d);
    d.h = (struct maya_rec_hdr){ MAYA_REC_DEVICE, 0, sizeof d };
    d.ordinal = dev;
    d.global_index = b->hdr.node * b->hdr.gpus_per_node + dev;
    d.gpu = intern(b, b->hdr.gpu);
    d.total_mem_bytes = b->total_mem;
    b->devices_defined[dev] = 1;
    return col_writer_emit(b->w, &d);
}

static int stream_known(struct builder *b, uint64_t id)
{
    for (int i = 0; i < b->nstreams; i++)
        if (b->streams[i] == id)
            return 1;
    return 0;
}

static int define_stream(struct builder *b, uint64_t id, int dev, uint32_t flags, int prio)
{
    if (stream_known(b, id))
        return bad(b, "stream %llu is defined twice", (unsigned long long)id);
    if (b->nstreams >= (int)MAYA_ARRAY_LEN(b->streams))
        return bad(b, "more than %zu streams", MAYA_ARRAY_LEN(b->streams));
    if (define_device(b, dev) < 0)
        return -1;
    b->streams[b->nstreams++] = id;
    struct maya_rec_stream s;
    memset(&s, 0, sizeof s);
    s.h = (struct maya_rec_hdr){ MAYA_REC_STREAM, 0, sizeof s };
    s.stream = id;
    s.device = dev;
    s.flags = flags;
    s.priority = prio;
    return col_writer_emit(b->w, &s);
}

static int line_header(struct builder *b, struct kv *kv, int n)
{
    if (b->header_written)
        return bad(b, "header must be the first record");
    struct maya_trace_header *h = &b->hdr;
    INT("rank", h->rank);
    INT("world_size", h->world_size);
    INT("local_rank", h->local_rank);
    INT("node", h->node);
    INT("gpus_per_node", h->gpus_per_node);
    SIZE("total_mem", b->total_mem);
    const char *g = val(kv, n, "gpu");
    if (g)
        snprintf(h->gpu, sizeof h->gpu, "%s", g);
    if (flag(kv, n, "passthrough"))
        h->flags |= MAYA_TRACE_F_PASSTHROUGH;
    if (h->gpus_per_node < 1 || h->gpus_per_node > 64)
        return bad(b, "gpus_per_node=%d: expected 1 to 64", h->gpus_per_node);
    return 0;
}

static int line_stream(struct builder *b, struct kv *kv, int n)
{
    uint64_t id = 0;
    int32_t dev = 0, prio = 0;
    U64("id", id);
    INT("dev", dev);
    INT("priority", prio);
    if (!id)
        return bad(b, "stream: expected id=S (1 or more)");
    uint32_t flags = (flag(kv, n, "legacy") ? MAYA_STREAM_LEGACY : 0) |
                     (flag(kv, n, "non_blocking") ? MAYA_STREAM_NON_BLOCKING : 0) |
                     (flag(kv, n, "per_thread") ? MAYA_STREAM_PER_THREAD : 0);
    return define_stream(b, id, dev, flags, prio);
}

static int line_comm(struct builder *b, struct kv *kv, int n)
{
    struct maya_rec_comm c;
    memset(&c, 0, sizeof c);
    c.h = (struct maya_rec_hdr){ MAYA_REC_COMM, 0, sizeof c };
    c.color = c.key = -1;
    c.rank = c.nranks = -1;
    U64("id", c.comm);
    U64("parent", c.parent);
    INT("rank", c.rank);
    INT("nranks", c.nranks);
    INT("dev", c.device);
    c.global_gpu = b->hdr.node * b->hdr.gpus_per_node + c.device;
    INT("gpu", c.global_gpu);
    INT("color", c.color);
    INT("key", c.key);
    if (!c.comm || c.nranks < 1 || c.rank < 0 || c.rank >= c.nranks)
        return bad(b, "comm: expected id=C (nonzero) rank=R nranks=N with 0 <= R < N");
    if (col_shape_note(b->shape, &c.h) < 0)
        return -1;
    return col_writer_emit(b->w, &c);
}

/* ---- calls ---- */

static const char *const copy_kinds[] = { NULL, "h2d", "d2h", "d2d", "h2h", "peer" };
static const char *const alloc_kinds[] = { NULL, "device", "async", "managed", "host", "host_register",
                                           "vmm_physical", "vmm_reserve", "vmm_map" };
static const char *const coll_ops[] = { NULL, "allreduce", "broadcast", "reduce", "allgather",
                                        "reducescatter", "send", "recv", "alltoall", "gather", "scatter" };
static const char *const sync_kinds[] = { NULL, "device", "stream", "event" };
static const char *const marker_kinds[] = { NULL, "push", "pop", "point", "start", "end" };
static const char *const phases[] = { NULL, "begin", "end" };

static const char *default_api(uint16_t type, uint32_t sub)
{
    static const char *const coll_api[] = { "ncclAllReduce", "ncclAllReduce", "ncclBroadcast", "ncclReduce",
                                            "ncclAllGather", "ncclReduceScatter", "ncclSend", "ncclRecv",
                                            "ncclAlltoAll", "ncclGather", "ncclScatter" };
    switch (type) {
    case MAYA_REC_LAUNCH: return "cudaLaunchKernel";
    case MAYA_REC_MEMCPY: return "cudaMemcpyAsync";
    case MAYA_REC_MEMSET: return "cudaMemsetAsync";
    case MAYA_REC_ALLOC: return "cudaMalloc";
    case MAYA_REC_FREE: return "cudaFree";
    case MAYA_REC_EVENT_RECORD: return "cudaEventRecord";
    case MAYA_REC_STREAM_WAIT: return "cudaStreamWaitEvent";
    case MAYA_REC_SYNC:
        return sub == MAYA_SYNC_STREAM ? "cudaStreamSynchronize"
             : sub == MAYA_SYNC_EVENT ? "cudaEventSynchronize" : "cudaDeviceSynchronize";
    case MAYA_REC_HOST_FUNC: return "cudaLaunchHostFunc";
    case MAYA_REC_GEMM: return "cublasSgemm_v2";
    case MAYA_REC_DNN: return "cudnnBackendExecute";
    case MAYA_REC_COLL: return coll_api[sub < 11 ? sub : 0];
    case MAYA_REC_GRAPH: return "cudaGraphLaunch";
    case MAYA_REC_MARKER: return "nvtxMarkA";
    default: return "cudaGetLastError";
    }
}

static int call_common(struct builder *b, uint16_t type, struct maya_rec_hdr *h, struct maya_call *c,
                       struct kv *kv, int n, uint32_t sub)
{
    const char *t = val(kv, n, "t");
    c->t_enter_ns = c->t_exit_ns = b->last_exit;
    if (t) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", t);
        char *dots = strstr(buf, "..");
        if (dots)
            *dots = 0;
        if (parse_time(b, "t", buf, &c->t_enter_ns) < 0)
            return -1;
        c->t_exit_ns = c->t_enter_ns;
        if (dots && parse_time(b, "t", dots + 2, &c->t_exit_ns) < 0)
            return -1;
        if (c->t_exit_ns < c->t_enter_ns)
            return bad(b, "t=%s: the call ends before it starts", t);
    }
    b->last_exit = c->t_exit_ns;
    c->seq = b->seq++;
    c->device = 0;
    INT("dev", c->device);
    U64("stream", c->stream);
    uint64_t tid = 0;
    U64("tid", tid);
    c->tid = (uint32_t)tid;
    INT("result", c->result);
    const char *m = val(kv, n, "measured");
    if (m && parse_time(b, "measured", m, &c->measured_ns) < 0)
        return -1;
    const char *api = val(kv, n, "api");
    c->api = intern(b, api ? api : default_api(type, sub));
    h->type = type;
    h->flags = (uint16_t)((flag(kv, n, "unsupported") ? MAYA_F_UNSUPPORTED : 0) |
                          (flag(kv, n, "host_waits") ? MAYA_F_HOST_WAITS : 0) |
                          (flag(kv, n, "device_sync") ? MAYA_F_DEVICE_SYNC : 0) |
                          (flag(kv, n, "from_graph") ? MAYA_F_FROM_GRAPH : 0) |
                          (flag(kv, n, "capturing") ? MAYA_F_CAPTURING : 0) |
                          (c->measured_ns ? MAYA_F_MEASURED : 0));
    if (h->flags & MAYA_F_UNSUPPORTED)
        b->unsupported++;
    if (define_device(b, c->device) < 0)
        return -1;
    if (c->stream && !stream_known(b, c->stream) && define_stream(b, c->stream, c->device, 0, 0) < 0)
        return -1;
    return 0;
}

static int call_line(struct builder *b, uint16_t type, struct kv *kv, int n)
{
    union {
        struct maya_rec_call call;
        struct maya_rec_launch launch;
        struct maya_rec_memcpy memcpy;
        struct maya_rec_memset memset;
        struct maya_rec_alloc alloc;
        struct maya_rec_event event;
        struct maya_rec_sync sync;
        struct maya_rec_host_func hostfn;
        struct maya_rec_gemm gemm;
        struct maya_rec_dnn dnn;
        struct maya_rec_coll coll;
        struct maya_rec_graph graph;
        struct maya_rec_marker marker;
    } r;
    memset(&r, 0, sizeof r);
    struct maya_rec_hdr *h = &r.call.h;
    struct maya_call *c = &r.call.call;
    uint32_t sub = 0;
    const char *v;
    /* the sub-kind first: the default API name depends on it */
    if (type == MAYA_REC_COLL && (v = val(kv, n, "op")) && parse_name(b, "op", v, coll_ops, 11, &sub) < 0)
        return -1;
    if (type == MAYA_REC_SYNC && (v = val(kv, n, "sync")) && parse_name(b, "sync", v, sync_kinds, 4, &sub) < 0)
        return -1;
    if (call_common(b, type, h, c, kv, n, sub) < 0)
        return -1;
    h->bytes = maya_rec_min_bytes(type);
    switch (type) {
    case MAYA_REC_LAUNCH: {
        struct maya_rec_launch *l = &r.launch;
        const char *k = val(kv, n, "kernel");
        if (!k || !*k)
            return bad(b, "launch: expected kernel=NAME");
        uint32_t sid = intern(b, k);
        if (!sid)
            return maya_error("out of memory");
        if (!b->kernel_of_str[sid]) {
            struct maya_rec_kernel kr;
            memset(&kr, 0, sizeof kr);
            kr.h = (struct maya_rec_hdr){ MAYA_REC_KERNEL, 0, sizeof kr };
            kr.id = ++b->nkernels;
            kr.mangled = kr.name = sid;
            kr.source = MAYA_KSRC_FATBIN;
            if (col_writer_emit(b->w, &kr) < 0)
                return -1;
            b->kernel_of_str[sid] = kr.id;
        }
        l->kernel = b->kernel_of_str[sid];
        if ((v = val(kv, n, "grid")) && parse_dim3(b, "grid", v, l->grid) < 0)
            return -1;
        if (!v)
            l->grid[0] = l->grid[1] = l->grid[2] = 1;
        if ((v = val(kv, n, "block")) && parse_dim3(b, "block", v, l->block) < 0)
            return -1;
        if (!v)
            l->block[0] = l->block[1] = l->block[2] = 1;
        uint64_t smem = 0;
        SIZE("smem", smem);
        l->smem_bytes = (uint32_t)smem;
        break;
    }
    case MAYA_REC_MEMCPY: {
        struct maya_rec_memcpy *m = &r.memcpy;
        if (!(v = val(kv, n, "kind")) || parse_name(b, "kind", v, copy_kinds, 6, &m->kind) < 0)
            return v ? -1 : bad(b, "memcpy: expected kind=h2d|d2h|d2d|h2h|peer");
        SIZE("bytes", m->bytes);
        m->width = m->bytes;
        m->height = m->depth = 1;
        m->src_device = m->kind == MAYA_COPY_H2D || m->kind == MAYA_COPY_H2H ? -1 : c->device;
        m->dst_device = m->kind == MAYA_COPY_D2H || m->kind == MAYA_COPY_H2H ? -1 : c->device;
        m->flags = (flag(kv, n, "async") ? MAYA_COPY_ASYNC : 0) | (flag(kv, n, "pinned") ? MAYA_COPY_PINNED : 0);
        break;
    }
    case MAYA_REC_MEMSET: {
        struct maya_rec_memset *m = &r.memset;
        SIZE("bytes", m->bytes);
        uint64_t value = 0;
        U64("value", value);
        m->value = (uint32_t)value;
        m->elem_bytes = 1;
        m->flags = flag(kv, n, "async") ? MAYA_COPY_ASYNC : 0;
        break;
    }
    case MAYA_REC_ALLOC:
    case MAYA_REC_FREE: {
        struct maya_rec_alloc *a = &r.alloc;
        a->kind = MAYA_ALLOC_DEVICE;
        if ((v = val(kv, n, "kind")) && parse_name(b, "kind", v, alloc_kinds, 9, &a->kind) < 0)
            return -1;
        SIZE("bytes", a->bytes);
        U64("ptr", a->ptr);
        a->device = a->kind == MAYA_ALLOC_HOST || a->kind == MAYA_ALLOC_HOST_REGISTER ? -1 : c->device;
        INT("alloc_dev", a->device);
        if (a->device >= 0 && a->device < 64 && c->result == 0) {
            uint64_t *used = &b->dev_used[a->device];
            if (type == MAYA_REC_ALLOC)
                *used += a->bytes;
            else
                *used = *used > a->bytes ? *used - a->bytes : 0;
            b->dev_peak[a->device] = MAYA_MAX(b->dev_peak[a->device], *used);
            a->device_used_bytes = *used;
            a->device_peak_bytes = b->dev_peak[a->device];
        }
        break;
    }
    case MAYA_REC_EVENT_RECORD:
    case MAYA_REC_STREAM_WAIT: {
        uint64_t version = 0;
        U64("event", r.event.event);
        U64("version", version);
        r.event.version = (uint32_t)version;
        if (!r.event.event)
            return bad(b, "%s: expected event=E", maya_rec_type_name(type));
        break;
    }
    case MAYA_REC_SYNC: {
        uint64_t version = 0;
        r.sync.kind = sub ? sub : MAYA_SYNC_DEVICE;
        U64("target", r.sync.target);
        U64("version", version);
        r.sync.version = (uint32_t)version;
        break;
    }
    case MAYA_REC_HOST_FUNC:
        U64("fn", r.hostfn.fn);
        U64("data", r.hostfn.user_data);
        break;
    case MAYA_REC_GEMM: {
        struct maya_rec_gemm *g = &r.gemm;
        g->lib = MAYA_GEMM_CUBLAS;
        if ((v = val(kv, n, "lib"))) {
            static const char *const libs[] = { NULL, "cublas", "cublasLt" };
            if (parse_name(b, "lib", v, libs, 3, &g->lib) < 0)
                return -1;
        }
        g->batch = 1;
        g->atype = g->btype = g->ctype = g->dtype = 0; /* CUDA_R_32F */
        g->compute_type = 68;                          /* CUBLAS_COMPUTE_32F */
        g->epilogue = 1;
        g->algo = -1;
        I64("m", g->m);
        I64("n", g->n);
        I64("k", g->k);
        I64("batch", g->batch);
        INT("transa", g->transa);
        INT("transb", g->transb);
        INT("atype", g->atype);
        INT("btype", g->btype);
        INT("ctype", g->ctype);
        INT("dtype", g->dtype);
        INT("compute", g->compute_type);
        g->lda = g->transa ? g->k : g->m;
        g->ldb = g->transb ? g->n : g->k;
        g->ldc = g->ldd = g->m;
        if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1)
            return bad(b, "gemm: expected m, n, k (and batch) of 1 or more");
        break;
    }
    case MAYA_REC_COLL: {
        struct maya_rec_coll *k = &r.coll;
        if (!sub)
            return bad(b, "coll: expected op=allreduce|broadcast|...|send|recv");
        k->op = sub;
        k->peer = -1;
        k->dtype = 7; /* ncclFloat32 */
        U64("comm", k->comm);
        U64("cseq", k->seq);
        SIZE("count", k->count);
        U64("group", k->group);
        INT("dtype", k->dtype);
        INT("redop", k->redop);
        INT("rank", k->rank);
        INT("nranks", k->nranks);
        INT("peer", k->peer);
        int elem = maya_coll_dtype_bytes(k->dtype);
        k->bytes = k->count * (uint64_t)(elem ? elem : 1);
        SIZE("bytes", k->bytes);
        if (!k->comm || k->nranks < 1 || k->rank < 0 || k->rank >= k->nranks)
            return bad(b, "coll: expected comm=C (nonzero) rank=R nranks=N with 0 <= R < N");
        if ((sub == MAYA_COLL_SEND || sub == MAYA_COLL_RECV) && (k->peer < 0 || k->peer >= k->nranks))
            return bad(b, "coll op=%s: expected peer=P with 0 <= P < nranks", coll_ops[sub]);
        break;
    }
    case MAYA_REC_GRAPH:
        U64("graph_exec", r.graph.graph_exec);
        if (!(v = val(kv, n, "phase")) || parse_name(b, "phase", v, phases, 3, &r.graph.phase) < 0)
            return v ? -1 : bad(b, "graph: expected phase=begin|end");
        {
            uint64_t nodes = 0;
            U64("nodes", nodes);
            r.graph.nodes = (uint32_t)nodes;
        }
        break;
    case MAYA_REC_MARKER:
        if (!(v = val(kv, n, "name")))
            return bad(b, "marker: expected name=TEXT");
        r.marker.name = intern(b, v);
        r.marker.kind = MAYA_MARK_POINT;
        if ((v = val(kv, n, "kind")) && parse_name(b, "kind", v, marker_kinds, MAYA_ARRAY_LEN(marker_kinds), &r.marker.kind) < 0)
            return -1;
        break;
    default:
        break;
    }
    for (int i = 1; i < n; i++)
        if (!kv[i].used)
            return bad(b, "%s: unknown %s \"%s\" (maya trace build --help lists the fields)",
                       maya_rec_type_name(type), kv[i].value ? "field" : "flag", kv[i].key);
    if (col_shape_note(b->shape, &r.call.h) < 0)
        return -1;
    return col_writer_emit(b->w, &r);
}

/* eliminated source=S [how=matched|declared] [stop_op=K] [stop_hash=H]:
 * by default the COLL records written so far and their hash. */
static int line_eliminated(struct builder *b, struct kv *kv, int n)
{
    struct maya_rec_eliminated e;
    memset(&e, 0, sizeof e);
    e.h = (struct maya_rec_hdr){ MAYA_REC_ELIMINATED, 0, sizeof e };
    e.source = -1;
    col_shape_ops(b->shape, &e.stop_op, &e.stop_hash);
    e.check_op = e.stop_op;
    e.check_hash = e.stop_hash;
    e.how = MAYA_ELIM_MATCHED;
    INT("source", e.source);
    U64("stop_op", e.stop_op);
    U64("stop_hash", e.stop_hash);
    for (int i = 1; i < n; i++)
        if (!strcmp(kv[i].key, "how") && kv[i].value) {
            kv[i].used = 1;
            if (!strcmp(kv[i].value, "declared"))
                e.how = MAYA_ELIM_DECLARED;
            else if (strcmp(kv[i].value, "matched"))
                return bad(b, "eliminated: how=\"%s\", expected matched or declared", kv[i].value);
        }
    if (e.source < 0)
        return bad(b, "eliminated: expected source=S (the rank it is rebuilt from)");
    e.t_ns = b->last_exit;
    return col_writer_emit(b->w, &e);
}

static int write_end(struct builder *b)
{
    unsigned char buf[sizeof(struct maya_rec_end) + 64 * sizeof(struct maya_end_device)];
    memset(buf, 0, sizeof buf);
    struct maya_rec_end *e = (void *)buf;
    struct maya_end_device *d = (void *)(e + 1);
    e->h.type = MAYA_REC_END;
    e->records = col_writer_records(b->w);
    e->unsupported_calls = b->unsupported;
    e->oom = (uint32_t)b->oom;
    for (int i = 0; i < 64; i++)
        if (b->devices_defined[i]) {
            d[e->ndevices].device = i;
            d[e->ndevices].peak_bytes = b->dev_peak[i];
            d[e->ndevices].total_bytes = b->total_mem;
            e->ndevices++;
        }
    e->h.bytes = (uint32_t)(sizeof *e + e->ndevices * sizeof *d);
    return col_writer_emit(b->w, e);
}

static int do_line(struct builder *b, char *line)
{
    struct kv kv[64];
    int n;
    if (tokenize(b, line, kv, 64, &n) < 0)
        return -1;
    if (n == 0)
        return 0;
    const char *type = kv[0].key;
    if (kv[0].value)
        return bad(b, "expected a record type first (header, stream, launch, ...), found \"%s=\"", type);
    if (b->ended)
        return bad(b, "nothing may follow the end record");
    if (!strcmp(type, "header")) {
        if (line_header(b, kv, n) < 0)
            return -1;
    } else {
        if (write_header(b) < 0)
            return -1;
        int rc;
        if (!strcmp(type, "stream"))
            rc = line_stream(b, kv, n);
        else if (!strcmp(type, "comm"))
            rc = line_comm(b, kv, n);
        else if (!strcmp(type, "eliminated"))
            rc = line_eliminated(b, kv, n);
        else if (!strcmp(type, "end")) {
            int32_t oom = 0;
            INT("oom", oom);
            b->oom = oom != 0;
            uint64_t u = b->unsupported;
            U64("unsupported_calls", u);
            b->unsupported = u;
            rc = write_end(b);
            b->ended = 1;
        } else {
            uint16_t t = 0;
            for (uint16_t k = MAYA_REC_CALL; k <= MAYA_REC_MARKER; k++)
                if (!strcmp(type, maya_rec_type_name(k)))
                    t = k;
            if (!t || t == MAYA_REC_DNN)
                return bad(b, "unknown record type \"%s\"; expected header, stream, comm, call, launch, gemm, "
                           "memcpy, memset, alloc, free, event_record, stream_wait, sync, host_func, coll, "
                           "marker, graph or end", type);
            return call_line(b, t, kv, n);
        }
        if (rc < 0)
            return -1;
    }
    for (int i = 1; i < n; i++)
        if (!kv[i].used)
            return bad(b, "%s: unknown %s \"%s\" (maya trace build --help lists the fields)", type,
                       kv[i].value ? "field" : "flag", kv[i].key);
    return 0;
}

int col_trace_build(const char *text_path, const char *out_path)
{
    char *text;
    if (maya_read_file(text_path, &text, NULL) < 0)
        return -1;
    struct builder b;
    memset(&b, 0, sizeof b);
    b.path = text_path;
    col_header_init(&b.hdr, MAYA_TRACE_RANK);
    b.hdr.rank = 0;
    b.hdr.world_size = 1;
    b.hdr.local_rank = 0;
    b.hdr.gpus_per_node = 8;
    b.total_mem = 80ull << 30;
    snprintf(b.hdr.gpu, sizeof b.hdr.gpu, "H100-SXM");
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, out_path) < 0) {
        free(text);
        return -1;
    }
    b.fp = af.fp;
    b.shape = col_shape_new();
    int rc = b.shape ? col_writer_open(af.fp, out_path, &b.w) : maya_error("out of memory");
    char *next = NULL;
    for (char *line = text; rc == 0 && line; line = next) {
        char *nl = strchr(line, '\n');
        next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = 0;
        b.line++;
        rc = do_line(&b, line);
    }
    if (rc == 0)
        rc = write_header(&b);
    if (rc == 0 && !b.ended)
        rc = write_end(&b);
    if (rc == 0)
        rc = col_writer_flush(b.w);
    if (rc == 0)
        rc = maya_atomic_commit(&af);
    else
        maya_atomic_abort(&af);
    col_writer_free(b.w);
    col_shape_free(b.shape);
    for (uint32_t i = 0; i < b.nstrs; i++)
        free(b.strs[i]);
    free(b.strs);
    free(b.kernel_of_str);
    free(text);
    return rc;
}
