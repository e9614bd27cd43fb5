/* `maya trace dump`: print every record of a trace, one per line, with all
 * decoded fields. Kernel parameters are shown by type (from the kernel's
 * layout); pointers are shown with the allocation they fall in, which the
 * dump follows from the ALLOC/FREE records before them. */
#define _GNU_SOURCE
#include "maya/trace_dump.h"
#include "maya/common.h"
#include "maya/job_trace.h"
#include "maya/kwork.h"
#include "maya/trace_reader.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Live allocations seen so far, for naming the allocation a pointer is in. */
struct live {
    uint64_t base, bytes;
    uint64_t seq;                /* call seq of the allocation */
};

struct dump {
    FILE *out;
    struct maya_trace_reader *r;
    struct live *live;
    size_t nlive, cap;
};

static void live_add(struct dump *d, uint64_t base, uint64_t bytes, uint64_t seq)
{
    if (d->nlive == d->cap) {
        size_t n = d->cap ? d->cap * 2 : 64;
        struct live *p = realloc(d->live, n * sizeof *p);
        if (!p)
            return;
        d->live = p;
        d->cap = n;
    }
    d->live[d->nlive++] = (struct live){ base, bytes, seq };
}

static void live_remove(struct dump *d, uint64_t base)
{
    for (size_t i = 0; i < d->nlive; i++)
        if (d->live[i].base == base) {
            d->live[i] = d->live[--d->nlive];
            return;
        }
}

static const struct live *live_find(const struct dump *d, uint64_t p)
{
    for (size_t i = 0; i < d->nlive; i++)
        if (p >= d->live[i].base && p < d->live[i].base + MAYA_MAX(d->live[i].bytes, 1))
            return &d->live[i];
    return NULL;
}

static void print_ptr(struct dump *d, uint64_t p)
{
    fprintf(d->out, "0x%" PRIx64, p);
    const struct live *a = live_find(d, p);
    if (a)
        fprintf(d->out, "[alloc#%" PRIu64 "+%" PRIu64 "]", a->seq, p - a->base);
}

static const char *kparam_kind_name(unsigned k)
{
    static const char *names[] = { "bytes", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
                                   "f16", "bf16", "f32", "f64", "ptr", "bool", "char" };
    return k < MAYA_ARRAY_LEN(names) ? names[k] : "?";
}

/* IEEE half and bfloat16 values of kernel parameters, for printing. */
static float half_to_float(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float v = exp == 0 ? ldexpf((float)mant, -24)
              : exp == 31 ? (mant ? NAN : INFINITY)
                          : ldexpf((float)(mant | 0x400), exp - 25);
    return (h & 0x8000) ? -v : v;
}

static float bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void print_param(struct dump *d, const struct maya_kparam *p, const unsigned char *v)
{
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        int64_t i64; uint64_t u64; float f32; double f64;
    } x;
    memset(&x, 0, sizeof x);
    memcpy(&x, v, MAYA_MIN(p->bytes, sizeof x));
    FILE *o = d->out;
    switch (p->kind) {
    case MAYA_KP_I8: fprintf(o, "%d", x.i8); break;
    case MAYA_KP_U8: fprintf(o, "%u", x.u8); break;
    case MAYA_KP_I16: fprintf(o, "%d", x.i16); break;
    case MAYA_KP_U16: fprintf(o, "%u", x.u16); break;
    case MAYA_KP_I32: fprintf(o, "%d", x.i32); break;
    case MAYA_KP_U32: fprintf(o, "%u", x.u32); break;
    case MAYA_KP_I64: fprintf(o, "%" PRId64, x.i64); break;
    case MAYA_KP_U64: fprintf(o, "%" PRIu64, x.u64); break;
    case MAYA_KP_F16: fprintf(o, "%.5g", half_to_float(x.u16)); break;
    case MAYA_KP_BF16: fprintf(o, "%.4g", bf16_to_float(x.u16)); break;
    case MAYA_KP_F32: fprintf(o, "%.9g", x.f32); break;
    case MAYA_KP_F64: fprintf(o, "%.17g", x.f64); break;
    case MAYA_KP_BOOL: fprintf(o, "%s", x.u8 ? "true" : "false"); break;
    case MAYA_KP_CHAR:
        if (x.u8 >= 32 && x.u8 < 127 && x.u8 != '\'')
            fprintf(o, "'%c'", x.u8);
        else
            fprintf(o, "%d", x.i8);
        break;
    case MAYA_KP_PTR: print_ptr(d, x.u64); break;
    default:
        fprintf(o, "0x");
        for (unsigned i = 0; i < p->bytes; i++)
            fprintf(o, "%02x", v[i]);
        break;
    }
}

