/* ncclGroupStart/End, and how queued operations run.
 *
 * Every operation becomes a task. Outside a group it runs at once; inside
 * one (per thread, nesting counted) it waits for the outermost ncclGroupEnd.
 * A list of tasks runs in three steps, each over all tasks:
 *   1. post: take the sequence number, send what this rank contributes
 *      (JOINs, contributions to rank 0, small sends); this never waits
 *      (an op issued to a capturing stream takes no number: it becomes a
 *      graph node as it is traced, and is numbered at each launch);
 *   2. serve: where this thread holds rank 0 of a small collective or a
 *      split, collect every rank's contribution and answer them;
 *   3. finish: wait for this rank's answer (member table, result, received
 *      data) and write it out.
 * Step 2 only waits for step-1 messages and step 3 only for step-2 answers,
 * so one thread can drive several ranks of one communicator (several
 * devices), and several communicators, without deadlock, as with NCCL.
 * The waiting is the emulator's, not the program's: it is taken off the
 * host clock (emu_wait_begin/end), except a non-blocking init's, which
 * happens on a thread of its own while the program goes on.
 */
#include "nc.h"

#include <stdlib.h>
#include <string.h>

struct group {
    int depth;
    struct nc_task *tasks;
    int n, cap;
    uint64_t id;                /* nonzero, names the group in the trace */
    ncclResult_t error;         /* a call inside the group failed */
};

static __thread struct group grp;
static uint64_t next_group_id;

int nc_in_group(void)
{
    return grp.depth > 0;
}

void nc_group_fail(ncclResult_t r)
{
    if (grp.depth > 0 && grp.error == ncclSuccess)
        grp.error = r;
}

ncclResult_t nc_submit(struct nc_task *t)
{
    if (grp.depth == 0)
        return nc_run_tasks(t, 1);
    if (grp.n == grp.cap) {
        int cap = grp.cap ? grp.cap * 2 : 16;
        struct nc_task *p = realloc(grp.tasks, (size_t)cap * sizeof *p);
        if (!p) {
            nc_group_fail(ncclSystemError);
            return nc_fail(ncclSystemError, "out of memory for the group's operations");
        }
        grp.tasks = p;
        grp.cap = cap;
    }
    t->rec.group = grp.id;
    grp.tasks[grp.n++] = *t;
    return ncclSuccess;
}

static int traced(const struct nc_task *t)
{
    return t->type == NC_T_COLL || t->type == NC_T_SEND || t->type == NC_T_RECV;
}

/* Does this task make its rank 0 collect contributions? */
static int exchanges(const struct nc_task *t)
{
    return t->type == NC_T_SPLIT || (t->type == NC_T_COLL && t->small);
}

uint64_t nc_group_new_id(void)
{
    return __atomic_add_fetch(&next_group_id, 1, __ATOMIC_RELAXED);
}

uint64_t nc_take_seq(struct ncclComm *c, uint32_t op, int peer)
{
    if (op == MAYA_COLL_SEND || op == MAYA_COLL_RECV) {
        c->p2p_peer[peer] = 1;
        return op == MAYA_COLL_SEND ? c->send_seq[peer]++ : c->recv_seq[peer]++;
    }
    return c->coll_seq++;
}

static ncclResult_t post(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    if (t->type == NC_T_INIT)
        return nc_init_post(t);
    if (traced(t) && !t->capture) /* a captured op counts at each launch (capture.c) */
        nc_elim_op(&t->rec, t->comm->index); /* failed ones too, as the collator counts COLL records */
    if (c->error != ncclSuccess)
        return exchanges(t) && c->rank != 0 ? nc_exchange_abstain(t) : c->error;
    if (t->capture) {
        /* numbered at each launch of its graph (capture.c) */
        if (t->type != NC_T_COLL)
            c->p2p_peer[t->peer] = 1;
        return ncclSuccess;
    }
    if (t->type == NC_T_SPLIT)
        t->seq = c->ctrl_seq++;
    else
        t->seq = nc_take_seq(c, t->op, t->peer);
    t->rec.seq = t->seq;
    if (exchanges(t) || (t->type == NC_T_SEND && t->small))
        return nc_exchange_post(t);
    return ncclSuccess;
}

static ncclResult_t finish(struct nc_task *t)
{
    switch (t->type) {
    case NC_T_INIT: return nc_init_finish(t);
    case NC_T_RECV: return t->small ? nc_p2p_finish(t) : ncclSuccess;
    default: return exchanges(t) ? nc_exchange_finish(t) : ncclSuccess;
    }
}

static void serve_all(struct nc_task *t, int n)
{
    for (int i = 0; i < n; i++)
        if (exchanges(&t[i]) && t[i].comm->rank == 0) {
            if (t[i].result == ncclSuccess)
                nc_exchange_serve(&t[i]); /* a refusal reaches every rank's finish step */
            else
                nc_exchange_refuse(&t[i], t[i].result, "rank 0's communicator failed earlier");
        }
}

static void finish_all(struct nc_task *t, int n)
{
    for (int i = 0; i < n; i++) {
        if (t[i].result == ncclSuccess)
            t[i].result = finish(&t[i]);
        if (t[i].result != ncclSuccess && t[i].type == NC_T_INIT) {
            t[i].comm->state = NC_FAILED;
            t[i].comm->error = t[i].result;
        }
    }
}

