/* Duplicate-rank elimination (MAYA_DEDUP=1; docs/dedup.md).
 *
 * Each rank folds every NCCL operation it issues into a rolling hash
 * (maya_coll_signature: op, count, type, reduction, communicator size and
 * which of its communicators, root as a communicator rank, send/recv peer
 * relative to the caller; never the rank itself). It knows it is past its
 * first iteration when its sequence of operations has repeated: the last 2p
 * operations are two equal blocks of p, each holding more than one kind of
 * operation, and cover at least 90 % of all its operations so far (so that
 * a loop inside the iteration, a layer's all-reduces, or a row of like
 * broadcasts at set-up, is not taken for it). Equal
 * sequences repeat at the same point, so ranks doing the same work check at
 * the same operation with the same hash.
 *
 * At that point a rank sends its hash, and the communicators it belongs to,
 * to rank 0 of its world communicator (the first one it made with
 * WORLD_SIZE members), whose progress thread collects them. Nobody waits
 * for this: ranks run on. Once every rank has reported, the ranks that
 * checked at the same operation with the same hash form a class; its lowest
 * rank is the representative and runs on, the others are to stop (rank 0
 * runs on, and the next of its class represents the rest). A rank
 * that is rank 0 of a communicator in which some member runs on is kept
 * running too (rank 0 serves the small exchanges), until no such rank is
 * left. Every rank then gets the table of representatives (the verdict).
 *
 * A rank the verdict stops does so at its next call that only moves data
 * (never inside a communicator's creation): it tells rank 0 of each of its
 * communicators how many collectives it issued there and which member
 * stands in for it (its representative when that is a member, else rank
 * 0), tells its send/recv partners how many messages it sent them, writes
 * an ELIMINATED record and its trace, notes rank-N.eliminated next to it
 * for the launcher, and exits with status 0, inside the NCCL call: the
 * program sees nothing. The collator rebuilds it from its representative.
 *
 * Costs: the hash is O(1) per operation; the check compares the trailing
 * blocks for every p <= n/2 in O(1) each with prefix hashes, O(n) per
 * operation for the first MAYA_ELIM_MAX_OPS operations (a rank that has not
 * repeated by then is never compared), and 24 bytes per operation. The world's
 * rank 0 keeps every rank's report (its communicators) and sends a table of
 * WORLD_SIZE ints to each rank, O(W^2) bytes in all.
 */
#define _GNU_SOURCE
#include "nc.h"

#include "maya/common.h"
#include "maya/replicas.h"
#include "maya/run_elim.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAYA_ELIM_MAX_OPS (1u << 14)

struct rep_comm {               /* one communicator of a report */
    uint64_t id;
    int32_t crank, nranks;
};

struct report_hdr {             /* NC_ELIM_REPORT payload; rep_comm[ncomms] follow */
    int32_t rank;               /* global rank */
    int32_t ncomms;
    uint64_t check_op, check_hash;
    uint32_t disabled;          /* this process cannot take part (several members of a comm) */
    uint32_t reserved;
};

