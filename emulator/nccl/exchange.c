/* The data exchange of small operations, and its consistency checks.
 *
 * A small collective (total bytes up to the copy threshold) goes through
 * the communicator's rank 0: every rank sends its contribution (what it
 * sends, with the call's op, count, type, reduction, root and sequence
 * number); rank 0 takes one from each rank, in rank order, checks that they
 * describe the same call, computes each rank's result and sends it back.
 * Contributions from one rank arrive in the order it issued them, so the
 * first one waiting from a rank must be the call rank 0 is at: anything
 * else means the ranks diverged (a skipped call, other order, a different
 * count), and every rank gets an error saying which ranks called what.
 * ncclCommSplit exchanges its (color, key) the same way.
 *
 * A small ncclSend sends its data to the receiver, whose ncclRecv checks it
 * against its own count and type.
 *
 * Large operations move nothing and do not wait for peers: their trace is
 * all that matters, and the collator checks that the ranks agree.
 */
#include "nc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *op_api(uint32_t kind)
{
    switch (kind) {
    case MAYA_COLL_ALLREDUCE: return "ncclAllReduce";
    case MAYA_COLL_BROADCAST: return "ncclBroadcast";
    case MAYA_COLL_REDUCE: return "ncclReduce";
    case MAYA_COLL_ALLGATHER: return "ncclAllGather";
    case MAYA_COLL_REDUCESCATTER: return "ncclReduceScatter";
    case MAYA_COLL_SEND: return "ncclSend";
    case MAYA_COLL_RECV: return "ncclRecv";
    case MAYA_COLL_ALLTOALL: return "ncclAlltoAll";
    case MAYA_COLL_GATHER: return "ncclGather";
    case MAYA_COLL_SCATTER: return "ncclScatter";
    case NC_KIND_SPLIT: return "ncclCommSplit";
    default: return "?";
    }
}

static int has_redop(uint32_t kind)
{
    return kind == MAYA_COLL_ALLREDUCE || kind == MAYA_COLL_REDUCE || kind == MAYA_COLL_REDUCESCATTER;
}

static int has_root(uint32_t kind)
{
    return kind == MAYA_COLL_BROADCAST || kind == MAYA_COLL_REDUCE || kind == MAYA_COLL_GATHER ||
           kind == MAYA_COLL_SCATTER;
}

const char *nc_op_str(uint32_t kind, uint64_t count, int dtype, int redop, int root, char *buf, size_t n)
{
    if (kind == NC_KIND_SPLIT) {
        snprintf(buf, n, "ncclCommSplit");
        return buf;
    }
    int k = snprintf(buf, n, "%s(count=%llu, %s", op_api(kind), (unsigned long long)count,
                     nc_type_name((ncclDataType_t)dtype));
    if (k > 0 && (size_t)k < n && has_redop(kind))
        k += snprintf(buf + k, n - (size_t)k, ", %s", nc_redop_name(redop));
    if (k > 0 && (size_t)k < n && has_root(kind))
        k += snprintf(buf + k, n - (size_t)k, ", root=%d", root);
    if (k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, ")");
    return buf;
}

uint64_t nc_total_bytes(uint32_t op, size_t count, ncclDataType_t dtype, int nranks)
{
    uint64_t b = (uint64_t)count * nc_type_size(dtype);
    switch (op) {
    case MAYA_COLL_ALLGATHER: case MAYA_COLL_REDUCESCATTER: case MAYA_COLL_ALLTOALL:
    case MAYA_COLL_GATHER: case MAYA_COLL_SCATTER:
        return b * (uint64_t)nranks;
    default:
        return b;
    }
}

