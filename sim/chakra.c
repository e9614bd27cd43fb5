/* Chakra execution traces of a replayed job: one PREFIX.<rank>.et per rank
 * in the MLCommons Chakra schema (the messages maya writes are in
 * sim/chakra_et.proto, field numbers as Chakra's schema/protobuf/et_def.proto
 * defines them), and PREFIX.comm_group.json with each communicator's ranks.
 *
 * The file is what Chakra's protolib writes: a GlobalMetadata message, then
 * one Node message per node, each preceded by its length as a varint. The
 * encoding is protobuf's wire format, written here directly (varints,
 * length-delimited fields, packed repeated integers), so that maya needs no
 * protobuf library to build; the test decodes the files with one.
 *
 * The graph, per rank:
 *   - a CPU node (COMP_NODE, is_cpu_op) for the host's time before each
 *     call that puts work on a device or waits for one: the program's own
 *     gaps and the calls' host costs since the previous such node; each
 *     depends on the previous one (ctrl_deps), and a synchronising call's on
 *     the device nodes it waits for (data_deps);
 *   - a device node per kernel, copy or host function (COMP_NODE), per
 *     collective (COMM_COLL_NODE: comm_type, comm_size in bytes, pg_name the
 *     communicator's group in comm_group.json) and per send or recv
 *     (COMM_SEND_NODE/COMM_RECV_NODE: comm_src, comm_dst as global ranks,
 *     comm_tag the pair's sequence number), depending on the CPU node that
 *     issued it and on the previous node of its stream; an event wait adds
 *     the node the event was recorded after on the other stream.
 * Durations are maya's estimates in microseconds (Chakra's unit), rounded
 * with the remainder carried to the next node of the same class (compute or
 * communication) on the same stream, or of the host, so that each one's sum
 * stays exact to 1 us; start_time_micros is the replay's.
 *
 * Cost: O(ops) time and memory per rank (the rank's nodes are encoded one
 * at a time into a reused buffer).
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "maya/common.h"
#include "maya/trace_format.h"

/* Chakra's enums (et_def.proto) */
enum { ET_COMP_NODE = 4, ET_COMM_SEND_NODE = 5, ET_COMM_RECV_NODE = 6, ET_COMM_COLL_NODE = 7 };
enum { ET_ALL_REDUCE = 0, ET_REDUCE = 1, ET_ALL_GATHER = 2, ET_GATHER = 3, ET_SCATTER = 4, ET_BROADCAST = 5,
       ET_ALL_TO_ALL = 6, ET_REDUCE_SCATTER = 7 };

/* ---- protobuf wire format ---- */

struct pb {
    uint8_t *p;
    size_t n, cap;
    int oom;
};

static void pb_raw(struct pb *b, const void *data, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + len)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    do {
        buf[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            buf[n] |= 0x80;
        n++;
    } while (v);
    pb_raw(b, buf, n);
}