static void print_end_devices(FILE *o, const struct maya_end_device *dv, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        fprintf(o, " dev%d_peak=%" PRIu64 " dev%d_total=%" PRIu64, dv[i].device, dv[i].peak_bytes, dv[i].device,
                dv[i].total_bytes);
}

static void print_call(struct dump *d, const struct maya_rec_hdr *h, const struct maya_call *c)
{
    fprintf(d->out, "%-12s seq=%" PRIu64 " t=%" PRIu64 "..%" PRIu64 " tid=%u dev=%d stream=%" PRIu64
            " api=%s result=%d", maya_rec_type_name(h->type), c->seq, c->t_enter_ns, c->t_exit_ns,
            c->tid, c->device, c->stream, maya_trace_string(d->r, c->api), c->result);
    if (c->measured_ns || (h->flags & MAYA_F_MEASURED))
        fprintf(d->out, " measured_ns=%" PRIu64, c->measured_ns);
    if (h->flags & MAYA_F_UNSUPPORTED)
        fprintf(d->out, " UNSUPPORTED");
    if (h->flags & MAYA_F_HOST_WAITS)
        fprintf(d->out, " host_waits");
    if (h->flags & MAYA_F_DEVICE_SYNC)
        fprintf(d->out, " device_sync");
    if (h->flags & MAYA_F_FROM_GRAPH)
        fprintf(d->out, " from_graph");
    if (h->flags & MAYA_F_CAPTURING)
        fprintf(d->out, " capturing");
}

/* cublasOperation_t as cuBLAS writes it; the value comes from the trace,
 * so anything else (negative included) is shown as '?'. */
static char trans_letter(int32_t op)
{
    return op >= 0 && op < 3 ? "NTC"[op] : '?';
}

static void print_tensor(FILE *o, const char *name, const struct maya_tensor *t)
{
    if (t->ndims <= 0)
        return;
    fprintf(o, " %s=dtype%d[", name, t->dtype);
    for (int i = 0; i < t->ndims && i < MAYA_TENSOR_MAX_DIMS; i++)
        fprintf(o, "%s%" PRId64, i ? "," : "", t->dims[i]);
    fprintf(o, "]/[");
    for (int i = 0; i < t->ndims && i < MAYA_TENSOR_MAX_DIMS; i++)
        fprintf(o, "%s%" PRId64, i ? "," : "", t->strides[i]);
    fprintf(o, "]");
}

static void print_triple(FILE *o, const char *name, const int64_t v[3], int n)
{
    fprintf(o, " %s=", name);
    for (int i = 0; i < n; i++)
        fprintf(o, "%s%" PRId64, i ? "," : "", v[i]);
}

