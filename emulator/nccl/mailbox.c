/* Mailboxes: received messages wait here until a rank asks for them.
 *
 * One FIFO queue per (communicator, receiving rank, sending rank, channel),
 * found through a hash table; one lock and one condition variable for all
 * (few threads wait at a time, and a wait is woken only by a delivery, a
 * peer's death or its deadline). Messages for a communicator this process
 * has not made yet are kept: a fast peer may send before a slow one has
 * finished its init. Messages to a rank that has left its communicator are
 * dropped, except contributions to a rank 0 that left, which are answered
 * with an error so that their sender does not wait for nothing.
 */
#define _GNU_SOURCE
#include "nc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBUCKETS 4096

struct queue {
    uint64_t comm;
    int dst, src, chan;
    struct nc_msg *head, *tail;
    struct queue *next;
};

struct closed {                 /* a rank that left its communicator */
    uint64_t comm;
    int rank;
    uint64_t final_seq;         /* collectives it issued */
    int nranks;
    struct nc_peer *peers;      /* rank 0 only: to answer late contributions */
    struct closed *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct queue *buckets[NBUCKETS];
static struct closed *closed;

static void init_cond(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&cond, &a);
    pthread_condattr_destroy(&a);
}

static unsigned bucket(uint64_t comm, int dst, int src, int chan)
{
    uint64_t h = comm ^ ((uint64_t)(uint32_t)dst << 32) ^ ((uint64_t)(uint32_t)src << 8) ^ (uint64_t)chan;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (unsigned)(h % NBUCKETS);
}

static struct queue *find_locked(uint64_t comm, int dst, int src, int chan, int create)
{
    unsigned b = bucket(comm, dst, src, chan);
    for (struct queue *q = buckets[b]; q; q = q->next)
        if (q->comm == comm && q->dst == dst && q->src == src && q->chan == chan)
            return q;
    if (!create)
        return NULL;
    struct queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->comm = comm;
    q->dst = dst;
    q->src = src;
    q->chan = chan;
    q->next = buckets[b];
    buckets[b] = q;
    return q;
}

static void push_locked(struct nc_msg *m, int chan)
{
    struct queue *q = find_locked(m->h.comm, m->h.dst, m->h.src, chan, 1);
    if (!q) {
        free(m);
        return;
    }
    m->next = NULL;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
}

static struct closed *closed_locked(uint64_t comm, int rank)
{
    for (struct closed *c = closed; c; c = c->next)
        if (c->comm == comm && c->rank == rank)
            return c;
    return NULL;
}

/* Answer a contribution that reached a rank 0 after it left. */
static void answer_late(const struct nc_msg_hdr *in, uint64_t final_seq, const struct nc_peer *to)
{
    char text[512], op[128];
    snprintf(text, sizeof text,
             "rank 0 left the communicator (destroyed, finalized or aborted it) after %llu collectives, "
             "but rank %d issued %s as collective #%llu; it has no partner there",
             (unsigned long long)final_seq, in->src,
             nc_op_str(in->kind, in->count, in->dtype, in->redop, in->root, op, sizeof op),
             (unsigned long long)in->seq);
    struct nc_msg_hdr h = { .type = NC_ERROR, .chan = NC_CH_RESULT, .comm = in->comm, .src = 0,
                            .dst = in->src, .seq = in->seq, .kind = in->kind,
                            .aux = ncclInvalidUsage, .bytes = (uint32_t)strlen(text) + 1 };
    char why[256];
    nc_net_send(to, &h, text, why, sizeof why); /* the sender may be gone too */
}