ncclResult_t nc_comm_fail(struct ncclComm *c, ncclResult_t code, const char *fmt, ...)
{
    if (c->error == ncclSuccess)
        c->error = code;
    char what[1024], desc[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return nc_fail(code, "%s: %s", nc_comm_str(c, desc, sizeof desc), what);
}

/* Elements a rank contributes, and receives, for one call. */
static uint64_t contrib_elems(uint32_t kind, uint64_t count, int rank, int root, int nranks)
{
    switch (kind) {
    case MAYA_COLL_REDUCESCATTER: case MAYA_COLL_ALLTOALL: return count * (uint64_t)nranks;
    case MAYA_COLL_BROADCAST: return rank == root ? count : 0;
    case MAYA_COLL_SCATTER: return rank == root ? count * (uint64_t)nranks : 0;
    default: return count;
    }
}

static uint64_t result_elems(uint32_t kind, uint64_t count, int rank, int root, int nranks)
{
    switch (kind) {
    case MAYA_COLL_ALLGATHER: case MAYA_COLL_ALLTOALL: return count * (uint64_t)nranks;
    case MAYA_COLL_REDUCE: return rank == root ? count : 0;
    case MAYA_COLL_GATHER: return rank == root ? count * (uint64_t)nranks : 0;
    default: return count;
    }
}

/* The value a custom (PreMulSum) op multiplies by, for this rank: given
 * at its creation, or read from device memory now (as the kernel would). */
static int premul_scalar(const struct nc_redop *o, unsigned char scalar[8])
{
    size_t sz = nc_type_size(o->dtype);
    if (o->residence == ncclScalarHostImmediate) {
        memcpy(scalar, o->scalar, sz);
        return 0;
    }
    memset(scalar, 0, 8);
    return emu_copy_bytes(scalar, o->scalar_ptr, sz) ? 0 : -1;
}

static ncclResult_t send_to(struct nc_task *t, int rank, struct nc_msg_hdr *h, const void *payload)
{
    struct ncclComm *c = t->comm;
    char why[256], op[128];
    if (nc_net_send(&c->peers[rank], h, payload, why, sizeof why) < 0)
        return nc_comm_fail(c, ncclRemoteError, "%s #%llu: cannot send to rank %d (pid %d on %s): %s",
                            nc_op_str(t->op, t->count, t->dtype, t->redop, t->peer, op, sizeof op),
                            (unsigned long long)t->seq, rank, c->peers[rank].pid, c->peers[rank].host, why);
    return ncclSuccess;
}

/* Send a contribution to rank 0 (or a small send's data to its receiver).
 * If rank 0's process is gone, its last word (an error, its departure) may
 * still be waiting here: the finish step reports what happened. */
static ncclResult_t post_to_root(struct nc_task *t, struct nc_msg_hdr *h, const void *payload)
{
    struct ncclComm *c = t->comm;
    int to = t->type == NC_T_SEND ? t->peer : 0;
    char why[256];
    if (nc_net_send(&c->peers[to], h, payload, why, sizeof why) == 0 ||
        (to == 0 && t->type != NC_T_SEND && nc_net_dead(c->peers[0].ep, why, sizeof why)))
        return ncclSuccess;
    if (t->type == NC_T_SEND && (c->peers[to].ep == 0 || nc_elim_gone(c->peers[to].rank)))
        return ncclSuccess; /* eliminated or never started: its representative's trace stands for its receive */
    return send_to(t, to, h, payload);
}

ncclResult_t nc_exchange_post(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    size_t sz = nc_type_size(t->dtype);
    uint64_t elems = 0;
    unsigned char *buf = NULL;
    int32_t split[2];
    struct nc_msg_hdr h = { .chan = NC_CH_HUB, .comm = c->id, .src = c->rank, .dst = 0, .seq = t->seq,
                            .dtype = t->dtype, .redop = t->redop, .root = t->peer, .count = t->count };
    if (t->type == NC_T_SPLIT) {
        h.type = NC_CONTRIB;
        h.kind = NC_KIND_SPLIT;
        split[0] = t->color;
        split[1] = t->key;
        h.bytes = sizeof split;
        return post_to_root(t, &h, split);
    }
    if (t->type == NC_T_SEND) {
        h.type = NC_P2P;
        h.chan = NC_CH_P2P;
        h.dst = t->peer;
        elems = t->count;
    } else {
        h.type = NC_CONTRIB;
        elems = contrib_elems(t->op, t->count, c->rank, t->peer, c->nranks);
        if (t->redop >= ncclNumOps)
            h.redop = ncclNumOps; /* custom ops compare by kind: their numbers are per rank */
    }
    h.kind = t->op;
    h.bytes = (uint32_t)(elems * sz);
    if (h.bytes) {
        buf = calloc(1, h.bytes);
        if (!buf)
            return nc_comm_fail(c, ncclSystemError, "out of memory");
        emu_copy_bytes(buf, t->sendbuf, h.bytes);
        /* aux 1: what this rank sends is not all real (real_bytes.c) */
        uint32_t kind, writer;
        h.aux = emu_real_check((uint64_t)(uintptr_t)t->sendbuf, h.bytes, &kind, &writer) != 0;
        unsigned char scalar[8];
        if (t->type == NC_T_COLL && t->redop >= ncclNumOps && premul_scalar(&t->premul, scalar) == 0)
            nc_scale(buf, elems, t->dtype, scalar);
    }
    ncclResult_t r = post_to_root(t, &h, buf);
    free(buf);
    return r;
}

/* Is the contribution m from rank r the call rank 0 is at? "" if so, else
 * why not. */
static void check_contrib(const struct nc_task *t, struct nc_msg *m, int r, char *why, size_t n)
{
    const struct ncclComm *c = t->comm;
    char mine[128], theirs[128];
    uint32_t kind = t->type == NC_T_SPLIT ? NC_KIND_SPLIT : t->op;
    int redop = t->redop >= ncclNumOps ? ncclNumOps : t->redop;
    why[0] = 0;
    nc_op_str(kind, t->count, t->dtype, redop, t->peer, mine, sizeof mine);
    if (m->h.type == NC_ERROR) {
        m->data[m->h.bytes ? m->h.bytes - 1 : 0] = 0;
        snprintf(why, n, "%s", m->h.bytes ? (const char *)m->data : "a rank cannot take part");
        return;
    }
    if (m->h.type == NC_BYE) {
        snprintf(why, n, "rank %d (pid %d on %s) left the communicator (ncclCommDestroy, Finalize or Abort) "
                 "after %llu collectives; it never issued %s #%llu that rank 0 issued",
                 r, c->peers[r].pid, c->peers[r].host, (unsigned long long)m->h.seq, mine,
                 (unsigned long long)t->seq);
        return;
    }
    nc_op_str(m->h.kind, m->h.count, m->h.dtype, m->h.redop, m->h.root, theirs, sizeof theirs);
    const char *what = kind == NC_KIND_SPLIT ? "exchange" : "collective";
    if (m->h.kind != kind || m->h.seq != t->seq) {
        snprintf(why, n, "rank %d's next call is %s as %s #%llu, while rank 0 is at %s #%llu: a rank skipped "
                 "a call, issued calls in another order, or gave a count that makes the call small (data "
                 "moved) on some ranks and large on others",
                 r, theirs, m->h.kind == NC_KIND_SPLIT ? "exchange" : "collective", (unsigned long long)m->h.seq,
                 mine, (unsigned long long)t->seq);
        return;
    }
    if (kind == NC_KIND_SPLIT) {
        if (m->h.bytes != 2 * sizeof(int32_t))
            snprintf(why, n, "rank %d sent a malformed ncclCommSplit contribution", r);
        return;
    }
    uint64_t want = contrib_elems(kind, t->count, r, t->peer, c->nranks) * nc_type_size(t->dtype);
    if (m->h.count != t->count || m->h.dtype != (int)t->dtype || m->h.root != t->peer ||
        (has_redop(kind) && m->h.redop != redop) || m->h.bytes != want)
        snprintf(why, n, "%s #%llu does not match across ranks: rank 0 calls %s, rank %d calls %s", what,
                 (unsigned long long)t->seq, mine, r, theirs);
}

/* Tell every rank the exchange failed (rank 0 included: it reports in its
 * finish step like the others). */
ncclResult_t nc_exchange_refuse(struct nc_task *t, ncclResult_t code, const char *text)
{
    struct ncclComm *c = t->comm;
    for (int r = 0; r < c->nranks; r++) {
        struct nc_msg_hdr h = { .type = NC_ERROR, .chan = NC_CH_RESULT, .comm = c->id, .src = 0, .dst = r,
                                .seq = t->seq, .kind = t->op, .aux = (uint64_t)code,
                                .bytes = (uint32_t)strlen(text) + 1 };
        char why[256];
        nc_net_send(&c->peers[r], &h, text, why, sizeof why); /* a dead rank hears nothing */
    }
    return code;
}

/* Rank 0: the results of one collective, from every rank's contribution. */
static ncclResult_t compute_and_answer(struct nc_task *t, struct nc_msg **in, const unsigned char *gone)
{
    struct ncclComm *c = t->comm;
    int n = c->nranks, root = t->peer;
    size_t sz = nc_type_size(t->dtype);
    uint64_t cnt = t->count, chunk = cnt * sz;
    unsigned char *acc = NULL, *out = NULL;
    ncclResult_t rc = ncclSuccess;

    if (t->type == NC_T_SPLIT || t->op == MAYA_COLL_ALLGATHER || t->op == MAYA_COLL_GATHER) {
        uint64_t each = t->type == NC_T_SPLIT ? 2 * sizeof(int32_t) : chunk;
        acc = malloc(each * (uint64_t)n + 1);
        for (int r = 0; acc && r < n; r++)
            memcpy(acc + each * (uint64_t)r, in[r]->data, each);
    } else if (has_redop(t->op)) {
        uint64_t elems = contrib_elems(t->op, cnt, 0, root, n);
        acc = malloc(elems * sz + 1);
        if (acc) {
            memcpy(acc, in[0]->data, elems * sz);
            for (int r = 1; r < n; r++)
                nc_reduce(acc, in[r]->data, elems, t->dtype, t->redop);
            if (t->redop == ncclAvg)
                nc_divide(acc, elems, t->dtype, n);
        }
    } else if (t->op == MAYA_COLL_ALLTOALL) {
        out = malloc(chunk * (uint64_t)n + 1);
        acc = out;
    } else {
        acc = malloc(1); /* broadcast, scatter: answered from the root's data */
    }
    if (!acc)
        return nc_exchange_refuse(t, ncclSystemError, "rank 0 ran out of memory for an exchange");
    /* The results are real if every contribution was (aux 0); otherwise
     * all of them count as not real, whichever rank's part was not. */
    uint64_t unreal = 0;
    for (int r = 0; r < n && t->type != NC_T_SPLIT; r++)
        unreal |= in[r]->h.aux != 0;

    for (int r = 0; r < n && rc == ncclSuccess; r++) {
        const void *data = acc;
        uint64_t bytes = t->type == NC_T_SPLIT ? 2 * sizeof(int32_t) * (uint64_t)n
                                               : result_elems(t->op, cnt, r, root, n) * sz;
        if (t->type == NC_T_COLL)
            switch (t->op) {
            case MAYA_COLL_BROADCAST: data = in[root]->data; break;
            case MAYA_COLL_SCATTER: data = in[root]->data + chunk * (uint64_t)r; break;
            case MAYA_COLL_REDUCESCATTER: data = acc + chunk * (uint64_t)r; break;
            case MAYA_COLL_ALLTOALL:
                for (int i = 0; i < n; i++)
                    memcpy(out + chunk * (uint64_t)i, in[i]->data + chunk * (uint64_t)r, chunk);
                break;
            default: break;
            }
        struct nc_msg_hdr h = { .type = NC_RESULT, .chan = NC_CH_RESULT, .comm = c->id, .src = 0, .dst = r,
                                .seq = t->seq, .kind = t->type == NC_T_SPLIT ? NC_KIND_SPLIT : t->op,
                                .count = cnt, .aux = unreal, .bytes = (uint32_t)bytes };
        if (!gone[r])
            rc = send_to(t, r, &h, data);
    }
    free(acc);
    return rc;
}

/* A member that duplicate-rank elimination stopped (its NC_STOP came). */
static int is_gone(const struct ncclComm *c, int r, uint64_t seq)
{
    return c->gone && c->gone[r].set && c->gone[r].from_seq <= seq;
}

static void note_gone(struct ncclComm *c, const struct nc_msg *m, int r)
{
    if (!c->gone)
        c->gone = calloc((size_t)c->nranks, sizeof *c->gone);
    if (c->gone)
        c->gone[r] = (struct nc_gone){ m->h.seq, (int32_t)m->h.aux, 1 };
}

/* The contributions of the members that stopped: their stand-in's (their
 * representative's, else rank 0's). A broadcast whose root is gone takes
 * the data of the last broadcast of that size its stand-in was the root of:
 * an all-gather made of one broadcast per root in a group (PyTorch's
 * all-gather into a list of tensors) then gathers the stand-in's value for
 * the gone member, as the all-gather itself would. Where nothing fits,
 * zeros. borrowed[r]: in[r] is another's. */
static int fill_gone(struct nc_task *t, struct nc_msg **in, const unsigned char *gone, unsigned char *borrowed)
{
    struct ncclComm *c = t->comm;
    int n = c->nranks;
    size_t sz = nc_type_size(t->dtype);
    for (int r = 0; r < n; r++) {
        if (!gone[r])
            continue;
        int s = c->gone[r].stand_in;
        if (s < 0 || s >= n || gone[s])
            s = 0;
        uint64_t want = contrib_elems(t->op, t->count, r, t->peer, n) * sz;
        struct nc_msg *from = in[s];
        if (t->op == MAYA_COLL_BROADCAST && r == t->peer) {
            from = c->root_last ? c->root_last[s] : NULL;
            if (from && from->h.dtype != (int32_t)t->dtype)
                from = NULL;
        }
        if (from && from->h.bytes == want) {
            in[r] = from;
            borrowed[r] = 1;
            continue;
        }
        struct nc_msg_hdr h = in[s] ? in[s]->h : (struct nc_msg_hdr){ 0 };
        h.bytes = (uint32_t)want;
        h.src = r;
        unsigned char *zeros = calloc(1, want + 1);
        in[r] = zeros ? nc_msg_new(&h, zeros) : NULL;
        free(zeros);
        if (!in[r])
            return -1;
    }
    return 0;
}

/* A broadcast on a communicator with gone members: keep its root's data,
 * which fill_gone lends a gone root's later broadcast. */
static int keep_root(struct ncclComm *c, int root, struct nc_msg **in, const unsigned char *gone)
{
    if (root < 0 || root >= c->nranks || gone[root] || !in[root])
        return 0;
    if (!c->root_last && !(c->root_last = calloc((size_t)c->nranks, sizeof *c->root_last)))
        return -1;
    struct nc_msg *m = nc_msg_new(&in[root]->h, in[root]->data);
    if (!m)
        return -1;
    free(c->root_last[root]);
    c->root_last[root] = m;
    return 0;
}

ncclResult_t nc_exchange_serve(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    int n = c->nranks;
    struct nc_msg **in = calloc((size_t)n, sizeof *in);
    unsigned char *gone = calloc((size_t)n, 2);
    if (!in || !gone) {
        free(in);
        free(gone);
        return nc_exchange_refuse(t, ncclSystemError, "rank 0 ran out of memory for an exchange");
    }
    unsigned char *borrowed = gone + n;
    char text[1024] = "", why[512], op[128];
    ncclResult_t code = ncclSuccess;
    uint32_t kind = t->type == NC_T_SPLIT ? NC_KIND_SPLIT : t->op;
    nc_op_str(kind, t->count, t->dtype, t->redop, t->peer, op, sizeof op);
    for (int r = 0; r < n && code == ncclSuccess; r++) {
        if (r != 0 && is_gone(c, r, t->seq)) {
            gone[r] = 1;
            if (kind == NC_KIND_SPLIT && c->peers[r].ep != 0) {
                code = ncclInvalidUsage;
                snprintf(text, sizeof text, "rank %d (global rank %d) was eliminated as a duplicate before %s #%llu: "
                         "a communicator made after the elimination cannot hold it; run without elimination", r,
                         c->peers[r].rank, op, (unsigned long long)t->seq);
            }
            continue;
        }
        emu_trace_waiting(kind, c->id, t->seq, r == c->rank ? 0 : c->peers[r].pid);
        enum nc_wait_status st = nc_mb_wait(c->id, 0, r, NC_CH_HUB, &c->peers[r], 1, &in[r], why, sizeof why);
        emu_trace_waiting_done();
        if (st == NC_WAIT_OK && in[r]->h.type == NC_STOP) {
            note_gone(c, in[r], r);
            free(in[r]);
            in[r] = NULL;
            gone[r] = 1;
            if (kind == NC_KIND_SPLIT && c->peers[r].ep != 0) {
                code = ncclInvalidUsage;
                snprintf(text, sizeof text, "rank %d (global rank %d) was eliminated as a duplicate "
                         "(duplicate-rank elimination, MAYA_DEDUP) before %s #%llu: a communicator made after "
                         "the elimination cannot hold it; run without elimination", r, c->peers[r].rank, op,
                         (unsigned long long)t->seq);
            }
            continue;
        }
        if (st != NC_WAIT_OK) {
            code = st == NC_WAIT_DEAD ? ncclRemoteError : ncclSystemError;
            snprintf(text, sizeof text, "rank %d (pid %d on %s) did not take part in %s #%llu: %s%s", r,
                     c->peers[r].pid, c->peers[r].host, op, (unsigned long long)t->seq, why,
                     st == NC_WAIT_DEAD ? "" : "; it may wait in a call the others do not make (a skipped "
                     "call, another order of calls on several communicators, or a count that makes the "
                     "call large on that rank)");
            break;
        }
        check_contrib(t, in[r], r, text, sizeof text);
        if (text[0])
            code = ncclInvalidUsage;
    }
    int any_gone = 0;
    for (int r = 0; r < n; r++)
        any_gone |= gone[r];
    if (code == ncclSuccess && kind == NC_KIND_SPLIT && any_gone) {
        for (int r = 0; r < n && code == ncclSuccess; r++)
            if (gone[r]) {
                /* a member that never started: its color and key follow from the others */
                struct nc_msg_hdr h = in[0]->h;
                h.src = r;
                int32_t none[2] = { 0, 0 };
                if (!(in[r] = nc_msg_new(&h, none)))
                    code = ncclSystemError;
            }
        if (code == ncclSuccess) {
            int32_t *ck = malloc((size_t)n * 2 * sizeof *ck);
            if (!ck)
                code = ncclSystemError;
            for (int r = 0; ck && r < n; r++)
                memcpy(ck + 2 * r, in[r]->data, 2 * sizeof *ck);
            if (ck && nc_replicas_split(c, ck, text, sizeof text) < 0)
                code = ncclInvalidUsage;
            for (int r = 0; ck && r < n; r++)
                memcpy(in[r]->data, ck + 2 * r, 2 * sizeof *ck);
            free(ck);
        }
        if (code == ncclSystemError)
            snprintf(text, sizeof text, "rank 0 ran out of memory for an exchange");
    } else if (code == ncclSuccess && kind != NC_KIND_SPLIT &&
               (fill_gone(t, in, gone, borrowed) < 0 ||
                (kind == MAYA_COLL_BROADCAST && c->gone && keep_root(c, t->peer, in, gone) < 0))) {
        code = ncclSystemError;
        snprintf(text, sizeof text, "rank 0 ran out of memory for an exchange");
    }
    ncclResult_t rc = code == ncclSuccess ? compute_and_answer(t, in, gone) : nc_exchange_refuse(t, code, text);
    for (int r = 0; r < n; r++)
        if (!borrowed[r])
            free(in[r]);
    free(in);
    free(gone);
    return rc;
}

/* A new communicator from ncclCommSplit's exchange: the ranks of this
 * color, ordered by key then by parent rank. */
static ncclResult_t split_finish(struct nc_task *t, const int32_t *ck)
{
    struct ncclComm *parent = t->comm, *c = t->made;
    if (t->color == NCCL_SPLIT_NOCOLOR || !c)
        return ncclSuccess;
    int n = parent->nranks, m = 0, me = -1;
    int *members = malloc((size_t)n * sizeof *members);
    struct nc_peer *peers = malloc((size_t)n * sizeof *peers);
    if (!members || !peers) {
        free(members);
        free(peers);
        c->state = NC_FAILED;
        c->error = ncclSystemError;
        return nc_fail(ncclSystemError, "out of memory");
    }
    for (int r = 0; r < n; r++)
        if (ck[2 * r] == t->color)
            members[m++] = r;
    for (int i = 1; i < m; i++) { /* insertion sort by (key, parent rank): stable */
        int v = members[i], j = i;
        while (j > 0 && ck[2 * members[j - 1] + 1] > ck[2 * v + 1]) {
            members[j] = members[j - 1];
            j--;
        }
        members[j] = v;
    }
    for (int i = 0; i < m; i++) {
        peers[i] = parent->peers[members[i]];
        if (members[i] == parent->rank)
            me = i;
    }
    /* Named by the parent, which split this was, and the color: the same
     * on every member, different for every group. */
    uint64_t id = parent->id ^ (0x9e3779b97f4a7c15ull * (t->seq + 1));
    id ^= (uint64_t)(uint32_t)t->color * 0xbf58476d1ce4e5b9ull;
    id ^= id >> 31;
    id *= 0x94d049bb133111ebull;
    id ^= id >> 29;
    ncclResult_t r = nc_comm_setup(c, id ? id : 1, parent->id, me, m, peers, t->color, t->key);
    free(members);
    free(peers);
    return r;
}

/* The bytes a small operation delivered are real if what it was computed
 * from was (the sender's aux says). */
static void track_result(const struct nc_task *t, const struct nc_msg *m)
{
    uint64_t p = (uint64_t)(uintptr_t)t->recvbuf;
    if (m->h.aux)
        emu_real_spoil(p, m->h.bytes, MAYA_WRITER_COLL, emu_string(op_api(t->op)));
    else
        emu_real_mark(p, m->h.bytes);
}

ncclResult_t nc_exchange_finish(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    struct nc_msg *m = NULL;
    char why[512], op[128];
    uint32_t kind = t->type == NC_T_SPLIT ? NC_KIND_SPLIT : t->op;
    nc_op_str(kind, t->count, t->dtype, t->redop, t->peer, op, sizeof op);
    ncclResult_t r = ncclSuccess;
    /* Rank 0 waits for each rank at most the timeout: wait longer for its
     * answer, which then says who did not come. */
    emu_trace_waiting(kind, c->id, t->seq, 0);
    enum nc_wait_status st = nc_mb_wait(c->id, c->rank, 0, NC_CH_RESULT, &c->peers[0], c->rank ? 2 : 1, &m, why,
                                        sizeof why);
    emu_trace_waiting_done();
    if (st != NC_WAIT_OK) {
        r = nc_comm_fail(c, st == NC_WAIT_DEAD ? ncclRemoteError : ncclSystemError,
                         "%s #%llu: no answer from rank 0 (pid %d on %s): %s%s", op, (unsigned long long)t->seq,
                         c->peers[0].pid, c->peers[0].host, why,
                         nc_elim_gone(c->peers[0].rank) ? " (it was eliminated as a duplicate rank)" : "");
    } else if (m->h.type == NC_BYE) {
        r = nc_comm_fail(c, ncclInvalidUsage,
                         "%s #%llu failed: rank 0 left the communicator (destroyed, finalized or aborted it) "
                         "after %llu collectives, but rank %d issued %s as %s #%llu; it has no partner there", op,
                         (unsigned long long)t->seq, (unsigned long long)m->h.seq, c->rank, op,
                         kind == NC_KIND_SPLIT ? "exchange" : "collective", (unsigned long long)t->seq);
    } else if (m->h.type == NC_ERROR) {
        if (m->h.bytes)
            m->data[m->h.bytes - 1] = 0;
        r = nc_comm_fail(c, m->h.aux ? (ncclResult_t)m->h.aux : ncclInvalidUsage, "%s #%llu failed: %s", op,
                         (unsigned long long)t->seq, m->h.bytes ? (const char *)m->data : "refused by rank 0");
    } else if (m->h.type != NC_RESULT || m->h.seq != t->seq || m->h.kind != kind) {
        r = nc_comm_fail(c, ncclInternalError, "%s #%llu: rank 0 answered exchange #%llu instead", op,
                         (unsigned long long)t->seq, (unsigned long long)m->h.seq);
    } else if (t->type == NC_T_SPLIT) {
        if (m->h.bytes != 2 * sizeof(int32_t) * (uint64_t)c->nranks)
            r = nc_comm_fail(c, ncclInternalError, "ncclCommSplit: malformed answer from rank 0");
        else
            r = split_finish(t, (const int32_t *)m->data);
    } else if (m->h.bytes) {
        emu_copy_bytes(t->recvbuf, m->data, m->h.bytes);
        track_result(t, m);
    }
    if (r != ncclSuccess && t->type == NC_T_SPLIT && t->made) {
        t->made->state = NC_FAILED;
        t->made->error = r;
    }
    free(m);
    return r;
}

ncclResult_t nc_p2p_finish(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    struct nc_msg *m = NULL;
    char why[512], mine[128], theirs[128];
    nc_op_str(MAYA_COLL_RECV, t->count, t->dtype, 0, -1, mine, sizeof mine);
    ncclResult_t r = ncclSuccess;
    if (c->p2p_gone && t->seq >= c->p2p_gone[t->peer])
        return ncclSuccess; /* the sender was eliminated: its message is its representative's (not here) */
    emu_trace_waiting(MAYA_COLL_RECV, c->id, t->seq, c->peers[t->peer].pid);
    enum nc_wait_status st = nc_mb_wait(c->id, c->rank, t->peer, NC_CH_P2P, &c->peers[t->peer], 1, &m, why,
                                        sizeof why);
    emu_trace_waiting_done();
    int gone = (st == NC_WAIT_OK && m->h.type == NC_STOP) ||
               (st == NC_WAIT_DEAD && nc_elim_gone(c->peers[t->peer].rank));
    if (gone) {
        if (!c->p2p_gone) {
            c->p2p_gone = malloc((size_t)c->nranks * sizeof *c->p2p_gone);
            for (int i = 0; c->p2p_gone && i < c->nranks; i++)
                c->p2p_gone[i] = UINT64_MAX;
        }
        uint64_t from = st == NC_WAIT_OK ? m->h.count : t->seq;
        if (c->p2p_gone)
            c->p2p_gone[t->peer] = from;
        free(m);
        if (t->seq >= from)
            return ncclSuccess;
        return nc_comm_fail(c, ncclInternalError, "%s #%llu from rank %d: the rank was eliminated after "
                            "sending %llu messages, but message #%llu did not come", mine,
                            (unsigned long long)t->seq, t->peer, (unsigned long long)from,
                            (unsigned long long)t->seq);
    }
    if (st != NC_WAIT_OK) {
        r = nc_comm_fail(c, st == NC_WAIT_DEAD ? ncclRemoteError : ncclSystemError,
                         "%s #%llu from rank %d (pid %d on %s): nothing was sent: %s", mine,
                         (unsigned long long)t->seq, t->peer, c->peers[t->peer].pid, c->peers[t->peer].host, why);
    } else if (m->h.type == NC_BYE) {
        r = nc_comm_fail(c, ncclInvalidUsage,
                         "%s #%llu from rank %d: rank %d left the communicator after sending %llu messages "
                         "to rank %d", mine, (unsigned long long)t->seq, t->peer, t->peer,
                         (unsigned long long)m->h.count, c->rank);
    } else if (m->h.seq != t->seq || m->h.count != t->count || m->h.dtype != (int)t->dtype ||
               m->h.bytes != t->count * nc_type_size(t->dtype)) {
        nc_op_str(MAYA_COLL_SEND, m->h.count, m->h.dtype, 0, -1, theirs, sizeof theirs);
        r = nc_comm_fail(c, ncclInvalidUsage,
                         "point-to-point mismatch: rank %d's message #%llu to rank %d is %s, but rank %d "
                         "expects %s as message #%llu from rank %d",
                         t->peer, (unsigned long long)m->h.seq, c->rank, theirs, c->rank, mine,
                         (unsigned long long)t->seq, t->peer);
    } else if (m->h.bytes) {
        emu_copy_bytes(t->recvbuf, m->data, m->h.bytes);
        track_result(t, m);
    }
    free(m);
    return r;
}

ncclResult_t nc_exchange_abstain(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    char text[256];
    snprintf(text, sizeof text, "rank %d (pid %d on %s) cannot take part: its communicator failed earlier (%s)",
             c->rank, c->peers[c->rank].pid, c->peers[c->rank].host, ncclGetErrorString(c->error));
    struct nc_msg_hdr h = { .type = NC_ERROR, .chan = NC_CH_HUB, .comm = c->id, .src = c->rank, .dst = 0,
                            .seq = t->seq, .kind = t->op, .aux = (uint64_t)c->error,
                            .bytes = (uint32_t)strlen(text) + 1 };
    char why[256];
    nc_net_send(&c->peers[0], &h, text, why, sizeof why);
    return c->error;
}