struct report {
    int have;
    struct report_hdr h;
    struct rep_comm *comms;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int enabled = -1;        /* MAYA_DEDUP, read once */
static struct ncclComm *made;   /* this process's live communicators, newest first */
static uint32_t nmade;
static int disabled;            /* two members of one communicator in this process */
static uint64_t *made_ids;      /* [nmade_ids] communicator id by index (graph replays after a free) */
static size_t nmade_ids, made_ids_cap;

/* the world communicator, as this process knows it */
static int have_world;
static uint64_t world_id;
static struct nc_peer world_root;

/* detection (the program's NCCL calls) */
static uint64_t nops, hash;
static uint64_t *prefix, *powers; /* [MAYA_ELIM_MAX_OPS + 1] */
static uint64_t *syncs;          /* [MAYA_ELIM_MAX_OPS] host synchronisations before op i */
static int reported;
static uint64_t last_sig, last_change; /* op index (from 0) where the signature last changed */
static uint64_t check_op, check_hash; /* what was reported */
static uint64_t check_period;   /* the repeating block's length in ops, at the check */
static uint64_t check_ns;       /* CLOCK_MONOTONIC at the check */
static int waited;              /* this rank waited for the verdict once */

/* the verdict */
static int verdict;             /* atomic: 1 once rep_table is filled */
static int32_t *rep_table;      /* [world_n] representative of each global rank */
static int world_n;
static int kept;                /* the verdict stopped this rank, but it must run on */

/* at the world's rank 0: the reports */
static struct report *reports;
static int nreports, hub_n;
static struct nc_peer *hub_peers; /* the world's members, to answer */

static int on(void)
{
    if (enabled < 0) {
        const char *s = getenv("MAYA_DEDUP");
        enabled = s && !strcmp(s, "1") && emu_config()->rank >= 0 && emu_config()->world_size > 1;
    }
    return enabled;
}

static int my_rank(void)
{
    return emu_config()->rank;
}

/* ---- declared replicas (MAYA_REPLICAS, maya run --replicas) ---- */

static pthread_once_t repl_once = PTHREAD_ONCE_INIT;
static struct maya_replicas repl;
static int have_repl;
static int64_t repl_emulated;   /* ranks of the world that run */

static void repl_read(void)
{
    const char *s = getenv("MAYA_REPLICAS");
    int w = emu_config()->world_size;
    if (!s || !*s || w < 2)
        return;
    char err[256];
    if (maya_replicas_parse(s, w, &repl, err, sizeof err) < 0) {
        fprintf(stderr, "maya-emu: nccl: MAYA_REPLICAS=%s\n", err);
        return;
    }
    have_repl = 1;
    repl_emulated = maya_replicas_count_emulated(&repl, w);
}

const struct maya_replicas *nc_replicas(void)
{
    pthread_once(&repl_once, repl_read);
    return have_repl ? &repl : NULL;
}

int64_t nc_replicas_emulated(void)
{
    return nc_replicas() ? repl_emulated : emu_config()->world_size;
}

void nc_replica_peer(struct nc_peer *p, int global_rank)
{
    memset(p, 0, sizeof *p); /* ep 0: not started, nothing is ever sent to it */
    int gpn = emu_config()->gpus_per_node > 0 ? emu_config()->gpus_per_node : 1;
    p->rank = global_rank;
    p->node = global_rank / gpn;
    p->device = global_rank % gpn;
    p->global_gpu = global_rank;
    p->pid = -1;
    snprintf(p->host, sizeof p->host, "(replica, not started)");
}

/* Mark the members of a new communicator that never started as gone from
 * its first operation, each standing in for by its source when that is a
 * member (else rank 0). */
static void absent_members(struct ncclComm *c)
{
    const struct maya_replicas *r = nc_replicas();
    for (int i = 0; r && i < c->nranks; i++) {
        if (c->peers[i].ep != 0)
            continue;
        if (!c->gone)
            c->gone = calloc((size_t)c->nranks, sizeof *c->gone);
        if (!c->p2p_gone) {
            c->p2p_gone = malloc((size_t)c->nranks * sizeof *c->p2p_gone);
            for (int j = 0; c->p2p_gone && j < c->nranks; j++)
                c->p2p_gone[j] = UINT64_MAX;
        }
        int64_t src = maya_replicas_representative(r, c->peers[i].rank, emu_config()->world_size);
        int stand = 0;
        for (int j = 0; j < c->nranks; j++)
            if (c->peers[j].rank == src && c->peers[j].ep != 0)
                stand = j;
        if (c->gone)
            c->gone[i] = (struct nc_gone){ 0, stand, 1 };
        if (c->p2p_gone)
            c->p2p_gone[i] = 0;
    }
}

/* MAYA_REC_COMM_MEMBERS: who the members are (the collator makes the
 * communicators of ranks that never started from it). */
static void trace_members(const struct ncclComm *c)
{
    size_t bytes = MAYA_REC_ALIGN(sizeof(struct maya_rec_comm_members) + (size_t)c->nranks * sizeof(int32_t));
    struct maya_rec_comm_members *m = calloc(1, bytes);
    if (!m)
        return;
    m->h.type = MAYA_REC_COMM_MEMBERS;
    m->h.bytes = (uint32_t)bytes;
    m->comm = c->id;
    m->nranks = c->nranks;
    int32_t *g = (int32_t *)(m + 1);
    for (int i = 0; i < c->nranks; i++)
        g[i] = c->peers[i].rank;
    emu_trace_emit(m);
    free(m);
}

static void send_verdicts_locked(struct nc_peer **to, int *nto, int32_t **table);

void nc_elim_comm_made(struct ncclComm *c)
{
    if (nc_replicas()) {
        absent_members(c);
        trace_members(c);
    }
    if (!on())
        return;
    struct nc_peer *to = NULL;
    int32_t *table = NULL;
    int nto = 0;
    pthread_mutex_lock(&lock);
    for (struct ncclComm *k = made; k; k = k->next_made)
        if (k->id == c->id)
            disabled = 1;
    c->index = nmade++;
    c->next_made = made;
    made = c;
    if (nmade_ids == made_ids_cap) { /* ids by index, kept after a communicator is freed */
        size_t cap = made_ids_cap ? made_ids_cap * 2 : 16;
        uint64_t *p = realloc(made_ids, cap * sizeof *p);
        if (p) {
            made_ids = p;
            made_ids_cap = cap;
        }
    }
    if (nmade_ids < made_ids_cap && nmade_ids == c->index)
        made_ids[nmade_ids++] = c->id;
    if (!have_world && c->nranks == emu_config()->world_size) {
        have_world = 1;
        world_id = c->id;
        world_root = c->peers[0];
        if (c->rank == 0 && !hub_peers) {
            hub_peers = malloc((size_t)c->nranks * sizeof *hub_peers);
            if (hub_peers)
                memcpy(hub_peers, c->peers, (size_t)c->nranks * sizeof *hub_peers);
            send_verdicts_locked(&to, &nto, &table); /* reports may have come before */
        }
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < nto; i++) {
        struct nc_msg_hdr h = { .type = NC_ELIM_VERDICT, .comm = world_id, .src = 0, .dst = i,
                                .count = (uint64_t)hub_n, .bytes = (uint32_t)(hub_n * sizeof(int32_t)) };
        char why[256];
        nc_net_send(&to[i], &h, table, why, sizeof why); /* a rank gone meanwhile needs none */
    }
    free(to);
    free(table);
}

void nc_elim_comm_freed(struct ncclComm *c)
{
    if (!on())
        return;
    pthread_mutex_lock(&lock);
    for (struct ncclComm **p = &made; *p; p = &(*p)->next_made)
        if (*p == c) {
            *p = c->next_made;
            break;
        }
    pthread_mutex_unlock(&lock);
}

/* ---- the hash and the check ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t seg(uint64_t a, uint64_t b)
{
    return prefix[b] - prefix[a] * powers[b - a];
}

static void report(void)
{
    pthread_mutex_lock(&lock);
    int n = 0;
    for (struct ncclComm *k = made; k; k = k->next_made)
        n += k->state == NC_READY;
    size_t bytes = sizeof(struct report_hdr) + (size_t)n * sizeof(struct rep_comm);
    unsigned char *buf = calloc(1, bytes);
    struct nc_peer root = world_root;
    uint64_t wid = world_id;
    int ok = have_world && buf;
    if (ok) {
        struct report_hdr *h = (void *)buf;
        struct rep_comm *rc = (void *)(h + 1);
        h->rank = my_rank();
        h->check_op = nops;
        h->check_hash = hash;
        h->disabled = (uint32_t)disabled;
        int i = 0;
        for (struct ncclComm *k = made; k; k = k->next_made)
            if (k->state == NC_READY && i < n)
                rc[i++] = (struct rep_comm){ k->id, k->rank, k->nranks };
        h->ncomms = i;
    }
    pthread_mutex_unlock(&lock);
    if (ok) {
        struct nc_msg_hdr m = { .type = NC_ELIM_REPORT, .comm = wid, .src = my_rank(), .dst = 0,
                                .count = (uint64_t)emu_config()->world_size, .bytes = (uint32_t)bytes };
        char why[256];
        if (nc_net_send(&root, &m, buf, why, sizeof why) < 0)
            fprintf(stderr, "maya-emu: nccl: duplicate-rank elimination: cannot report to the world's "
                    "rank 0: %s; this rank runs on\n", why);
    }
    free(buf);
}

uint32_t nc_elim_comm_index(uint64_t comm)
{
    uint32_t idx = UINT32_MAX;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nmade_ids; i++)
        if (made_ids[i] == comm)
            idx = (uint32_t)i;
    pthread_mutex_unlock(&lock);
    return idx;
}

void nc_elim_op(const struct maya_rec_coll *r, uint32_t comm_index)
{
    if (!on())
        return;
    uint64_t sig = maya_coll_signature(r->op, r->count, r->dtype, r->redop, r->rank, r->nranks, r->peer,
                                       comm_index);
    hash = maya_coll_hash_next(hash, sig);
    nops++;
    if (reported || nops > MAYA_ELIM_MAX_OPS)
        return;
    if (!prefix) {
        prefix = malloc((MAYA_ELIM_MAX_OPS + 1) * sizeof *prefix);
        powers = malloc((MAYA_ELIM_MAX_OPS + 1) * sizeof *powers);
        syncs = malloc(MAYA_ELIM_MAX_OPS * sizeof *syncs);
        if (!prefix || !powers || !syncs) {
            reported = 1; /* no room to look: never compared */
            return;
        }
        prefix[0] = 0;
        powers[0] = 1;
    }
    prefix[nops] = hash;
    powers[nops] = powers[nops - 1] * MAYA_COLL_HASH_BASE;
    syncs[nops - 1] = emu_host_syncs();
    if (nops > 1 && sig != last_sig)
        last_change = nops - 1; /* ops [last_change - 1, last_change] differ */
    last_sig = sig;
    /* Two equal trailing blocks of p, each of more than one kind of op (a
     * row of like broadcasts at set-up is not an iteration), each holding a
     * host synchronisation (where training loops end an iteration: a loss
     * read, a stream synchronize) or, for a process that has never
     * synchronised at all, together covering >= 90 % of the ops (20 p >=
     * 9 n). A process that synchronises, if only once before its first
     * operation, is taken to do so at its iterations' ends, so two blocks
     * without a synchronisation are a part of one iteration repeating: a
     * 1F1B pipeline's warm-up micro-batches after a set-up synchronisation
     * (two on one stage, one on the next, whose first 2 x 6 operations
     * agree) differ from stage to stage later on. At most n/2 O(1)
     * comparisons per op, for the first MAYA_ELIM_MAX_OPS ops. */
    uint64_t n = nops;
    int never_synced = syncs[n - 1] == 0;
    for (uint64_t p = n / 2; p >= 2 && last_change > n - p; p--) {
        int synced = syncs[n - p] > syncs[n - 2 * p]; /* the first block ends an iteration */
        if (!synced && (!never_synced || 20 * p < 9 * n))
            continue;
        if (seg(n - 2 * p, n - p) == seg(n - p, n)) {
            reported = 1;
            check_op = nops;
            check_hash = hash;
            check_period = p;
            check_ns = now_ns();
            report();
            return;
        }
    }
}