void nc_mb_deliver(struct nc_msg *m)
{
    pthread_once(&once, init_cond);
    if (!m)
        return;
    if (m->h.chan >= NC_NCHAN) {
        free(m);
        return;
    }
    struct nc_peer to;
    uint64_t final_seq = 0;
    int answer = 0;
    if ((m->h.type == NC_STOP || m->h.type == NC_BYE) && m->h.dst == 0)
        nc_elim_member_left(m->h.comm, m->h.src); /* a rank 0 that is to stop waits for these */
    pthread_mutex_lock(&lock);
    struct closed *c = closed_locked(m->h.comm, m->h.dst);
    if (c) {
        if (m->h.type == NC_CONTRIB && c->peers && m->h.src >= 0 && m->h.src < c->nranks) {
            answer = 1;
            to = c->peers[m->h.src];
            final_seq = c->final_seq;
        }
    } else if (m->h.type == NC_BYE) {
        /* A departure ends what rank 0 waits for, what a receiver of
         * point-to-point data waits for, and (rank 0's) what ranks wait
         * for from rank 0. */
        struct nc_msg *p2p = nc_msg_new(&m->h, m->data);
        struct nc_msg *res = m->h.src == 0 ? nc_msg_new(&m->h, m->data) : NULL;
        push_locked(m, NC_CH_HUB);
        if (p2p)
            push_locked(p2p, NC_CH_P2P);
        if (res)
            push_locked(res, NC_CH_RESULT);
        m = NULL;
    } else {
        push_locked(m, m->h.chan);
        m = NULL;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (answer)
        answer_late(&m->h, final_seq, &to);
    free(m);
}

int nc_mb_contrib_waiting(uint64_t comm, int dst, int src)
{
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    struct queue *q = find_locked(comm, dst, src, NC_CH_HUB, 0);
    int waiting = 0;
    for (struct nc_msg *m = q ? q->head : NULL; m && !waiting; m = m->next)
        waiting = m->h.type == NC_CONTRIB;
    pthread_mutex_unlock(&lock);
    return waiting;
}

void nc_mb_peer_dead(void)
{
    pthread_once(&once, init_cond);
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static struct nc_msg *pop_locked(uint64_t comm, int dst, int src, int chan)
{
    struct queue *q = find_locked(comm, dst, src, chan, 0);
    if (!q || !q->head)
        return NULL;
    struct nc_msg *m = q->head;
    q->head = m->next;
    if (!q->head)
        q->tail = NULL;
    m->next = NULL;
    return m;
}

enum nc_wait_status nc_mb_wait(uint64_t comm, int dst, int src, int chan, const struct nc_peer *from,
                               double patience, struct nc_msg **out, char *why, size_t n)
{
    pthread_once(&once, init_cond);
    if (from)
        nc_net_watch(from);
    struct timespec now, deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    double t = nc_timeout_s() * patience;
    deadline.tv_sec += (time_t)t;
    deadline.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    enum nc_wait_status st;
    pthread_mutex_lock(&lock);
    for (;;) {
        struct nc_msg *m = pop_locked(comm, dst, src, chan);
        if (m) {
            *out = m;
            st = NC_WAIT_OK;
            break;
        }
        if (from && from->ep != nc_net_self()->ep && nc_net_dead(from->ep, why, n)) {
            st = NC_WAIT_DEAD;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) {
            snprintf(why, n, "nothing came in %g s (MAYA_NCCL_TIMEOUT=%g)", t, nc_timeout_s());
            st = NC_WAIT_TIMEOUT;
            break;
        }
        /* Wake at least every second: a peer's death is noticed by the
         * progress thread, which broadcasts, but a missed wake-up must not
         * cost more than that. */
        struct timespec slice = now;
        slice.tv_sec += 1;
        if (slice.tv_sec > deadline.tv_sec || (slice.tv_sec == deadline.tv_sec && slice.tv_nsec > deadline.tv_nsec))
            slice = deadline;
        pthread_cond_timedwait(&cond, &lock, &slice);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

void nc_mb_close(const struct ncclComm *c)
{
    pthread_once(&once, init_cond);
    struct closed *k = calloc(1, sizeof *k);
    if (k) {
        k->comm = c->id;
        k->rank = c->rank;
        k->final_seq = c->coll_seq;
        k->nranks = c->nranks;
        if (c->rank == 0 && c->peers) {
            k->peers = malloc((size_t)c->nranks * sizeof *k->peers);
            if (k->peers)
                memcpy(k->peers, c->peers, (size_t)c->nranks * sizeof *k->peers);
        }
    }
    struct nc_msg *unserved = NULL, **tail = &unserved;
    pthread_mutex_lock(&lock);
    if (k) {
        k->next = closed;
        closed = k;
    }
    for (unsigned b = 0; b < NBUCKETS; b++)
        for (struct queue **p = &buckets[b]; *p;) {
            struct queue *q = *p;
            if (q->comm != c->id || q->dst != c->rank) {
                p = &q->next;
                continue;
            }
            *p = q->next;
            while (q->head) {
                struct nc_msg *m = q->head;
                q->head = m->next;
                if (q->chan == NC_CH_HUB && m->h.type == NC_CONTRIB) {
                    m->next = NULL;
                    *tail = m;
                    tail = &m->next;
                } else {
                    free(m);
                }
            }
            free(q);
        }
    pthread_mutex_unlock(&lock);
    while (unserved) {
        struct nc_msg *m = unserved;
        unserved = m->next;
        if (k && k->peers && m->h.src >= 0 && m->h.src < c->nranks)
            answer_late(&m->h, k->final_seq, &k->peers[m->h.src]);
        free(m);
    }
}
