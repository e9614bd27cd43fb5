/* Folding's rebuilt ranks: a folded rank's work made again from its
 * representative's where symmetry does not allow the fold (unfold), and the
 * references the loader takes as copies of another rank's work, kept as that
 * rank and a renaming (lazy ranks) until their ops are needed (materialise).
 * fold.c says when each happens. Costs: O(ops) to rebuild a rank; a lazy
 * rank O(communicators + devices), its source's uses once.
 */
#define _GNU_SOURCE
#include "fold_internal.h"

#include <string.h>

#include "maya/collator.h"
#include "maya/common.h"

/* ---- undoing a fold ---- */

int64_t sim_comm_mine(const struct sim_comm_pair *p, uint32_t n, uint32_t theirs)
{
    for (uint32_t k = 0; k < n; k++)
        if (p[k].theirs == theirs)
            return p[k].mine;
    return -1;
}

/* The device paired with theirs (itself where none is). */
static int16_t dev_mine(const struct sim_dev_pair *p, uint32_t n, int16_t theirs)
{
    for (uint32_t k = 0; k < n; k++)
        if (p[k].theirs == theirs)
            return p[k].mine;
    return theirs;
}

/* The communicator paired with theirs (itself where none is), as dev_mine. */
static uint32_t comm_mine(const struct sim_comm_pair *p, uint32_t n, uint32_t theirs)
{
    int64_t mine = sim_comm_mine(p, n, theirs);
    return mine >= 0 ? (uint32_t)mine : theirs;
}

int16_t sim_fold_my_device(const struct sim_rank *r, int16_t theirs)
{
    return dev_mine(r->dev_map, r->ndev_map, theirs);
}

int64_t sim_fold_theirs(const struct sim_rank *r, uint32_t mine)
{
    for (uint32_t k = 0; k < r->ncomm_map; k++)
        if (r->comm_map[k].mine == mine)
            return r->comm_map[k].theirs;
    return -1;
}

int sim_copy_work(struct sim_job *j, struct sim_rank *r, const struct sim_rank *a, uint32_t first)
{
    r->ops = malloc(MAYA_MAX(a->nops, 1) * sizeof *r->ops);
    r->events = calloc(MAYA_MAX(a->nevents, 1), sizeof *r->events);
    r->bars = malloc(MAYA_MAX(a->nbars, 1) * sizeof *r->bars);
    if (!r->ops || !r->events || !r->bars)
        return maya_error("out of memory copying rank %d's work for rank %d", a->rank, r->rank);
    memcpy(r->ops, a->ops, a->nops * sizeof *r->ops);
    r->nops = r->capops = a->nops;
    for (uint64_t i = 0; i < r->nops; i++) {
        struct sim_op *o = &r->ops[i];
        if (o->stream)
            o->stream = first + j->streams[o->stream - 1].lane + 1;
        if (names_stream(o) && o->arg)
            o->arg = first + j->streams[o->arg - 1].lane + 1;
    }
    r->nevents = r->capevents = a->nevents;
    memcpy(r->bars, a->bars, a->nbars * sizeof *r->bars);
    r->nbars = r->capbars = a->nbars;
    return 0;
}

/* Rank ri's work rebuilt from rank ai's, on streams of its own, ai's
 * communicators and devices renamed by ren: a folded rank's from its
 * representative's (unfold), a lazy reference's from the rank it copies
 * (materialise). */
struct renamer {
    uint32_t (*comm)(const void *ctx, uint32_t theirs);
    int16_t (*device)(const void *ctx, int16_t theirs);
    const void *ctx;
};