static void pb_key(struct pb *b, int field, int wire)
{
    pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

static void pb_uint(struct pb *b, int field, uint64_t v)
{
    pb_key(b, field, 0);
    pb_varint(b, v);
}

static void pb_bytes(struct pb *b, int field, const void *data, size_t len)
{
    pb_key(b, field, 2);
    pb_varint(b, len);
    pb_raw(b, data, len);
}

static void pb_str(struct pb *b, int field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* A packed repeated uint64 field (proto3's default for repeated scalars). */
static void pb_packed(struct pb *b, int field, const uint64_t *v, int n, struct pb *tmp)
{
    if (n <= 0)
        return;
    tmp->n = 0;
    for (int i = 0; i < n; i++)
        pb_varint(tmp, v[i]);
    b->oom |= tmp->oom;
    pb_bytes(b, field, tmp->p, tmp->n);
}

/* AttributeProto { name = 1; oneof value { int64_val = 9; bool_val = 27;
 * string_val = 29; ... } } as Node.attr (field 10). */
static void attr_begin(struct pb *a, const char *name)
{
    a->n = 0;
    pb_str(a, 1, name);
}

static void attr_int(struct pb *node, struct pb *a, const char *name, int64_t v)
{
    attr_begin(a, name);
    pb_uint(a, 9, (uint64_t)v);
    node->oom |= a->oom;
    pb_bytes(node, 10, a->p, a->n);
}

static void attr_bool(struct pb *node, struct pb *a, const char *name, int v)
{
    attr_begin(a, name);
    pb_uint(a, 27, v ? 1 : 0);
    node->oom |= a->oom;
    pb_bytes(node, 10, a->p, a->n);
}

static void attr_str(struct pb *node, struct pb *a, const char *name, const char *v)
{
    attr_begin(a, name);
    pb_str(a, 29, v);
    node->oom |= a->oom;
    pb_bytes(node, 10, a->p, a->n);
}

/* ---- the graph ---- */

struct exporter {
    const struct sim_job *j;
    FILE *fp;
    struct pb node, tmp, attr;
    uint64_t next_id;
    int32_t **members;            /* by comm index: global rank of each comm rank, -1 unknown */
};

struct et_node {
    const char *name;
    int type;
    uint64_t ctrl[1];
    int nctrl;
    uint64_t deps[4 + 64];        /* a device sync waits on each of the rank's streams */
    int ndeps;
    uint64_t start_us, dur_us;
    int cpu;
    /* communication */
    const struct sim_xfer_info *x;
    uint32_t comm;
};

static void dep(struct et_node *n, uint64_t id)
{
    if (!id || n->ndeps >= (int)(sizeof n->deps / sizeof n->deps[0]))
        return;
    for (int i = 0; i < n->ndeps; i++)
        if (n->deps[i] == id)
            return;
    n->deps[n->ndeps++] = id;
}

static int coll_type(uint32_t op)
{
    switch (op) {
    case MAYA_COLL_ALLREDUCE: return ET_ALL_REDUCE;
    case MAYA_COLL_REDUCE: return ET_REDUCE;
    case MAYA_COLL_ALLGATHER: return ET_ALL_GATHER;
    case MAYA_COLL_GATHER: return ET_GATHER;
    case MAYA_COLL_SCATTER: return ET_SCATTER;
    case MAYA_COLL_BROADCAST: return ET_BROADCAST;
    case MAYA_COLL_ALLTOALL: return ET_ALL_TO_ALL;
    case MAYA_COLL_REDUCESCATTER: return ET_REDUCE_SCATTER;
    default: return -1;
    }
}

/* Write one Node, length-prefixed; its id. 0 on error. */
static uint64_t emit(struct exporter *E, const struct et_node *n)
{
    struct pb *b = &E->node;
    b->n = 0;
    uint64_t id = ++E->next_id;
    pb_uint(b, 1, id);
    pb_str(b, 2, n->name);
    pb_uint(b, 3, (uint64_t)n->type);
    pb_packed(b, 4, n->ctrl, n->nctrl, &E->tmp);
    pb_packed(b, 5, n->deps, n->ndeps, &E->tmp);
    if (n->start_us)
        pb_uint(b, 6, n->start_us);
    if (n->dur_us)
        pb_uint(b, 7, n->dur_us);
    attr_bool(b, &E->attr, "is_cpu_op", n->cpu);
    if (n->x) {
        const struct sim_xfer_info *x = n->x;
        attr_int(b, &E->attr, "comm_size", (int64_t)x->bytes);
        if (n->type == ET_COMM_COLL_NODE) {
            char pg[16];
            snprintf(pg, sizeof pg, "%u", n->comm + 1);
            attr_int(b, &E->attr, "comm_type", coll_type(x->coll_op));
            attr_str(b, &E->attr, "pg_name", pg);
        } else {
            const int32_t *m = E->members[n->comm];
            int send = x->coll_op == MAYA_COLL_SEND;
            attr_int(b, &E->attr, "comm_src", m[send ? x->comm_rank : x->peer]);
            attr_int(b, &E->attr, "comm_dst", m[send ? x->peer : x->comm_rank]);
            attr_int(b, &E->attr, "comm_tag", (int64_t)(x->seq & 0x7fffffff));
        }
    }
    if (b->oom || E->tmp.oom || E->attr.oom) {
        maya_error("out of memory writing a Chakra trace");
        return 0;
    }
    struct pb len = { 0 };
    pb_varint(&len, b->n);
    int ok = !len.oom && fwrite(len.p, 1, len.n, E->fp) == len.n && fwrite(b->p, 1, b->n, E->fp) == b->n;
    free(len.p);
    if (!ok) {
        maya_error("writing a Chakra trace: %m");
        return 0;
    }
    return id;
}

static uint64_t micros(uint64_t ns, uint64_t *carry)
{
    uint64_t t = ns + *carry;
    *carry = t % 1000;
    return t / 1000;
}

static int is_device(const struct sim_op *o)
{
    return o->stream && sim_device_work(o);
}

/* The streams one rank's nodes go on: index in r->streams by global stream. */
struct lanes {
    uint64_t *last;               /* by global stream index: its last node */
    uint64_t *pending;            /* an event wait for the stream's next node */
    uint64_t *carry;              /* rounding carried to its next node: [2s] compute, [2s+1]
                                     communication (kept apart, so that each class sums true) */
    uint64_t *event;              /* by rank event index: the node recorded after */
};

static int write_rank(struct exporter *E, const struct sim_rank *r, struct lanes *L)
{
    const struct sim_job *j = E->j;
    /* GlobalMetadata { version = 1 } */
    struct pb *b = &E->node;
    b->n = 0;
    pb_str(b, 1, "0.0.4");
    struct pb len = { 0 };
    pb_varint(&len, b->n);
    int ok = !b->oom && !len.oom && fwrite(len.p, 1, len.n, E->fp) == len.n && fwrite(b->p, 1, b->n, E->fp) == b->n;
    free(len.p);
    if (!ok)
        return maya_error("writing a Chakra trace: %m");
    uint64_t host_prev = 0, host_ns = 0, host_carry = 0, x = 0;
    for (uint64_t k = 0; k < r->nops; k++) {
        const struct sim_op *o = &r->ops[k];
        const struct sim_time *t = &r->times[k];
        host_ns += o->gap_ns + o->host_ns;
        if (o->kind == SK_EVENT_RECORD && o->stream) {
            if (o->arg < r->nevents)
                L->event[o->arg] = L->last[o->stream - 1];
            continue;
        }
        if (o->kind == SK_STREAM_WAIT && o->stream) {
            if (o->arg < r->nevents && L->event[o->arg])
                L->pending[o->stream - 1] = L->event[o->arg];
            continue;
        }
        int dev = is_device(o);
        if (!dev && o->kind != SK_SYNC && k + 1 < r->nops)
            continue;
        struct et_node h = { .name = dev ? "host: launch" : o->kind == SK_SYNC ? "host: synchronize" : "host",
                             .type = ET_COMP_NODE, .cpu = 1 };
        if (host_prev)
            h.ctrl[h.nctrl++] = host_prev;
        h.dur_us = micros(host_ns, &host_carry);
        host_ns = 0;
        if (o->kind == SK_SYNC) {
            if (o->sub == MAYA_SYNC_STREAM && o->arg >= 1 && o->arg <= j->nstreams)
                dep(&h, L->last[o->arg - 1]);
            else if (o->sub == MAYA_SYNC_EVENT && o->arg < r->nevents)
                dep(&h, L->event[o->arg]);
            else
                for (uint32_t s = 0; s < r->nstreams; s++)
                    dep(&h, L->last[r->streams[s]]);
        }
        if (!(host_prev = emit(E, &h)))
            return -1;
        if (!dev)
            continue;
        uint32_t s = o->stream - 1;
        struct et_node d = { .name = sim_name(j, o->name), .type = ET_COMP_NODE };
        dep(&d, host_prev);
        dep(&d, L->last[s]);
        dep(&d, L->pending[s]);
        L->pending[s] = 0;
        d.dur_us = micros(o->dev_ns, &L->carry[2 * (size_t)s + (o->kind == SK_COLL || o->kind == SK_P2P)]);
        d.start_us = t->dev_start / 1000;
        if (o->kind == SK_COLL || o->kind == SK_P2P) {
            while (x < r->nxinfo && r->xinfo[x].op < k)
                x++;
            if (x >= r->nxinfo || r->xinfo[x].op != k)
                return maya_error("rank %d: op %" PRIu64 " has no recorded size (load the job with keep_xfers)",
                                  r->rank, k);
            d.x = &r->xinfo[x];
            d.comm = o->arg;
            d.type = o->kind == SK_P2P ? (d.x->coll_op == MAYA_COLL_SEND ? ET_COMM_SEND_NODE : ET_COMM_RECV_NODE)
                                       : ET_COMM_COLL_NODE;
            if (d.type == ET_COMM_COLL_NODE && coll_type(d.x->coll_op) < 0)
                return maya_error("rank %d: collective op %u has no Chakra counterpart", r->rank, d.x->coll_op);
        }
        uint64_t id = emit(E, &d);
        if (!id)
            return -1;
        L->last[s] = id;
        if (o->flags & (SF_HOST_WAITS | SF_DEVICE_SYNC)) {
            /* the host waits for the op (a synchronous copy) or the device */
            struct et_node w = { .name = "host: wait", .type = ET_COMP_NODE, .cpu = 1 };
            w.ctrl[w.nctrl++] = host_prev;
            dep(&w, id);
            if (o->flags & SF_DEVICE_SYNC)
                for (uint32_t q = 0; q < r->nstreams; q++)
                    dep(&w, L->last[r->streams[q]]);
            if (!(host_prev = emit(E, &w)))
                return -1;
        }
    }
    return 0;
}

/* Who is who in each communicator, from the members' own calls. */
static int find_members(struct exporter *E)
{
    const struct sim_job *j = E->j;
    E->members = calloc(MAYA_MAX(j->ncomms, 1), sizeof *E->members);
    if (!E->members)
        return maya_error("out of memory writing Chakra traces");
    for (uint32_t c = 0; c < j->ncomms; c++) {
        if (!(E->members[c] = malloc(MAYA_MAX(j->comms[c].nranks, 1) * sizeof **E->members)))
            return maya_error("out of memory writing Chakra traces");
        for (int m = 0; m < j->comms[c].nranks; m++)
            E->members[c][m] = -1;
    }
    for (int i = 0; i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        for (uint64_t x = 0; x < r->nxinfo; x++) {
            const struct sim_xfer_info *xi = &r->xinfo[x];
            uint32_t c = r->ops[xi->op].arg;
            if (c >= j->ncomms || xi->comm_rank < 0 || xi->comm_rank >= j->comms[c].nranks)
                continue;
            int32_t *slot = &E->members[c][xi->comm_rank];
            for (int m = 0; m < j->comms[c].nranks; m++)
                if (m != xi->comm_rank && E->members[c][m] == r->rank)
                    return maya_error("rank %d is two members of communicator 0x%" PRIx64 " (one process driving "
                                      "several GPUs): a Chakra trace describes one GPU, so this job cannot be "
                                      "exported", r->rank, j->comms[c].id);
            *slot = r->rank;
        }
    }
    return 0;
}

static int write_groups(struct exporter *E, const char *path)
{
    const struct sim_job *j = E->j;
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    fputc('{', af.fp);
    int first = 1;
    for (uint32_t c = 0; c < j->ncomms; c++) {
        int known = 1;
        for (int m = 0; m < j->comms[c].nranks; m++)
            known &= E->members[c][m] >= 0;
        if (!known)
            continue; /* a communicator none of whose calls were replayed */
        fprintf(af.fp, "%s\n  \"%u\": [", first ? "" : ",", c + 1);
        for (int m = 0; m < j->comms[c].nranks; m++)
            fprintf(af.fp, "%s%d", m ? ", " : "", E->members[c][m]);
        fputc(']', af.fp);
        first = 0;
    }
    fputs("\n}\n", af.fp);
    return maya_atomic_commit(&af);
}

int sim_export_chakra(const struct sim_job *j, const char *dir, const char *prefix)
{
    if (!j->keep_xfers)
        return maya_error("the job was loaded without its transfers' sizes (keep_xfers)");
    if (!j->run_ok)
        return maya_error("the job was not replayed to its end: no durations to export");
    struct exporter E = { .j = j };
    struct lanes L = { 0 };
    uint32_t maxev = 1;
    for (int i = 0; i < j->nranks; i++)
        maxev = MAYA_MAX(maxev, j->ranks[i].nevents);
    int rc = find_members(&E);
    if (rc == 0) {
        L.last = calloc(MAYA_MAX(j->nstreams, 1), sizeof *L.last);
        L.pending = calloc(MAYA_MAX(j->nstreams, 1), sizeof *L.pending);
        L.carry = calloc(2 * (size_t)MAYA_MAX(j->nstreams, 1), sizeof *L.carry);
        L.event = calloc(maxev, sizeof *L.event);
        if (!L.last || !L.pending || !L.carry || !L.event)
            rc = maya_error("out of memory writing Chakra traces");
    }
    char path[PATH_MAX];
    for (int i = 0; rc == 0 && i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        memset(L.event, 0, maxev * sizeof *L.event);
        if (maya_snprintf(path, sizeof path, "%s/%s.%d.et", dir, prefix, r->rank) < 0) {
            rc = -1;
            break;
        }
        struct maya_atomic_file af;
        if (maya_atomic_open(&af, path) < 0) {
            rc = -1;
            break;
        }
        E.fp = af.fp;
        E.next_id = 0;
        if (write_rank(&E, r, &L) < 0) {
            maya_atomic_abort(&af);
            rc = -1;
        } else {
            rc = maya_atomic_commit(&af);
        }
    }
    if (rc == 0 && maya_snprintf(path, sizeof path, "%s/%s.comm_group.json", dir, prefix) == 0)
        rc = write_groups(&E, path);
    else if (rc == 0)
        rc = -1;
    for (uint32_t c = 0; E.members && c < j->ncomms; c++)
        free(E.members[c]);
    free(E.members);
    free(E.node.p);
    free(E.tmp.p);
    free(E.attr.p);
    free(L.last);
    free(L.pending);
    free(L.carry);
    free(L.event);
    return rc;
}