/* ---- notes next to the traces ---- */

/* Write text as DIR/name (the trace directory), atomically: a note that
 * exists under its name is whole. Nothing when traces are not kept. */
static void write_note(const char *name, const char *text, size_t n)
{
    const char *dir = emu_config()->trace_dir;
    if (!dir[0])
        return;
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    int ok = write(fd, text, n) == (ssize_t)n;
    ok &= close(fd) == 0;
    if (ok)
        rename(tmp, path);
    else
        unlink(tmp);
}

/* ---- at the world's rank 0 ---- */

struct member_ref {
    uint64_t id;
    int32_t crank, nranks, rank;
};

/* The classes, for a later run of the same program (maya run
 * --replicas-like, docs/dedup.md): MAYA_ELIM_CLASSES_FILE holds each
 * rank's class (the lowest rank that issued the same operations up to its
 * check) and every communicator's members by communicator rank (m, sorted
 * so), which a layout must agree with. With declared replicas (whose
 * communicators are partly unknown here) it holds the declared layout. */
static void note_classes(const int32_t *cls, int n, const struct member_ref *m, size_t nm)
{
    const char *spec = nc_replicas() ? getenv("MAYA_REPLICAS") : NULL;
    /* room for each entry: up to 8 digits (ranks < 2^24) after " " or "\ncomm=" */
    size_t cap = 512 + (spec ? strlen(spec) : 0) + ((size_t)n + nm) * 16, len = 0;
    char *text = malloc(cap);
    if (!text)
        return;
    len += (size_t)snprintf(text, cap, "# duplicate-rank elimination: each rank's class (the lowest rank that issued "
                            "the same NCCL operations) and each communicator's members (docs/dedup.md)\nworld=%d\n",
                            n);
    if (spec)
        len += (size_t)snprintf(text + len, cap - len, "replicas=%s\n", spec);
    len += (size_t)snprintf(text + len, cap - len, "classes=");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s%d", i ? " " : "", cls[i]);
    for (size_t a = 0; !spec && a < nm; a++)
        len += (size_t)snprintf(text + len, cap - len, a == 0 || m[a].id != m[a - 1].id ? "\ncomm=%d" : " %d",
                                m[a].rank);
    len += (size_t)snprintf(text + len, cap - len, "\n");
    write_note(MAYA_ELIM_CLASSES_FILE, text, len);
    free(text);
}