static int rebuild(struct sim_job *j, uint32_t ri, uint32_t ai, const struct renamer *ren)
{
    struct sim_rank *r = &j->ranks[ri];
    uint32_t ns = j->ranks[ai].nstreams;
    if (SIM_GROW(j->streams, j->capstreams, j->nstreams + ns) < 0)
        return maya_error("out of memory rebuilding rank %d's work", r->rank);
    const struct sim_rank *a = &j->ranks[ai];
    r->streams = malloc(MAYA_MAX(ns, 1) * sizeof *r->streams);
    if (!r->streams)
        return maya_error("out of memory rebuilding rank %d's work", r->rank);
    uint32_t first = j->nstreams;
    for (uint32_t k = 0; k < ns; k++) {
        struct sim_stream *s = &j->streams[first + k];
        const struct sim_stream *t = &j->streams[a->streams[k]];
        memset(s, 0, sizeof *s);
        s->rank = ri;
        s->device = ren->device(ren->ctx, (int16_t)t->device);
        s->flags = t->flags;
        s->id = (s->flags & MAYA_STREAM_LEGACY) && t->id == sim_legacy_stream_id(t->device)
                    ? sim_legacy_stream_id(s->device) : t->id;
        s->lane = k;
        r->streams[k] = first + k;
    }
    j->nstreams += ns;
    r->nstreams = ns;
    if (sim_copy_work(j, r, a, first) < 0)
        return -1;
    for (uint64_t i = 0; i < r->nops; i++) {
        struct sim_op *o = &r->ops[i];
        o->device = ren->device(ren->ctx, o->device);
        if (names_device(o))
            o->arg = (uint32_t)ren->device(ren->ctx, (int16_t)o->arg);
        if (is_xfer(o))
            o->arg = ren->comm(ren->ctx, o->arg);
    }
    for (uint32_t k = 0; k < r->nbars; k++)
        r->bars[k].comm = ren->comm(ren->ctx, r->bars[k].comm);
    return 0;
}

static uint32_t fold_comm(const void *ctx, uint32_t theirs)
{
    const struct sim_rank *r = ctx;
    return comm_mine(r->comm_map, r->ncomm_map, theirs);
}

static int16_t fold_device(const void *ctx, int16_t theirs)
{
    return sim_fold_my_device(ctx, theirs);
}

int sim_unfold(struct sim_job *j, uint32_t ri)
{
    struct sim_rank *r = &j->ranks[ri];
    const struct renamer ren = { fold_comm, fold_device, r };
    if (rebuild(j, ri, (uint32_t)r->fold, &ren) < 0)
        return -1;
    sim_lazy_free(r->lazy); /* rebuilt: its copy's renaming served its fold */
    r->lazy = NULL;
    r->fold = -1;
    return 0;
}

/* ---- references loaded as copies: lazy ranks ---- */

int16_t sim_lazy_device(const struct sim_lazy *z, int16_t d)
{
    int16_t t = dev_mine(z->unmap, z->nunmap, d);
    /* the template's exchange undone (it is its own inverse), the reference's made */
    return (int16_t)col_exchange_device(col_exchange_device(t, z->src_dev, z->tpl_dev), z->src_dev, z->dev);
}

void sim_lazy_free(struct sim_lazy *z)
{
    if (!z)
        return;
    free(z->comms);
    free(z->unmap);
    free(z);
}

void sim_uses_free(struct sim_uses *u)
{
    if (!u)
        return;
    free(u->comms);
    free(u->vs_comms);
    free(u->vs_devs);
    free(u);
}

uint32_t sim_lazy_comm(const struct sim_lazy *z, uint32_t theirs)
{
    return comm_mine(z->comms, z->ncomms, theirs); /* take_copy checked every one the work uses */
}

static uint32_t lazy_comm(const void *ctx, uint32_t theirs)
{
    return sim_lazy_comm(ctx, theirs);
}

static int16_t lazy_device(const void *ctx, int16_t theirs)
{
    return sim_lazy_device(ctx, theirs);
}

int sim_materialise(struct sim_job *j, uint32_t ri)
{
    struct sim_rank *r = &j->ranks[ri];
    struct sim_lazy *z = r->lazy;
    const struct renamer ren = { lazy_comm, lazy_device, z };
    int rc = rebuild(j, ri, z->of, &ren);
    r->lazy = NULL;
    sim_lazy_free(z);
    return rc;
}