static ncclResult_t emit_all(struct nc_task *t, int n)
{
    ncclResult_t first = ncclSuccess;
    if (n > 0)
        emu_coll_mark_both_ways(&t[0].rec, (size_t)n, sizeof *t);
    for (int i = 0; i < n; i++) {
        if (t[i].capture && t[i].result == ncclSuccess)
            t[i].result = nc_capture_task(&t[i]);
        if (traced(&t[i])) {
            /* Outside a group the record is the call's, with what it
             * returned; inside, the call itself succeeded. */
            if (t[i].rec.group == 0)
                t[i].rec.call.result = t[i].result;
            if (t[i].capture) {
                /* captured: a CALL stands for it, as for every captured op;
                   its record is traced at each launch of the graph */
                struct maya_rec_call c = { { MAYA_REC_CALL, 0, sizeof c }, t[i].rec.call };
                c.h.flags = t[i].result == ncclSuccess ? MAYA_F_CAPTURING : 0;
                emu_trace_emit(&c);
            } else {
                emu_trace_emit(&t[i].rec);
            }
        }
        if (first == ncclSuccess)
            first = t[i].result;
    }
    return first;
}

ncclResult_t nc_run_tasks(struct nc_task *t, int n)
{
    nc_elim_point(t, n);
    emu_wait_begin();
    for (int i = 0; i < n; i++)
        t[i].result = post(&t[i]);
    serve_all(t, n);
    finish_all(t, n);
    emu_wait_end();
    return emit_all(t, n);
}

/* A non-blocking init: JOIN now, wait for the table in the background.
 * That wait stays on the host clock: the program's threads go on working
 * meanwhile, and their time is theirs (only a call that must wait for the
 * init, nc_comm_ready, takes its wait off the clock). */
static void *detached_main(void *p)
{
    struct nc_task *t = p;
    finish_all(t, 1);
    free(t);
    return NULL;
}

ncclResult_t nc_run_detached(struct nc_task *t)
{
    struct ncclComm *c = t->comm;
    struct nc_task *copy = malloc(sizeof *copy);
    if (!copy)
        return nc_fail(ncclSystemError, "out of memory");
    *copy = *t;
    copy->result = post(copy);
    c->state = NC_PENDING;
    if (copy->result != ncclSuccess) {
        c->state = NC_FAILED;
        c->error = copy->result;
        free(copy);
        return c->error;
    }
    if (pthread_create(&c->init_thread, NULL, detached_main, copy) != 0) {
        emu_wait_begin();
        finish_all(copy, 1);
        emu_wait_end();
        ncclResult_t r = copy->result;
        free(copy);
        return r;
    }
    c->has_init_thread = 1;
    return ncclInProgress;
}

/* ---- the API ---- */

ncclResult_t ncclGroupStart(void)
{
    NC_ENTER();
    if (grp.depth++ == 0) {
        grp.id = nc_group_new_id();
        grp.error = ncclSuccess;
        grp.n = 0;
    }
    NC_RETURN(ncclSuccess);
}
NC_ALIAS(ncclGroupStart);

/* Drop a group's tasks without running them; comms they were making fail. */
static void discard(ncclResult_t why)
{
    for (int i = 0; i < grp.n; i++) {
        struct nc_task *t = &grp.tasks[i];
        struct ncclComm *made = t->type == NC_T_INIT ? t->comm : t->type == NC_T_SPLIT ? t->made : NULL;
        if (made) {
            made->state = NC_FAILED;
            made->error = why;
        }
    }
    grp.n = 0;
}

ncclResult_t ncclGroupEnd(void)
{
    NC_ENTER();
    if (grp.depth == 0)
        NC_RETURN(nc_fail(ncclInvalidUsage, "ncclGroupEnd without a matching ncclGroupStart"));
    if (--grp.depth > 0)
        NC_RETURN(ncclSuccess);
    ncclResult_t r = grp.error;
    if (r == ncclSuccess) {
        r = nc_run_tasks(grp.tasks, grp.n);
        grp.n = 0;
    } else {
        discard(r);
    }
    grp.error = ncclSuccess;
    NC_RETURN(r);
}
NC_ALIAS(ncclGroupEnd);

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
    NC_ENTER();
    if (grp.depth == 0)
        NC_RETURN(nc_fail(ncclInvalidUsage, "ncclGroupSimulateEnd without a matching ncclGroupStart"));
    if (!simInfo || simInfo->magic != 0x74685283u)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclGroupSimulateEnd: simInfo was not set up with "
                                               "NCCL_SIM_INFO_INITIALIZER"));
    /* The group is closed but nothing runs (as with NCCL); the time
     * estimate NCCL would give is not modelled here. */
    if (--grp.depth == 0) {
        discard(ncclInvalidUsage);
        grp.error = ncclSuccess;
    }
    emu_unsupported("ncclGroupSimulateEnd", ncclInvalidUsage);
    return ncclInvalidUsage;
}
NC_ALIAS(ncclGroupSimulateEnd);