static int by_member(const void *a, const void *b)
{
    const struct member_ref *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->crank > y->crank) - (x->crank < y->crank);
}

static const struct report *sort_reports;

static int by_class(const void *a, const void *b)
{
    const struct report_hdr *x = &sort_reports[*(const int *)a].h, *y = &sort_reports[*(const int *)b].h;
    if (x->check_op != y->check_op)
        return x->check_op < y->check_op ? -1 : 1;
    if (x->check_hash != y->check_hash)
        return x->check_hash < y->check_hash ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Every rank reported: the representatives (and the note of the classes).
 * NULL when out of memory. */
static int32_t *decide_locked(void)
{
    int n = hub_n;
    int32_t *rep = malloc((size_t)n * sizeof *rep);
    int *order = malloc((size_t)n * sizeof *order);
    size_t nm = 0;
    for (int i = 0; i < n; i++)
        nm += reports[i].have ? (size_t)reports[i].h.ncomms : 0;
    struct member_ref *m = malloc((nm ? nm : 1) * sizeof *m);
    if (!rep || !order || !m) {
        free(rep);
        free(order);
        free(m);
        return NULL;
    }
    int off = 0;
    const struct maya_replicas *rp = nc_replicas();
    int nr = 0;
    for (int i = 0; i < n; i++) {
        rep[i] = i;
        if (reports[i].have)
            order[nr++] = i;
        else if (rp) /* a replica that never started: its representative stands for it */
            rep[i] = (int32_t)maya_replicas_representative(rp, i, n);
        off |= (int)reports[i].h.disabled;
    }
    if (!off) {
        sort_reports = reports;
        qsort(order, (size_t)nr, sizeof *order, by_class);
        for (int i = 1; i < nr; i++) {
            const struct report_hdr *a = &reports[order[i - 1]].h, *b = &reports[order[i]].h;
            if (a->check_op == b->check_op && a->check_hash == b->check_hash)
                rep[order[i]] = rep[order[i - 1]];
        }
        /* the classes as found, before rank 0 and the ranks kept change them;
         * a replica that never started is in its representative's */
        int32_t *cls = malloc((size_t)n * sizeof *cls);
        for (int i = 0; cls && i < n; i++)
            cls[i] = rep[rep[i]];
        /* Rank 0 runs on anyway (it serves the world's small exchanges), and
         * its host work is often its own (it logs, saves checkpoints): the
         * others of its class take the next of them as their representative. */
        int next = -1;
        for (int i = 1; i < n && next < 0; i++)
            if (reports[i].have && rep[i] == 0)
                next = i;
        for (int i = 1; next > 0 && i < n; i++)
            if (rep[i] == 0)
                rep[i] = next;
        /* rank 0 of a communicator with a member that runs on must run on */
        size_t k = 0;
        for (int i = 0; i < n; i++)
            for (int c = 0; reports[i].have && c < reports[i].h.ncomms; c++)
                m[k++] = (struct member_ref){ reports[i].comms[c].id, reports[i].comms[c].crank,
                                              reports[i].comms[c].nranks, i };
        qsort(m, nm, sizeof *m, by_member);
        if (cls)
            note_classes(cls, n, m, nm); /* once, ~7 bytes per rank and member: under the lock */
        free(cls);
        for (int changed = 1; changed;) {
            changed = 0;
            for (size_t a = 0; a < nm;) {
                size_t b = a;
                int live = 0;
                while (b < nm && m[b].id == m[a].id) {
                    live |= rep[m[b].rank] == m[b].rank;
                    b++;
                }
                if (m[a].crank == 0 && live && rep[m[a].rank] != m[a].rank) {
                    rep[m[a].rank] = m[a].rank;
                    changed = 1;
                }
                a = b;
            }
        }
    }
    free(order);
    free(m);
    return rep;
}

/* Once every rank reported and the world's members are known: the verdict
 * for each (*to, *nto, *table are the caller's to send and free). */
static void send_verdicts_locked(struct nc_peer **to, int *nto, int32_t **table)
{
    if (!hub_peers || !reports || nreports < nc_replicas_emulated())
        return;
    int32_t *rep = decide_locked();
    if (!rep)
        return;
    *to = hub_peers;
    *nto = hub_n;
    *table = rep;
    hub_peers = NULL;
    nreports = -1; /* decided once */
}

void nc_elim_deliver(struct nc_msg *m)
{
    if (m->h.type == NC_ELIM_VERDICT) {
        int n = (int)m->h.count;
        if (n > 0 && n <= (1 << 24) && m->h.bytes == (uint64_t)n * sizeof(int32_t) && !verdict) {
            int32_t *t = malloc(m->h.bytes);
            if (t) {
                memcpy(t, m->data, m->h.bytes);
                pthread_mutex_lock(&lock);
                rep_table = t;
                world_n = n;
                pthread_mutex_unlock(&lock);
                __atomic_store_n(&verdict, 1, __ATOMIC_RELEASE);
            }
        }
        free(m);
        return;
    }
    /* a report, at the world's rank 0 */
    const struct report_hdr *h = (const void *)m->data;
    int n = (int)m->h.count;
    struct nc_peer *to = NULL;
    int32_t *table = NULL;
    int nto = 0;
    pthread_mutex_lock(&lock);
    int ok = m->h.bytes >= sizeof *h && n > 1 && n <= (1 << 24) && h->rank >= 0 && h->rank < n &&
             h->ncomms >= 0 && m->h.bytes == sizeof *h + (size_t)h->ncomms * sizeof(struct rep_comm) &&
             (!reports || n == hub_n) && nreports >= 0;
    if (ok && !reports) {
        reports = calloc((size_t)n, sizeof *reports);
        hub_n = n;
        ok = reports != NULL;
    }
    if (ok && !reports[h->rank].have) {
        struct report *r = &reports[h->rank];
        r->comms = malloc(((size_t)h->ncomms + 1) * sizeof *r->comms);
        if (r->comms) {
            r->have = 1;
            r->h = *h;
            memcpy(r->comms, h + 1, (size_t)h->ncomms * sizeof *r->comms);
            nreports++;
            send_verdicts_locked(&to, &nto, &table);
        }
    }
    pthread_mutex_unlock(&lock);
    free(m);
    for (int i = 0; i < nto; i++) {
        struct nc_msg_hdr v = { .type = NC_ELIM_VERDICT, .comm = world_id, .src = 0, .dst = i,
                                .count = (uint64_t)nto, .bytes = (uint32_t)(nto * sizeof(int32_t)) };
        char why[256];
        nc_net_send(&to[i], &v, table, why, sizeof why);
    }
    free(to);
    free(table);
}

int nc_elim_gone(int global_rank)
{
    if (!__atomic_load_n(&verdict, __ATOMIC_ACQUIRE) || global_rank < 0 || global_rank >= world_n)
        return 0;
    return rep_table[global_rank] != global_rank;
}

/* ---- stopping ---- */

static void note_for_launcher(int source, uint64_t stop_op, int declared)
{
    char name[64], text[512];
    snprintf(name, sizeof name, "rank-%d.eliminated", my_rank());
    const char *spec = getenv("MAYA_REPLICAS");
    int n = snprintf(text, sizeof text, "source=%d\nstop_op=%llu\nhow=%s\n%s%s%s", source,
                     (unsigned long long)stop_op, declared ? "declared" : "matched", declared ? "replicas=" : "",
                     declared && spec ? spec : "", declared ? "\n" : "");
    if (n > 0 && (size_t)n < sizeof text)
        write_note(name, text, (size_t)n);
}

/* How long a rank waits for others, in all: twice what took took (the
 * time since its check), at least 0.5 s, at most 30 s. */
static uint64_t patience_ns(uint64_t took)
{
    return MAYA_MIN(MAYA_MAX(2 * took, 500000000ull), 30000000000ull);
}

/* Members that told this process's rank 0 of a communicator that they
 * stopped or left: an open-addressing set of (comm, rank), O(1) per look-up. */
static struct left_key {
    uint64_t comm;
    int32_t rank, used;
} *left_set;
static size_t left_cap, left_n;

static size_t left_slot(uint64_t comm, int rank)
{
    uint64_t h = comm ^ ((uint64_t)(uint32_t)rank * 0x9e3779b97f4a7c15ull);
    h ^= h >> 31;
    return (size_t)(h * 0xbf58476d1ce4e5b9ull) & (left_cap - 1);
}

static int left_has_locked(uint64_t comm, int rank)
{
    if (!left_cap)
        return 0;
    for (size_t i = left_slot(comm, rank);; i = (i + 1) & (left_cap - 1)) {
        if (!left_set[i].used)
            return 0;
        if (left_set[i].comm == comm && left_set[i].rank == rank)
            return 1;
    }
}

void nc_elim_member_left(uint64_t comm, int rank)
{
    if (!on())
        return;
    pthread_mutex_lock(&lock);
    if (!left_has_locked(comm, rank)) {
        if (2 * (left_n + 1) > left_cap) { /* keep it at most half full */
            size_t cap = left_cap ? left_cap * 2 : 64;
            struct left_key *old = left_set, *nw = calloc(cap, sizeof *nw);
            size_t oldcap = left_cap;
            if (nw) {
                left_set = nw;
                left_cap = cap;
                for (size_t i = 0; i < oldcap; i++)
                    if (old[i].used) {
                        size_t j = left_slot(old[i].comm, old[i].rank);
                        while (left_set[j].used)
                            j = (j + 1) & (left_cap - 1);
                        left_set[j] = old[i];
                    }
                free(old);
            }
        }
        if (2 * (left_n + 1) <= left_cap) {
            size_t j = left_slot(comm, rank);
            while (left_set[j].used)
                j = (j + 1) & (left_cap - 1);
            left_set[j] = (struct left_key){ comm, rank, 1 };
            left_n++;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* May this rank stop now? Not while it is rank 0 of a communicator whose
 * other members still issue operations there: never when one of them runs
 * on (the verdict keeps such ranks; a communicator made after the reports
 * is checked here), and not yet while one that is to stop too has not said
 * so (it may still need this rank to serve a small exchange). 1 yes, 0 not
 * yet, -1 never. */
static int may_stop_locked(void)
{
    int now = 1;
    for (struct ncclComm *k = made; k; k = k->next_made) {
        if (k->state != NC_READY || k->left || k->rank != 0)
            continue;
        for (int i = 1; i < k->nranks; i++) {
            int g = k->peers[i].rank;
            if (k->peers[i].ep == 0)
                continue; /* never started */
            if (g < 0 || g >= world_n || rep_table[g] == g)
                return -1;
            if (!left_has_locked(k->id, i))
                now = 0;
        }
    }
    return now;
}

/* The end of a rank that stops: its ELIMINATED record (what it issued, and
 * the hash it compared), its trace, the launcher's note, the messages still
 * queued; then exit 0, inside the program's NCCL call. */
static void leave_process(int source, uint32_t how)
{
    struct maya_rec_eliminated e;
    memset(&e, 0, sizeof e);
    e.h.type = MAYA_REC_ELIMINATED;
    e.h.bytes = sizeof e;
    e.source = source;
    e.how = how;
    e.stop_op = nops;
    e.stop_hash = hash;
    e.check_op = check_op;
    e.check_hash = check_hash;
    e.t_ns = emu_now();
    emu_trace_emit(&e);
    emu_trace_finish();
    note_for_launcher(source, nops, how == MAYA_ELIM_DECLARED);
    fflush(stdout);
    fflush(stderr);
    nc_net_flush(10);
    _exit(0);
}

/* Does a member of a communicator this rank is rank 0 of wait for it to
 * serve a collective (its contribution has come)? Then waiting for the
 * members to stop would wait for one that waits for this rank. */
static int served_member_waits_locked(void)
{
    for (struct ncclComm *k = made; k; k = k->next_made)
        if (k->state == NC_READY && !k->left && k->rank == 0)
            for (int i = 1; i < k->nranks; i++)
                if (k->peers[i].ep != 0 && !left_has_locked(k->id, i) && nc_mb_contrib_waiting(k->id, 0, i))
                    return 1; /* the mailbox's lock is taken under this one, never the other way */
    return 0;
}

/* A rank to stop that is rank 0 of a communicator whose other members are
 * to stop too waits for them to say so, off the host clock: they stop at
 * their next call, and a rank 0 that ran on meanwhile would run its whole
 * job for nothing once nothing waits for it (a small collective whose
 * members all stopped is served at once). The wait ends when they have
 * stopped, when one of them waits for this rank to serve a collective
 * (its contribution is here), or after the waits together took twice
 * the time from the check to the first wait (0.5 s to 30 s: a member
 * blocked on this rank's send, or gone without a word). Returns
 * may_stop_locked's answer; called and returns with lock held. */
static uint64_t stop_waited_ns, stop_limit_ns; /* those waits, in all; their limit */

static int wait_for_members_locked(void)
{
    int may = may_stop_locked();
    if (may == 0 && !stop_limit_ns)
        stop_limit_ns = patience_ns(check_ns ? now_ns() - check_ns : 0);
    if (may != 0 || stop_waited_ns >= stop_limit_ns)
        return may;
    pthread_mutex_unlock(&lock);
    uint64_t start = now_ns();
    emu_wait_begin();
    for (;;) {
        pthread_mutex_lock(&lock);
        may = may_stop_locked();
        int served = may == 0 && served_member_waits_locked();
        pthread_mutex_unlock(&lock);
        if (may != 0 || served || stop_waited_ns + (now_ns() - start) >= stop_limit_ns)
            break;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    emu_wait_end();
    stop_waited_ns += now_ns() - start;
    pthread_mutex_lock(&lock);
    return may_stop_locked();
}

static void stop(int source)
{
    struct comm_note {
        struct nc_peer to;
        struct nc_msg_hdr h;
    } *notes = NULL;
    size_t nnotes = 0, cap = 0;
    pthread_mutex_lock(&lock);
    int may = wait_for_members_locked();
    if (may <= 0) {
        kept = may < 0;
        pthread_mutex_unlock(&lock);
        if (kept && !emu_config()->quiet)
            fprintf(stderr, "maya-emu: nccl: duplicate-rank elimination: rank %d duplicates rank %d but is rank 0 "
                    "of a communicator with members that run on; it runs on too\n", my_rank(), source);
        return;
    }
    for (struct ncclComm *k = made; k; k = k->next_made) {
        if (k->state != NC_READY || k->left)
            continue;
        int stand = 0;
        for (int i = 0; i < k->nranks; i++)
            if (k->peers[i].rank == source)
                stand = i;
        for (int i = 0; i < k->nranks; i++) {
            int to_root = i == 0 && k->rank != 0, to_partner = i != k->rank && k->p2p_peer[i];
            for (int pass = 0; pass < 2; pass++) {
                if (!(pass == 0 ? to_root : to_partner))
                    continue;
                if (nnotes == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    struct comm_note *p = realloc(notes, nc * sizeof *p);
                    if (!p)
                        continue;
                    notes = p;
                    cap = nc;
                }
                struct comm_note *o = &notes[nnotes++];
                o->to = k->peers[i];
                o->h = (struct nc_msg_hdr){ .type = NC_STOP, .chan = pass == 0 ? NC_CH_HUB : NC_CH_P2P,
                                            .comm = k->id, .src = k->rank, .dst = i, .seq = k->coll_seq,
                                            .aux = (uint64_t)stand, .count = k->send_seq[i] };
            }
        }
    }
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < nnotes; i++) {
        char why[256];
        nc_net_send(&notes[i].to, &notes[i].h, NULL, why, sizeof why); /* one gone already needs none */
    }
    free(notes);
    if (!emu_config()->quiet)
        fprintf(stderr, "maya-emu: nccl: duplicate-rank elimination: rank %d does what rank %d does; it stops "
                "after %llu NCCL operations and is rebuilt from rank %d\n", my_rank(), source,
                (unsigned long long)nops, source);
    leave_process(source, MAYA_ELIM_MATCHED);
}

void nc_elim_replica_point(void)
{
    const struct maya_replicas *r = nc_replicas();
    int me = my_rank();
    if (!r || me < 0 || maya_replicas_emulated(r, me))
        return;
    leave_process((int)maya_replicas_representative(r, me, emu_config()->world_size), MAYA_ELIM_DECLARED);
}

/* A rank one iteration past its check without the verdict waits for it,
 * once, for up to twice the time that iteration took (at least 0.5 s, at
 * most 30 s), off the host clock: the verdict needs every rank's report,
 * and a rank that runs ahead (large collectives wait for nobody) would
 * otherwise end before it arrives and run the whole job for nothing. The
 * others reach their checks an iteration behind at most (each iteration's
 * collectives over the whole world keep them so), so the wait ends when
 * they do; a verdict that never comes (a rank whose operations never
 * repeat) costs the wait once, then the rank runs on. */
static void wait_for_verdict(void)
{
    if (waited || !reported || !check_period || nops < check_op + check_period ||
        __atomic_load_n(&verdict, __ATOMIC_ACQUIRE))
        return;
    waited = 1;
    uint64_t now = now_ns(), limit = patience_ns(now - check_ns);
    emu_wait_begin();
    while (!__atomic_load_n(&verdict, __ATOMIC_ACQUIRE) && now_ns() - now < limit) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    emu_wait_end();
}

void nc_elim_point(const struct nc_task *t, int n)
{
    if (!on() || kept)
        return;
    for (int i = 0; i < n; i++)
        if (t[i].type != NC_T_COLL && t[i].type != NC_T_SEND && t[i].type != NC_T_RECV)
            return; /* never in the middle of making a communicator */
    wait_for_verdict();
    if (!__atomic_load_n(&verdict, __ATOMIC_ACQUIRE))
        return;
    int me = my_rank();
    if (me < 0 || me >= world_n || rep_table[me] == me)
        return;
    stop(rep_table[me]);
}

/* ---- splits with members that never started ---- */

int nc_replicas_split(const struct ncclComm *parent, int32_t *ck, char *why, size_t nwhy)
{
    const struct maya_replicas *r = nc_replicas();
    int n = parent->nranks;
    int64_t world = emu_config()->world_size;
    int *at = malloc((size_t)(world > 0 ? world : 1) * sizeof *at); /* global rank -> parent rank, -1 */
    if (!r || !at) {
        free(at);
        snprintf(why, nwhy, "out of memory");
        return -1;
    }
    for (int64_t g = 0; g < world; g++)
        at[g] = -1;
    for (int i = 0; i < n; i++)
        if (parent->peers[i].rank >= 0 && parent->peers[i].rank < world)
            at[parent->peers[i].rank] = i;
    /* the keys given must order each color as the parent does: then the
     * parent's order stands for them, and for the absent members' */
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        for (int j = i + 1; j < n && rc == 0 && parent->peers[i].ep && ck[2 * i] >= 0; j++)
            if (parent->peers[j].ep && ck[2 * j] == ck[2 * i] && ck[2 * j + 1] < ck[2 * i + 1]) {
                snprintf(why, nwhy, "ncclCommSplit with --replicas: ranks %d and %d of color %d are given keys "
                         "%d and %d, which order them against their rank; replicas can be made only for "
                         "communicators ordered by rank", parent->peers[i].rank, parent->peers[j].rank,
                         (int)ck[2 * i], (int)ck[2 * i + 1], (int)ck[2 * j + 1]);
                rc = -1;
            }
    for (int i = 0; i < n && rc == 0; i++) {
        if (parent->peers[i].ep != 0)
            continue;
        /* y: g with its digits above 1 made 0 (it runs) */
        int64_t g = parent->peers[i].rank, y = g;
        for (int k = 0; k < r->ndims; k++)
            if (maya_replicas_digit(r, k, g) > 1)
                y = maya_replicas_with(r, k, y, 0);
        int iy = y >= 0 && y < world ? at[y] : -1, spans = iy >= 0;
        for (int k = 0; k < r->ndims && spans; k++) {
            if (maya_replicas_digit(r, k, g) <= 1)
                continue;
            int64_t z = maya_replicas_with(r, k, y, 1);
            int iz = z >= 0 && z < world ? at[z] : -1;
            spans = iz >= 0 && parent->peers[iz].ep != 0 && ck[2 * iz] == ck[2 * iy];
        }
        /* a color that spans the replica's dimensions is its; else one of its own */
        ck[2 * i] = spans ? ck[2 * iy] : INT32_MIN + i;
    }
    for (int i = 0; i < n; i++)
        ck[2 * i + 1] = i;
    free(at);
    return rc;
}