static void use_device(struct sim_uses *u, int d)
{
    if (d >= 0 && d < 64)
        u->devmask |= 1ull << d;
    else
        u->other_devices = 1;
}

static int use_comm(struct sim_uses *u, struct maya_map *seen, uint64_t *cap, uint32_t comm, int p2p, int inter)
{
    int created;
    uint64_t *v = maya_map_put(seen, comm, 0, &created);
    if (!v || (created && SIM_GROW(u->comms, *cap, (uint64_t)u->ncomms + 1) < 0))
        return -1;
    if (created) {
        *v = u->ncomms + 1;
        u->comms[u->ncomms++] = (struct sim_work_comm){ comm, 0, 0 };
    }
    u->comms[*v - 1].p2p |= (uint8_t)p2p;
    u->comms[*v - 1].inter |= (uint8_t)inter;
    return 0;
}

const struct sim_uses *sim_rank_uses(struct sim_job *j, uint32_t xi)
{
    struct sim_rank *r = &j->ranks[xi];
    if (r->uses)
        return r->uses;
    struct sim_uses *u = calloc(1, sizeof *u);
    struct maya_map seen = { 0 };
    uint64_t cap = 0;
    int rc = u ? 0 : -1;
    for (uint32_t k = 0; u && k < r->nstreams; k++) {
        const struct sim_stream *s = &j->streams[r->streams[k]];
        use_device(u, s->device);
        u->synthetic_legacy |= (s->flags & MAYA_STREAM_LEGACY) && s->id == sim_legacy_stream_id(s->device);
    }
    for (uint64_t i = 0; rc == 0 && i < r->nops; i++) {
        const struct sim_op *o = &r->ops[i];
        if (device_matters(o))
            use_device(u, o->device);
        if (names_device(o))
            use_device(u, (int)o->arg);
        if (is_xfer(o))
            rc = use_comm(u, &seen, &cap, o->arg, o->kind == SK_P2P, (o->flags & SF_INTER_NODE) != 0);
    }
    for (uint32_t k = 0; rc == 0 && k < r->nbars; k++)
        rc = use_comm(u, &seen, &cap, r->bars[k].comm, 0, 0);
    maya_map_free(&seen);
    if (rc < 0) {
        sim_uses_free(u);
        return NULL;
    }
    r->uses = u;
    return u;
}

int sim_make_lazy(struct sim_job *j, uint32_t ri, struct sim_lazy *z)
{
    struct sim_rank *r = &j->ranks[ri];
    const struct sim_rank *x = &j->ranks[z->of];
    const struct sim_uses *u = sim_rank_uses(j, z->of);
    if (!u) {
        sim_lazy_free(z);
        return maya_error("out of memory loading rank %d", r->rank);
    }
    /* its devices: the source's renamed one to one (as folding within a
     * node allows), or unchanged */
    int identity = !u->other_devices, injective = !u->other_devices;
    uint64_t image = 0;
    for (int d = 0; d < 64; d++)
        if (u->devmask >> d & 1) {
            int16_t e = sim_lazy_device(z, (int16_t)d);
            identity &= e == d;
            injective &= e >= 0 && e < 64 && !(image >> e & 1);
            if (e >= 0 && e < 64)
                image |= 1ull << e;
        }
    if (sim_fold_setup(j) < 0) {
        sim_lazy_free(z);
        return -1;
    }
    z->exact = !j->no_fold && r->complete == x->complete &&
               (identity || (j->fold_in_node && injective && !u->synthetic_legacy)) &&
               (j->fold_in_node || r->local_rank == x->local_rank);
    for (uint32_t k = 0; k < u->ncomms; k++) { /* what crosses its communicators */
        uint32_t c = sim_lazy_comm(z, u->comms[k].comm);
        j->comms[c].has_p2p |= u->comms[k].p2p;
        j->comms[c].inter_used |= u->comms[k].inter;
    }
    r->lazy = z;
    return z->exact ? 0 : sim_materialise(j, ri);
}