static void dump_record(struct dump *d, const struct maya_rec_hdr *h)
{
    FILE *o = d->out;
    const struct maya_trace_reader *r = d->r;
    if (maya_rec_is_call(h->type))
        print_call(d, h, maya_rec_call(h));
    switch (h->type) {
    case MAYA_REC_STRING: {
        const struct maya_rec_string *s = (const void *)h;
        fprintf(o, "string       id=%u \"%s\"", s->id, maya_trace_string(r, s->id));
        break;
    }
    case MAYA_REC_PROCESS: {
        const struct maya_rec_process *p = (const void *)h;
        fprintf(o, "process      host=%s mode=%s copy_threshold=%u cmdline=\"%s\"",
                maya_trace_string(r, p->hostname), p->mode == 2 ? "passthrough" : "emulate",
                p->copy_threshold, maya_trace_string(r, p->cmdline));
        break;
    }
    case MAYA_REC_DEVICE: {
        const struct maya_rec_device *v = (const void *)h;
        fprintf(o, "device       ordinal=%d global=%d gpu=%s total_mem=%" PRIu64, v->ordinal,
                v->global_index, maya_trace_string(r, v->gpu), v->total_mem_bytes);
        break;
    }
    case MAYA_REC_STREAM: {
        const struct maya_rec_stream *s = (const void *)h;
        fprintf(o, "stream       id=%" PRIu64 " dev=%d priority=%d%s%s%s%s", s->stream, s->device,
                s->priority, s->flags & MAYA_STREAM_LEGACY ? " legacy" : "",
                s->flags & MAYA_STREAM_PER_THREAD ? " per_thread" : "",
                s->flags & MAYA_STREAM_NON_BLOCKING ? " non_blocking" : "",
                s->flags & MAYA_STREAM_GRAPH ? " graph" : "");
        break;
    }
    case MAYA_REC_KERNEL: {
        const struct maya_rec_kernel *k = (const void *)h;
        fprintf(o, "kernel       id=%u name=\"%s\" mangled=%s params=%u param_bytes=%u", k->id,
                maya_trace_string(r, k->name), maya_trace_string(r, k->mangled), k->nparams,
                k->param_bytes);
        const struct maya_kparam *p = maya_kernel_params(k);
        for (uint32_t i = 0; i < k->nparams; i++)
            fprintf(o, " p%u=%s@%u:%u", i, kparam_kind_name(p[i].kind), p[i].offset, p[i].bytes);
        const struct maya_kfeature *f = maya_kernel_features(k);
        for (uint32_t i = 0; i < k->nfeatures; i++)
            fprintf(o, " %s=%u", maya_trace_string(r, f[i].name), f[i].value);
        if (k->h.flags & MAYA_F_SASS_UNREAD)
            fprintf(o, " sass_unread");
        const char *why = NULL;
        const struct maya_kwork *w = maya_kernel_work(k, &why);
        if (w) {
            fprintf(o, " work=%s sm=%u exprs=%u terms=%u%s%s%s%s%s%s", w->source == MAYA_KW_SASS ? "sass" : "ptx",
                    w->sm, w->nexprs, w->nterms, w->flags & MAYA_KW_F_LOOP_UNRESOLVED ? " loop_unresolved" : "",
                    w->flags & MAYA_KW_F_TRUNCATED ? " truncated" : "",
                    w->flags & MAYA_KW_F_BYTES_UNKNOWN ? " bytes_unknown" : "",
                    w->flags & MAYA_KW_F_STORES_UNKNOWN ? " stores_unknown" : "",
                    w->flags & MAYA_KW_F_WARP_MMA ? " warp_mma" : "", w->flags & MAYA_KW_F_GROUP_MMA ? " group_mma" : "");
            const struct maya_kterm *t = maya_kwork_terms(w);
            for (uint32_t i = 0; i < w->nterms; i++) {
                char e[4096];
                maya_kwork_expr_text(w, t[i].mult, e, sizeof e);
                fprintf(o, "\n    %s %g", maya_kw_class_name(t[i].cls), (double)t[i].amount);
                if (t[i].param != MAYA_KW_NO_PARAM)
                    fprintf(o, " via param@%u", t[i].param);
                if (t[i].flags & MAYA_KT_F_SAME_EACH_BLOCK)
                    fprintf(o, " same_each_block");
                if (t[i].flags & MAYA_KT_F_SAME_EACH_THREAD)
                    fprintf(o, " same_each_thread");
                if (t[i].body)
                    fprintf(o, " body=%u", t[i].body);
                fprintf(o, " x %s", e);
            }
        } else if (why) {
            fprintf(o, " work=damaged (%s)", why);
        }
        break;
    }
    case MAYA_REC_VALUE_READ: {
        const struct maya_rec_value_read *v = (const void *)h;
        static const char *kinds[] = { "real", "none", "kernel", "library", "copy", "memset", "coll" };
        const char *who = "";
        if (v->writer_kind == MAYA_WRITER_KERNEL) {
            const struct maya_rec_kernel *k = maya_trace_kernel(r, v->writer);
            who = k ? maya_trace_string(r, k->name) : "?";
        } else if (v->writer_kind != MAYA_WRITER_NONE) {
            who = maya_trace_string(r, v->writer);
        }
        fprintf(o, "value_read   src=0x%" PRIx64 " bytes=%" PRIu64 " not_real=%" PRIu64 " writer=%s%s%s", v->src,
                v->bytes, v->unreal_bytes, v->writer_kind < 7 ? kinds[v->writer_kind] : "?", who[0] ? ":" : "",
                who ? who : "?");
        if (v->declared)
            fprintf(o, " declared=\"%s\"", maya_trace_string(r, v->declared));
        break;
    }
    case MAYA_REC_COMM: {
        const struct maya_rec_comm *c = (const void *)h;
        fprintf(o, "comm         id=0x%016" PRIx64 " rank=%d/%d dev=%d gpu=%d parent=0x%" PRIx64
                " color=%d key=%d", c->comm, c->rank, c->nranks, c->device, c->global_gpu, c->parent,
                c->color, c->key);
        break;
    }
    case MAYA_REC_LAUNCH: {
        const struct maya_rec_launch *l = (const void *)h;
        const struct maya_rec_kernel *k = maya_trace_kernel(r, l->kernel);
        fprintf(o, " kernel=\"%s\" grid=%u,%u,%u block=%u,%u,%u smem=%u",
                k ? maya_trace_string(r, k->name) : "?", l->grid[0], l->grid[1], l->grid[2],
                l->block[0], l->block[1], l->block[2], l->smem_bytes);
        if (l->cluster[0])
            fprintf(o, " cluster=%u,%u,%u", l->cluster[0], l->cluster[1], l->cluster[2]);
        if (l->flags & MAYA_LAUNCH_DRIVER)
            fprintf(o, " driver");
        if (l->flags & MAYA_LAUNCH_COOPERATIVE)
            fprintf(o, " cooperative");
        const unsigned char *pv = (const unsigned char *)(l + 1);
        if (k && k->nparams && l->param_bytes >= k->param_bytes) {
            const struct maya_kparam *p = maya_kernel_params(k);
            fprintf(o, " args=(");
            for (uint32_t i = 0; i < k->nparams; i++) {
                fprintf(o, "%s%s:", i ? ", " : "", kparam_kind_name(p[i].kind));
                print_param(d, &p[i], pv + p[i].offset);
            }
            fprintf(o, ")");
        } else if (l->param_bytes) {
            fprintf(o, " param_bytes=%u raw=0x", l->param_bytes);
            for (uint32_t i = 0; i < l->param_bytes && i < 256; i++)
                fprintf(o, "%02x", pv[i]);
        }
        uint32_t next;
        const struct maya_kextent *ext = maya_launch_extents(l, &next);
        for (uint32_t i = 0; ext && i < next; i++)
            fprintf(o, "%sparam@%u:%" PRIu64, i ? "," : " extents=", ext[i].param, ext[i].bytes);
        break;
    }
    case MAYA_REC_MEMCPY: {
        const struct maya_rec_memcpy *m = (const void *)h;
        fprintf(o, " kind=%s bytes=%" PRIu64 " dst=", maya_copy_kind_name(m->kind), m->bytes);
        print_ptr(d, m->dst);
        fprintf(o, " src=");
        print_ptr(d, m->src);
        fprintf(o, " src_dev=%d dst_dev=%d%s%s%s", m->src_device, m->dst_device,
                m->flags & MAYA_COPY_ASYNC ? " async" : "", m->flags & MAYA_COPY_PINNED ? " pinned" : "",
                m->flags & MAYA_COPY_PERFORMED ? " performed" : "");
        if (m->height > 1 || m->depth > 1)
            fprintf(o, " shape=%" PRIu64 "x%" PRIu64 "x%" PRIu64, m->width, m->height, m->depth);
        break;
    }
    case MAYA_REC_MEMSET: {
        const struct maya_rec_memset *m = (const void *)h;
        fprintf(o, " bytes=%" PRIu64 " dst=", m->bytes);
        print_ptr(d, m->dst);
        fprintf(o, " value=%u elem=%u%s%s", m->value, m->elem_bytes, m->flags & MAYA_COPY_ASYNC ? " async" : "",
                m->flags & MAYA_COPY_PERFORMED ? " performed" : "");
        break;
    }
    case MAYA_REC_ALLOC:
    case MAYA_REC_FREE: {
        const struct maya_rec_alloc *a = (const void *)h;
        fprintf(o, " kind=%s ptr=0x%" PRIx64 " bytes=%" PRIu64 " alloc_dev=%d used=%" PRIu64 " peak=%" PRIu64,
                maya_alloc_kind_name(a->kind), a->ptr, a->bytes, a->device, a->device_used_bytes,
                a->device_peak_bytes);
        if (a->call.result == 0 && a->kind != MAYA_ALLOC_VMM_PHYSICAL && a->kind != MAYA_ALLOC_VMM_RESERVE) {
            if (h->type == MAYA_REC_ALLOC)
                live_add(d, a->ptr, a->bytes, a->call.seq);
            else
                live_remove(d, a->ptr);
        }
        break;
    }
    case MAYA_REC_EVENT_RECORD:
    case MAYA_REC_STREAM_WAIT: {
        const struct maya_rec_event *e = (const void *)h;
        fprintf(o, " event=%" PRIu64 " version=%u flags=0x%x", e->event, e->version, e->flags);
        break;
    }
    case MAYA_REC_SYNC: {
        const struct maya_rec_sync *s = (const void *)h;
        static const char *kinds[] = { "?", "device", "stream", "event" };
        fprintf(o, " sync=%s target=%" PRIu64 " version=%u", s->kind < 4 ? kinds[s->kind] : "?",
                s->target, s->version);
        break;
    }
    case MAYA_REC_HOST_FUNC: {
        const struct maya_rec_host_func *f = (const void *)h;
        fprintf(o, " fn=0x%" PRIx64 " data=0x%" PRIx64, f->fn, f->user_data);
        break;
    }
    case MAYA_REC_GEMM: {
        const struct maya_rec_gemm *g = (const void *)h;
        fprintf(o, " lib=%s m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
                " trans=%c%c lda=%" PRId64 " ldb=%" PRId64 " ldc=%" PRId64 " ldd=%" PRId64
                " stride=%" PRId64 ",%" PRId64 ",%" PRId64 " atype=%d btype=%d ctype=%d dtype=%d"
                " compute=%d scale=%d epilogue=%d algo=%d workspace=%" PRIu64,
                g->lib == MAYA_GEMM_CUBLASLT ? "cublasLt" : "cublas", g->m, g->n, g->k, g->batch,
                trans_letter(g->transa), trans_letter(g->transb), g->lda, g->ldb, g->ldc, g->ldd,
                g->stride_a, g->stride_b, g->stride_c, g->atype, g->btype, g->ctype, g->dtype,
                g->compute_type, g->scale_type, g->epilogue, g->algo, g->workspace_bytes);
        if (g->stride_d != g->stride_c)
            fprintf(o, " stride_d=%" PRId64, g->stride_d);
        if (g->flags & MAYA_GEMM_POINTER_ARRAYS)
            fputs(" pointer_arrays", o);
        if (g->flags & MAYA_GEMM_MATVEC)
            fputs(" matvec", o);
        if (g->flags & (MAYA_GEMM_ROW_MAJOR_A | MAYA_GEMM_ROW_MAJOR_B | MAYA_GEMM_ROW_MAJOR_C | MAYA_GEMM_ROW_MAJOR_D))
            fprintf(o, " row_major=%s%s%s%s", g->flags & MAYA_GEMM_ROW_MAJOR_A ? "A" : "",
                    g->flags & MAYA_GEMM_ROW_MAJOR_B ? "B" : "", g->flags & MAYA_GEMM_ROW_MAJOR_C ? "C" : "",
                    g->flags & MAYA_GEMM_ROW_MAJOR_D ? "D" : "");
        break;
    }
    case MAYA_REC_DNN: {
        const struct maya_rec_dnn *n = (const void *)h;
        fprintf(o, " op=%s", maya_dnn_op_name(n->op));
        if (n->conv_nspatial > 0) {
            int ns = MAYA_MIN(n->conv_nspatial, 3);
            print_triple(o, "pad", n->pad_pre, ns);
            print_triple(o, "stride", n->stride, ns);
            print_triple(o, "dilation", n->dilation, ns);
            fprintf(o, " groups=%d mode=%d", n->groups, n->conv_mode);
        }
        if (n->op == MAYA_DNN_SDPA_FWD || n->op == MAYA_DNN_SDPA_BWD)
            fprintf(o, " causal=%d scale=%g dropout=%g", n->causal, n->attn_scale, n->dropout);
        fprintf(o, " compute=%d algo=%d workspace=%" PRIu64, n->compute_type, n->algo, n->workspace_bytes);
        if (n->nops)
            fprintf(o, " graph_ops=%u", n->nops);
        static const char *tn[MAYA_DNN_OTHER + 1][4] = {
            [MAYA_DNN_CONV_FWD] = { "x", "w", "y", "t3" },
            [MAYA_DNN_CONV_BWD_DATA] = { "dx", "w", "dy", "t3" },
            [MAYA_DNN_CONV_BWD_FILTER] = { "x", "dw", "dy", "t3" },
            [MAYA_DNN_MATMUL] = { "a", "b", "c", "t3" },
            [MAYA_DNN_SDPA_FWD] = { "q", "k", "v", "o" },
            [MAYA_DNN_SDPA_BWD] = { "q", "k", "v", "o" },
        };
        for (uint32_t i = 0; i < 4 && i < n->ntensors; i++) {
            const char *name = n->op <= MAYA_DNN_OTHER && tn[n->op][i] ? tn[n->op][i] : "t";
            print_tensor(o, name, &n->t[i]);
        }
        break;
    }
    case MAYA_REC_COLL: {
        const struct maya_rec_coll *c = (const void *)h;
        fprintf(o, " op=%s comm=0x%016" PRIx64 " cseq=%" PRIu64 " rank=%d/%d peer=%d count=%" PRIu64
                " dtype=%d redop=%d bytes=%" PRIu64 " group=%" PRIu64 "%s%s", maya_coll_op_name(c->op),
                c->comm, c->seq, c->rank, c->nranks, c->peer, c->count, c->dtype, c->redop, c->bytes,
                c->group, c->flags & MAYA_COLL_DATA_MOVED ? " data_moved" : "",
                c->flags & MAYA_COLL_BOTH_WAYS ? " both_ways" : "");
        break;
    }
    case MAYA_REC_GRAPH: {
        const struct maya_rec_graph *g = (const void *)h;
        fprintf(o, " graph_exec=%" PRIu64 " %s nodes=%u", g->graph_exec, g->phase == 1 ? "begin" : "end",
                g->nodes);
        break;
    }
    case MAYA_REC_MARKER: {
        const struct maya_rec_marker *m = (const void *)h;
        static const char *kinds[] = { "?", "push", "pop", "point", "start", "end" };
        fprintf(o, " marker=%s name=\"%s\"", m->kind < MAYA_ARRAY_LEN(kinds) ? kinds[m->kind] : "?",
                maya_trace_string(r, m->name));
        break;
    }
    case MAYA_REC_END: {
        const struct maya_rec_end *e = (const void *)h;
        const struct maya_end_device *dv = (const void *)(e + 1);
        fprintf(o, "end          records=%" PRIu64 " unsupported_calls=%" PRIu64 " oom=%u", e->records,
                e->unsupported_calls, e->oom);
        print_end_devices(o, dv, e->ndevices);
        break;
    }
    case MAYA_REC_JOB: {
        const struct maya_rec_job *j = (const void *)h;
        fprintf(o, "job          world_size=%d ranks=%d nodes=%d gpus_per_node=%d gpu=%.64s comms=%u "
                "collectives=%" PRIu64 " p2p_pairs=%" PRIu64 "%s", j->world_size, j->nranks, j->nodes,
                j->gpus_per_node, j->gpu, j->ncomms, j->collectives, j->p2p_pairs,
                j->flags & MAYA_JOB_F_INCOMPLETE ? " incomplete" : "");
        if (j->flags & MAYA_JOB_F_REBUILT)
            fprintf(o, " rebuilt");
        break;
    }
    case MAYA_REC_JOB_COMM: {
        const struct maya_rec_job_comm *c = (const void *)h;
        const struct maya_job_member *m = (const void *)(c + 1);
        fprintf(o, "job_comm     id=0x%016" PRIx64 " nranks=%d nodes=%d max_per_node=%d collectives=%" PRIu64
                " members=", c->comm, c->nranks, c->nodes, c->max_per_node, c->collectives);
        for (int i = 0; i < c->nranks; i++)
            fprintf(o, "%s%d@gpu%d", i ? "," : "", m[i].rank, m[i].global_gpu);
        break;
    }
    case MAYA_REC_RANK_BEGIN: {
        const struct maya_rec_rank_begin *b = (const void *)h;
        d->nlive = 0; /* allocations are per rank */
        fprintf(o, "rank_begin   rank=%d world_size=%d local_rank=%d node=%d gpus_per_node=%d pid=%u gpu=%.64s "
                "host_clock=%s%s", b->rank, b->world_size, b->local_rank, b->node, b->gpus_per_node, b->pid, b->gpu,
                maya_host_clock_name(b->flags), b->complete ? "" : " incomplete");
        break;
    }
    case MAYA_REC_RANK_END: {
        const struct maya_rec_rank_end *e = (const void *)h;
        const struct maya_end_device *dv = (const void *)(e + 1);
        fprintf(o, "rank_end     records=%" PRIu64 " unsupported_calls=%" PRIu64 " oom=%u", e->records,
                e->unsupported_calls, e->oom);
        print_end_devices(o, dv, e->ndevices);
        break;
    }
    case MAYA_REC_ELIMINATED: {
        const struct maya_rec_eliminated *e = (const void *)h;
        fprintf(o, "eliminated   source=%d how=%s stop_op=%" PRIu64 " stop_hash=0x%016" PRIx64 " check_op=%" PRIu64
                " check_hash=0x%016" PRIx64 " t=%" PRIu64, e->source,
                e->how == MAYA_ELIM_DECLARED ? "declared" : e->how == MAYA_ELIM_MATCHED ? "matched" : "?",
                e->stop_op, e->stop_hash, e->check_op, e->check_hash, e->t_ns);
        break;
    }
    case MAYA_REC_COMM_MEMBERS: {
        const struct maya_rec_comm_members *m = (const void *)h;
        const int32_t *g = (const void *)(m + 1);
        int n = (int)MAYA_MIN((uint64_t)m->nranks, (h->bytes - sizeof *m) / sizeof *g);
        fprintf(o, "comm_members id=0x%016" PRIx64 " nranks=%d ranks=", m->comm, m->nranks);
        for (int i = 0; i < n; i++)
            fprintf(o, "%s%d", i ? "," : "", g[i]);
        break;
    }
    case MAYA_REC_RANK_REBUILT: {
        const struct maya_rec_rank_rebuilt *b = (const void *)h;
        fprintf(o, "rank_rebuilt rank=%d source=%d stop_op=%" PRIu64 " own_records=%" PRIu64 " shift_ns=%" PRId64
                " how=%s%s", b->rank, b->source, b->stop_op, b->own_records, b->shift_ns,
                b->how == MAYA_ELIM_DECLARED ? "declared" : "matched",
                b->flags & MAYA_REBUILT_F_REF ? " ref" : "");
        break;
    }
    case MAYA_REC_CALL:
        break;
    default:
        if (!maya_rec_is_call(h->type))
            fprintf(o, "unknown      type=%u bytes=%u", h->type, h->bytes);
        break;
    }
    fputc('\n', o);
}

int maya_trace_dump(const char *path, FILE *out, int allow_truncated)
{
    struct dump d = { .out = out };
    if (maya_trace_open(path, &d.r) < 0)
        return -1;
    maya_trace_allow_truncated(d.r, allow_truncated);
    const struct maya_trace_header *h = maya_trace_header(d.r);
    fprintf(out, "header       version=%u kind=%s rank=%d world_size=%d local_rank=%d node=%d "
            "gpus_per_node=%d pid=%u gpu=%s flags=0x%x host_clock=%s\n", h->version,
            h->kind == MAYA_TRACE_JOB ? "job" : "rank", h->rank, h->world_size, h->local_rank, h->node,
            h->gpus_per_node, h->pid, h->gpu, h->flags, maya_host_clock_name(h->flags));
    const struct maya_rec_hdr *rec;
    int rc;
    while ((rc = maya_trace_next(d.r, &rec)) > 0)
        dump_record(&d, rec);
    if (rc == 0 && !maya_trace_complete(d.r))
        fprintf(out, "# trace is incomplete: it ends without an end record\n");
    maya_trace_close(d.r);
    free(d.live);
    return rc < 0 ? -1 : 0;
}
