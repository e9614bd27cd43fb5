/* Estimates remembered by content: the data-parallel replicas of a job ask
 * the estimator the same questions (the same GEMMs, kernels and
 * collectives, at the same places), so each distinct question is asked once.
 *
 * Only when the caller says the estimator answers from content alone
 * (sim_config.estimate_by_content: not the oracle, which counts ranks and
 * call numbers). The question's key is 128 bits from two independent hashes
 * of: the record's bytes without its call's number, times, thread and
 * device (and, for a collective, its communicator's id and the member's
 * rank), which differ between replicas and which the estimator does not
 * read; the collective's placement (nodes, ranks per node) and place in its
 * NCCL group (first on its stream or not), the API and kernel names and the
 * kernel's definition (its own 128-bit hash, which the loader keeps per
 * definition: a definition with its work summary is kilobytes). Two
 * different questions would share an answer only if both 64-bit hashes
 * collided.
 *
 * Cost: a copy and two hashes of the record per op (~100 ns, against ~500 ns
 * for an estimate); memory 56 bytes per distinct question, at most
 * MEMO_MAX of them (then new questions are asked without being kept).
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <string.h>

#include "maya/common.h"

#define MEMO_MAX (1u << 20)
#define MEMO_MAX_RECORD 1024

struct memo_answer {
    struct est_result er;
    double flops;
};

struct sim_memo {
    struct maya_map index;      /* key -> answers[] index + 1 */
    struct memo_answer *answers;
    uint32_t n, cap;
};

struct hash2 {
    uint64_t a, b;
};

/* Eight bytes at a time (records are multiples of 8), the tail zero-padded;
 * two unrelated mixes, so that a collision needs both to collide. */
static void feed(struct hash2 *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, p + i, MAYA_MIN(len - i, (size_t)8));
        h->a = (h->a ^ w) * 0xff51afd7ed558ccdull;
        h->a ^= h->a >> 33;
        h->b = (h->b + w + 0x632be59bd9b4e019ull) * 0xc4ceb9fe1a85ec53ull;
        h->b ^= h->b >> 29;
    }
    h->a ^= len;
    h->b += len;
}

static void feed_str(struct hash2 *h, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    feed(h, &len, sizeof len);
    if (len)
        feed(h, s, len);
}

void sim_memo_kernel_digest(const struct maya_rec_kernel *k, const char *name, uint64_t digest[2])
{
    struct hash2 h = { 0x9ae16a3b2f90404full, 0xc3a5c85c97cb3127ull };
    feed_str(&h, name);
    feed(&h, k, k->h.bytes);
    digest[0] = h.a;
    digest[1] = h.b;
}

/* The key of op's question, or 0 when it cannot be keyed (too large). */
static int key_of(const struct est_op *op, const uint64_t *kdigest, struct hash2 *h)
{
    const struct maya_rec_hdr *rec = op->rec;
    if (!rec || rec->bytes > MEMO_MAX_RECORD || rec->bytes < sizeof(struct maya_rec_call))
        return 0;
    unsigned char buf[MEMO_MAX_RECORD];
    memcpy(buf, rec, rec->bytes);
    struct maya_call *c = (struct maya_call *)(buf + sizeof(struct maya_rec_hdr));
    c->seq = c->t_enter_ns = c->t_exit_ns = 0;
    c->tid = 0;
    c->device = 0;
    if (rec->type == MAYA_REC_COLL && rec->bytes >= sizeof(struct maya_rec_coll)) {
        struct maya_rec_coll *k = (struct maya_rec_coll *)buf;
        k->comm = 0;
        k->rank = 0;
    }
    *h = (struct hash2){ 1469598103934665603ull, 0x6a09e667f3bcc908ull };
    feed(h, buf, rec->bytes);
    int place[3] = { op->coll_nodes, op->coll_ranks_per_node, op->group_follower };
    feed(h, place, sizeof place);
    feed_str(h, op->api);
    uint64_t digest[2];
    if (op->kernel && !kdigest)
        sim_memo_kernel_digest(op->kernel, op->kernel_name, digest);
    if (op->kernel)
        feed(h, kdigest ? kdigest : digest, sizeof digest);
    else
        feed_str(h, op->kernel_name);
    return 1;
}

void sim_memo_free(struct sim_memo *m)
{
    if (!m)
        return;
    maya_map_free(&m->index);
    free(m->answers);
    free(m);
}

int sim_memo_estimate(struct sim_memo **mp, const struct sim_config *cfg, const struct est_op *op,
                      const uint64_t *kdigest, struct est_result *er, double *flops)
{
    struct hash2 h;
    if (!cfg->estimate_by_content || !key_of(op, kdigest, &h)) {
        if (cfg->estimate && cfg->estimate(cfg->estimate_ctx, op, er) < 0)
            return -1;
        *flops = cfg->flops ? cfg->flops(op) : 0;
        return 0;
    }
    if (!*mp && !(*mp = calloc(1, sizeof **mp)))
        return maya_error("out of memory remembering estimates");
    struct sim_memo *m = *mp;
    uint64_t *v = maya_map_get(&m->index, h.a, h.b);
    if (v) {
        *er = m->answers[*v - 1].er;
        *flops = m->answers[*v - 1].flops;
        return 0;
    }
    if (cfg->estimate && cfg->estimate(cfg->estimate_ctx, op, er) < 0)
        return -1;
    *flops = cfg->flops ? cfg->flops(op) : 0;
    if (m->n >= MEMO_MAX)
        return 0;
    if (SIM_GROW(m->answers, m->cap, m->n + 1) < 0 || !(v = maya_map_put(&m->index, h.a, h.b, NULL)))
        return maya_error("out of memory remembering estimates");
    m->answers[m->n] = (struct memo_answer){ *er, *flops };
    *v = ++m->n;
    return 0;
}
