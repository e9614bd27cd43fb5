/* Unique ids and the rendezvous that turns one into a communicator.
 *
 * ncclGetUniqueId starts this process's endpoint and returns an id holding
 * its address and port, the creator's pid and host name, and a random
 * 64-bit number. That number names the rendezvous and becomes the new
 * communicator's id (the same in every member's trace). The program passes
 * the id to its ranks however it likes (MPI, a file, torch's TCPStore).
 *
 * Each rank's ncclCommInitRank sends JOIN (its rank, nranks, and its own
 * endpoint, pid, host and device) to the creator's endpoint; the creator's
 * progress thread collects them, and when all nranks have joined, answers
 * every member with the table of all members. A wrong nranks, a rank out of
 * range or twice, or an id used before is answered with an error naming
 * them. A joiner waits at most MAYA_NCCL_TIMEOUT seconds and notices the
 * creator's exit.
 */
#define _GNU_SOURCE
#include "nc.h"

#include "maya/replicas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UID_MAGIC "MAYANCCL"
#define UID_VERSION 1

struct rdv {
    uint64_t id;
    int nranks;                 /* -1 until the first JOIN */
    int njoined;
    int failed;
    char err[512];
    struct nc_peer *peers;      /* [nranks] */
    unsigned char *have;        /* [nranks] */
    struct rdv *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdv *rdvs;
static uint64_t used[256];      /* ids whose communicator was made (a ring) */
static unsigned nused;

int nc_boot_create(struct nc_uid *u)
{
    if (nc_net_start() < 0)
        return -1;
    struct rdv *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    const struct nc_peer *self = nc_net_self();
    memset(u, 0, sizeof *u);
    memcpy(u->magic, UID_MAGIC, 8);
    u->version = UID_VERSION;
    u->pid = (uint32_t)self->pid;
    u->id = nc_random64();
    u->ep = self->ep;
    u->addr = self->addr;
    snprintf(u->host, sizeof u->host, "%s", self->host);
    r->id = u->id;
    r->nranks = -1;
    pthread_mutex_lock(&lock);
    r->next = rdvs;
    rdvs = r;
    pthread_mutex_unlock(&lock);
    return 0;
}

ncclResult_t nc_boot_check(const ncclUniqueId *id, struct nc_uid *u)
{
    memcpy(u, id, sizeof *u);
    if (memcmp(u->magic, UID_MAGIC, 8) != 0)
        return nc_fail(ncclInvalidArgument,
                       "the ncclUniqueId was not made by ncclGetUniqueId of maya's libnccl (it starts "
                       "%02x %02x %02x %02x, expected \"MAYANCCL\"): every rank must run under the emulator",
                       (unsigned char)id->internal[0], (unsigned char)id->internal[1],
                       (unsigned char)id->internal[2], (unsigned char)id->internal[3]);
    if (u->version != UID_VERSION)
        return nc_fail(ncclInvalidArgument, "the ncclUniqueId has version %u, this libnccl reads version %d",
                       u->version, UID_VERSION);
    u->host[sizeof u->host - 1] = 0;
    return ncclSuccess;
}

void nc_boot_root_peer(const struct nc_uid *u, struct nc_peer *p)
{
    memset(p, 0, sizeof *p);
    p->ep = u->ep;
    p->addr = u->addr;
    p->pid = (int32_t)u->pid;
    p->device = -1;
    p->global_gpu = -1;
    snprintf(p->host, sizeof p->host, "%s", u->host);
}

static void send_error(const struct nc_peer *to, uint64_t id, int rank, const char *text)
{
    struct nc_msg_hdr h = { .type = NC_ERROR, .chan = NC_CH_BOOT, .comm = id, .src = -1, .dst = rank,
                            .aux = ncclInvalidUsage, .bytes = (uint32_t)strlen(text) + 1 };
    char why[256];
    nc_net_send(to, &h, text, why, sizeof why);
}

static int by_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* With declared replicas, a communicator other than the world's made with
 * ncclCommInitRank (as PyTorch's new_group makes one) may hold ranks that
 * never start. The members that joined tell which folded dimensions it
 * spans: one with digit 0 and one with digit 1 there, the rest alike. With
 * every digit of those, they make the members F. The rendezvous is complete
 * when F has nranks ranks, every rank of F that runs has joined, and each
 * that joined has its place in F by global rank as its rank (PyTorch orders
 * a group's members so; a guess from too few members fails this or the
 * size, and waits). The others' entries are filled then. O(nranks^2) per
 * join for the dimensions spanned (groups are small beside the world). */
static int replicas_complete(struct rdv *r)
{
    const struct maya_replicas *lay = nc_replicas();
    int n = r->nranks, span[MAYA_REPLICAS_MAX_DIMS] = { 0 };
    int64_t *base = malloc((size_t)n * sizeof *base), *f = malloc((size_t)n * sizeof *f);
    int64_t mult = 1;
    for (int k = 0; k < lay->ndims; k++) {
        for (int i = 0; i < n && !span[k]; i++)
            for (int j = 0; r->have[i] && j < n && !span[k]; j++)
                span[k] = r->have[j] && maya_replicas_digit(lay, k, r->peers[i].rank) == 0 &&
                          r->peers[j].rank == maya_replicas_with(lay, k, r->peers[i].rank, 1);
        mult *= span[k] ? lay->n[k] : 1;
    }
    /* the joined members with their spanned digits 0: the bases of F */
    int nb = 0, ok = base && f;
    for (int i = 0; ok && i < n; i++) {
        if (!r->have[i])
            continue;
        int64_t b = r->peers[i].rank;
        for (int k = 0; k < lay->ndims; k++)
            if (span[k])
                b = maya_replicas_with(lay, k, b, 0);
        int seen = 0;
        for (int j = 0; j < nb && !seen; j++)
            seen = base[j] == b;
        if (!seen)
            base[nb++] = b;
        ok = (int64_t)nb * mult <= n;
    }
    ok = ok && (int64_t)nb * mult == n;
    /* each base with every digit of the spanned dimensions */
    for (int64_t c = 0; ok && c < mult; c++)
        for (int j = 0; j < nb; j++) {
            int64_t v = base[j], rest = c;
            for (int k = 0; k < lay->ndims; k++)
                if (span[k]) {
                    v = maya_replicas_with(lay, k, v, rest % lay->n[k]);
                    rest /= lay->n[k];
                }
            f[c * nb + j] = v;
        }
    if (ok)
        qsort(f, (size_t)n, sizeof *f, by_int64);
    for (int i = 0; ok && i < n; i++)
        ok = r->have[i] ? r->peers[i].rank == f[i] : !maya_replicas_emulated(lay, f[i]);
    for (int i = 0; ok && i < n; i++)
        if (!r->have[i])
            nc_replica_peer(&r->peers[i], (int)f[i]);
    free(base);
    free(f);
    return ok;
}

void nc_boot_join(struct nc_msg *m)
{
    struct nc_peer joiner;
    int rank = m->h.src;
    uint64_t id = m->h.comm;
    int64_t nranks = (int64_t)m->h.count;
    if (m->h.bytes != sizeof joiner) {
        free(m);
        return;
    }
    memcpy(&joiner, m->data, sizeof joiner);
    joiner.host[sizeof joiner.host - 1] = 0;
    free(m);

    char err[512] = "";
    struct nc_peer *table = NULL, *notify = NULL;
    int *notify_rank = NULL;
    int ntable = 0, nnotify = 0;
    pthread_mutex_lock(&lock);
    struct rdv *r = rdvs;
    while (r && r->id != id)
        r = r->next;
    if (!r) {
        int was_used = 0;
        for (unsigned i = 0; i < nused && i < 256; i++)
            was_used |= used[i] == id;
        snprintf(err, sizeof err,
                 was_used ? "rank %d (pid %d on %s) joined with a unique id that was already used to make a "
                            "communicator: each ncclCommInitRank needs a fresh id"
                          : "rank %d (pid %d on %s) joined with a unique id this process (pid %d) did not make",
                 rank, joiner.pid, joiner.host, (int)getpid());
    } else if (r->failed) {
        snprintf(err, sizeof err, "%s", r->err);
    } else if (nranks < 1 || nranks > (1 << 24) || (r->nranks >= 0 && nranks != r->nranks) ||
               rank < 0 || rank >= nranks || (r->nranks >= 0 && r->have[rank])) {
        if (r->nranks >= 0 && nranks != r->nranks)
            snprintf(err, sizeof err, "rank %d (pid %d on %s) calls ncclCommInitRank with nranks=%lld, "
                     "but ranks before it said nranks=%d", rank, joiner.pid, joiner.host, (long long)nranks,
                     r->nranks);
        else if (rank < 0 || rank >= nranks)
            snprintf(err, sizeof err, "ncclCommInitRank with rank %d, not in 0..%lld (pid %d on %s)", rank,
                     (long long)nranks - 1, joiner.pid, joiner.host);
        else
            snprintf(err, sizeof err, "rank %d joined twice: pid %d on %s and pid %d on %s", rank,
                     r->peers[rank].pid, r->peers[rank].host, joiner.pid, joiner.host);
        /* Everyone who joined so far hears it too. */
        r->failed = 1;
        snprintf(r->err, sizeof r->err, "%s", err);
        if (r->nranks > 0) {
            notify = malloc((size_t)r->nranks * sizeof *notify);
            notify_rank = malloc((size_t)r->nranks * sizeof *notify_rank);
            for (int i = 0; notify && notify_rank && i < r->nranks; i++)
                if (r->have[i]) {
                    notify_rank[nnotify] = i;
                    notify[nnotify++] = r->peers[i];
                }
        }
    } else {
        if (r->nranks < 0) {
            r->peers = calloc((size_t)nranks, sizeof *r->peers);
            r->have = calloc((size_t)nranks, 1);
            if (!r->peers || !r->have) {
                free(r->peers);
                free(r->have);
                r->peers = NULL;
                r->have = NULL;
                snprintf(err, sizeof err, "out of memory for a rendezvous of %lld ranks", (long long)nranks);
            } else {
                r->nranks = (int)nranks;
            }
        }
        /* With declared replicas the world's rendezvous waits only for the
         * ranks that run (the world's ranks are the processes' ranks); the
         * others get entries that nothing is ever sent to. */
        int world = nc_replicas() && r->nranks == emu_config()->world_size;
        if (!err[0] && world && joiner.rank != rank)
            snprintf(err, sizeof err, "rank %d of the world communicator is process rank %d (pid %d on %s): with "
                     "--replicas the world's ranks must be the processes' ranks", rank, joiner.rank, joiner.pid,
                     joiner.host);
        if (!err[0]) {
            r->peers[rank] = joiner;
            r->have[rank] = 1;
            if (++r->njoined == (world ? nc_replicas_emulated() : r->nranks) ||
                (!world && nc_replicas() && replicas_complete(r))) {
                for (int i = 0; world && i < r->nranks; i++)
                    if (!r->have[i])
                        nc_replica_peer(&r->peers[i], i);
                table = r->peers;
                ntable = r->nranks;
                r->peers = NULL;
                for (struct rdv **p = &rdvs; *p; p = &(*p)->next)
                    if (*p == r) {
                        *p = r->next;
                        break;
                    }
                used[nused++ % 256] = r->id;
                free(r->have);
                free(r);
            }
        }
    }
    pthread_mutex_unlock(&lock);

    if (err[0]) {
        send_error(&joiner, id, rank, err);
        for (int i = 0; i < nnotify; i++)
            send_error(&notify[i], id, notify_rank[i], err);
    }
    free(notify);
    free(notify_rank);
    if (table) {
        for (int i = 0; i < ntable; i++) {
            struct nc_msg_hdr h = { .type = NC_TABLE, .chan = NC_CH_BOOT, .comm = id, .src = -1, .dst = i,
                                    .count = (uint64_t)ntable,
                                    .bytes = (uint32_t)((size_t)ntable * sizeof *table) };
            char why[256];
            nc_net_send(&table[i], &h, table, why, sizeof why);
        }
        free(table);
    }
}

/* The creator's own rank waited in vain: fail the rendezvous, naming the
 * ranks that did not join, and tell those that did. 0 if there was none. */
static int give_up(uint64_t id, double waited_s, char *text, size_t n)
{
    struct nc_peer *notify = NULL;
    int *notify_rank = NULL, nnotify = 0, found = 0;
    pthread_mutex_lock(&lock);
    struct rdv *r = rdvs;
    while (r && r->id != id)
        r = r->next;
    if (r && !r->failed && r->nranks > 0) {
        found = 1;
        int k = snprintf(text, n, "only %d of %d ranks joined in %g s; missing:", r->njoined, r->nranks, waited_s);
        int listed = 0;
        for (int i = 0; i < r->nranks && k > 0 && (size_t)k < n; i++)
            if (!r->have[i] && listed++ < 16)
                k += snprintf(text + k, n - (size_t)k, " %d", i);
        if (k > 0 && (size_t)k < n)
            snprintf(text + k, n - (size_t)k, "%s (they did not call ncclCommInitRank with this id, or called "
                     "it with another nranks)", listed > 16 ? " ..." : "");
        r->failed = 1;
        snprintf(r->err, sizeof r->err, "%s", text);
        notify = malloc((size_t)r->nranks * sizeof *notify);
        notify_rank = malloc((size_t)r->nranks * sizeof *notify_rank);
        for (int i = 0; notify && notify_rank && i < r->nranks; i++)
            if (r->have[i]) {
                notify_rank[nnotify] = i;
                notify[nnotify++] = r->peers[i];
            }
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < nnotify; i++)
        send_error(&notify[i], id, notify_rank[i], text);
    free(notify);
    free(notify_rank);
    return found;
}

/* ---- the joining side: the INIT task ---- */

ncclResult_t nc_init_post(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    if (nc_net_start() < 0)
        return ncclSystemError;
    struct nc_peer me = *nc_net_self();
    struct emu_device *d = emu_device(c->device);
    me.device = c->device;
    me.global_gpu = d ? d->global_index : -1;
    struct nc_peer root;
    nc_boot_root_peer(&t->uid, &root);
    struct nc_msg_hdr h = { .type = NC_JOIN, .chan = NC_CH_BOOT, .comm = t->uid.id, .src = t->peer,
                            .dst = -1, .count = t->count, .bytes = sizeof me };
    char why[256], as[80];
    if (nc_net_send(&root, &h, &me, why, sizeof why) < 0)
        return nc_fail(ncclSystemError,
                       "rank %d of %zu cannot reach the rendezvous of its unique id at %s (made by pid %u on "
                       "%s): %s. The process that called ncclGetUniqueId must still run, and ranks on "
                       "other hosts need an address they can reach (NCCL_SOCKET_IFNAME)",
                       t->peer, t->count, nc_addr_str(&t->uid.addr, as, sizeof as), t->uid.pid, t->uid.host, why);
    return ncclSuccess;
}

ncclResult_t nc_init_finish(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    struct nc_peer root;
    nc_boot_root_peer(&t->uid, &root);
    struct nc_msg *m = NULL;
    char why[256], as[80];
    /* The creator's ranks wait the timeout, then name who did not come;
     * the others wait longer, for that verdict. */
    int creator = t->uid.ep == nc_net_self()->ep;
    enum nc_wait_status st = nc_mb_wait(t->uid.id, t->peer, -1, NC_CH_BOOT, &root, creator ? 1 : 2, &m, why,
                                        sizeof why);
    char text[512];
    if (st == NC_WAIT_TIMEOUT && creator && give_up(t->uid.id, nc_timeout_s(), text, sizeof text))
        st = nc_mb_wait(t->uid.id, t->peer, -1, NC_CH_BOOT, &root, 1, &m, why, sizeof why); /* our own notice */
    ncclResult_t r = ncclSuccess;
    if (st != NC_WAIT_OK) {
        r = nc_fail(st == NC_WAIT_DEAD ? ncclRemoteError : ncclSystemError,
                    "ncclCommInitRank (rank %d of %zu, communicator 0x%016llx): waiting for all ranks to "
                    "join at %s (pid %u on %s) failed: %s%s",
                    t->peer, t->count, (unsigned long long)t->uid.id, nc_addr_str(&t->uid.addr, as, sizeof as),
                    t->uid.pid, t->uid.host, why,
                    st == NC_WAIT_DEAD ? " (the process that made the unique id is gone)"
                                       : "; a rank did not call ncclCommInitRank with this id, or "
                                         "called it with another nranks");
    } else if (m->h.type == NC_ERROR) {
        m->data[m->h.bytes ? m->h.bytes - 1 : 0] = 0;
        r = nc_fail(ncclInvalidUsage, "ncclCommInitRank (rank %d of %zu): %s", t->peer, t->count,
                    m->h.bytes ? (const char *)m->data : "refused");
    } else if (m->h.type != NC_TABLE || m->h.count != t->count ||
               m->h.bytes != t->count * sizeof(struct nc_peer)) {
        r = nc_fail(ncclInternalError, "ncclCommInitRank: the rendezvous answered with a malformed table");
    } else {
        r = nc_comm_setup(c, t->uid.id, 0, t->peer, (int)t->count, (const struct nc_peer *)m->data, -1, -1);
    }
    free(m);
    return r;
}
