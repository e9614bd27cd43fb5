/* Measuring device work: records held until their events complete.
 *
 * Every call record the core builds comes here (prof_divert) in the order the
 * calls returned. A record of device work carries two events recorded around
 * the real call on its stream; it waits in a FIFO until the end event has
 * completed, then goes to the trace writer with measured_ns = the time
 * between the events (cudaEventElapsedTime, about 0.5 us resolution) and
 * MAYA_F_MEASURED. Records behind it wait too, so the trace keeps the order
 * of the calls and each record gets its seq when it is written, as in an
 * emulated trace. A record with nothing to measure, behind nothing, is
 * written at once.
 *
 * Finished records are collected without waiting after every traced call
 * once 256 are held, after every synchronising call, and with waiting when
 * 8192 are held (the GPU is that far behind; a real launch queue is
 * shallower, so the program would have blocked anyway) and at exit.
 * Events come from a pool (one per device for the runtime's events, one
 * per driver context for the driver's) and go back to it once read.
 *
 * Costs: two event records per op on the program's thread (off the trace's
 * host clock), one event query per finished op, one malloc and copy per
 * held record. Lock order: the queue lock, then the trace writer's.
 */
#define _GNU_SOURCE
#include "prof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maya/common.h"

#define COLLECT_AT 256
#define BLOCK_AT 8192
#define MAX_POOLS 128

struct pending {
    struct pending *next;
    cudaEvent_t start, end;      /* NULL: nothing to measure */
    int device;                  /* pool the events go back to */
    void *ctx;                   /* (driver events: their context's) */
    uint64_t rec[];              /* the record (8-byte aligned) */
};

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *head, *tail;
static size_t nheld;
static uint64_t nmeasured, nunmeasured;

/* The op whose record is being built on this thread (prof_returned ..
 * prof_end): its events go with the record. */
static __thread struct prof_op *building;

void prof_building(struct prof_op *op)
{
    building = op;
}

/* ---- the event pools ----
 * One per device for the runtime's events, one per driver context for the
 * driver's (a linear search: a process has few). */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool {
    int device;
    void *ctx;
    cudaEvent_t *ev;
    size_t n, cap;
} pools[MAX_POOLS];
static int npools;
static int atexit_done;

static void at_exit(void);

/* The pool of (device, ctx), made if new; NULL when there are too many
 * (pool_lock held). */
static struct pool *pool_of(int device, void *ctx)
{
    for (int i = 0; i < npools; i++)
        if (pools[i].device == device && pools[i].ctx == ctx)
            return &pools[i];
    if (npools == MAX_POOLS)
        return NULL;
    pools[npools] = (struct pool){ .device = device, .ctx = ctx };
    return &pools[npools++];
}

/* A new event of the runtime, on device (made current for a moment if the
 * op's device is another: an NCCL communicator's), or of the driver, in the
 * current context (ctx). */
static cudaEvent_t event_new(int device, void *ctx)
{
    cudaEvent_t e = NULL;
    if (ctx) {
        CUresult (*create)(CUevent *, unsigned) = PROF_REAL(prof_cuda, cuEventCreate);
        return create && create(&e, CU_EVENT_DEFAULT) == CUDA_SUCCESS ? e : NULL;
    }
    cudaError_t (*create)(cudaEvent_t *, unsigned) = PROF_REAL(prof_cudart, cudaEventCreateWithFlags);
    cudaError_t (*get)(int *) = PROF_REAL(prof_cudart, cudaGetDevice);
    cudaError_t (*set)(int) = PROF_REAL(prof_cudart, cudaSetDevice);
    int cur = device;
    if (!create || !get || !set || get(&cur) != cudaSuccess || (cur != device && set(device) != cudaSuccess))
        return NULL;
    cudaError_t err = create(&e, cudaEventDefault);
    if (cur != device)
        set(cur);
    return err == cudaSuccess ? e : NULL;
}

cudaEvent_t prof_event_get(int device, void *ctx)
{
    if (!ctx && device < 0)
        return NULL;
    cudaEvent_t e = NULL;
    pthread_mutex_lock(&pool_lock);
    struct pool *p = pool_of(ctx ? -1 : device, ctx);
    if (p && p->n)
        e = p->ev[--p->n];
    pthread_mutex_unlock(&pool_lock);
    if (e || !p)
        return e;
    e = event_new(device, ctx);
    if (!e)
        return NULL;
    /* The real runtime is running now: an exit handler registered after its
     * own runs before it, while events can still be read. */
    pthread_mutex_lock(&pool_lock);
    if (!atexit_done) {
        atexit_done = 1;
        atexit(at_exit);
    }
    pthread_mutex_unlock(&pool_lock);
    return e;
}

void prof_event_put(int device, void *ctx, cudaEvent_t e)
{
    if (!e || (!ctx && device < 0))
        return;
    pthread_mutex_lock(&pool_lock);
    struct pool *p = pool_of(ctx ? -1 : device, ctx);
    if (p && p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        cudaEvent_t *n = realloc(p->ev, cap * sizeof *n);
        if (n)
            p->ev = n, p->cap = cap;
    }
    if (p && p->n < p->cap) /* else leaked: one event */
        p->ev[p->n++] = e;
    pthread_mutex_unlock(&pool_lock);
}

void prof_op_release(struct prof_op *op)
{
    if (op->start && !op->consumed) {
        prof_event_put(op->device, op->ctx, op->start);
        prof_event_put(op->device, op->ctx, op->end);
    }
}

/* ---- the queue ---- */

static int is_device_op(uint16_t type)
{
    return type == MAYA_REC_LAUNCH || type == MAYA_REC_MEMCPY || type == MAYA_REC_MEMSET ||
           type == MAYA_REC_GEMM || type == MAYA_REC_DNN || type == MAYA_REC_COLL;
}

void prof_divert(void *rec)
{
    struct maya_rec_hdr *h = rec;
    struct prof_op *op = building;
    /* captured work: the record becomes a node of the graph, a CALL record
     * flagged CAPTURING stands for the call */
    struct maya_rec_call stand_in;
    if (op && op->capturing && is_device_op(h->type) && ((struct maya_rec_call *)rec)->call.result == 0) {
        prof_capture_add(op->capture, rec);
        memset(&stand_in, 0, sizeof stand_in);
        stand_in.h.type = MAYA_REC_CALL;
        stand_in.h.flags = (uint16_t)(h->flags | MAYA_F_CAPTURING);
        stand_in.h.bytes = sizeof stand_in;
        stand_in.call = ((struct maya_rec_call *)rec)->call;
        rec = &stand_in;
        h = rec;
    }
    int measured = op && op->start && op->end && !op->consumed;
    pthread_mutex_lock(&qlock);
    if (!head && !measured) {
        emu_trace_commit(rec);
        pthread_mutex_unlock(&qlock);
        return;
    }
    struct pending *p = malloc(sizeof *p + h->bytes);
    if (!p) {
        /* No room to hold it: write it unmeasured (out of order with what is
         * held, which is better than losing it). */
        nunmeasured += measured;
        emu_trace_commit(rec);
        pthread_mutex_unlock(&qlock);
        return;
    }
    memset(p, 0, sizeof *p);
    memcpy(p->rec, rec, h->bytes);
    p->device = -1;
    if (measured) {
        p->start = op->start;
        p->end = op->end;
        p->device = op->device;
        p->ctx = op->ctx;
        op->consumed = 1;
    }
    if (tail)
        tail->next = p;
    else
        head = p;
    tail = p;
    nheld++;
    pthread_mutex_unlock(&qlock);
}

/* Write the head record (qlock held) with its measurement, if it has one. */
static void write_head(int measured, uint64_t ns)
{
    struct pending *p = head;
    struct maya_rec_hdr *h = (void *)p->rec;
    if (measured) {
        struct maya_rec_call *c = (void *)p->rec;
        c->call.measured_ns = ns;
        h->flags |= MAYA_F_MEASURED;
        nmeasured++;
    } else if (p->start) {
        nunmeasured++;
    }
    emu_trace_commit(p->rec);
    prof_event_put(p->device, p->ctx, p->start);
    prof_event_put(p->device, p->ctx, p->end);
    head = p->next;
    if (!head)
        tail = NULL;
    nheld--;
    free(p);
}

/* p's measurement: 1 read into *ms, 0 its end event has not completed
 * (only without blocking), -1 it cannot be read. Driver events are read
 * with the driver's functions (looked up only then: a program of the
 * runtime may have no libcuda loaded here). */
static int measurement(const struct pending *p, int blocking, float *ms)
{
    int e;
    if (p->ctx) {
        CUresult (*query)(CUevent) = PROF_REAL(prof_cuda, cuEventQuery);
        CUresult (*sync)(CUevent) = PROF_REAL(prof_cuda, cuEventSynchronize);
        CUresult (*elapsed)(float *, CUevent, CUevent) = PROF_REAL(prof_cuda, cuEventElapsedTime);
        e = query ? (int)query(p->end) : -1;
        if (e == CUDA_ERROR_NOT_READY && blocking)
            e = sync ? (int)sync(p->end) : -1;
        if (e == CUDA_SUCCESS)
            e = elapsed && elapsed(ms, p->start, p->end) == CUDA_SUCCESS ? 0 : -1;
        return e == CUDA_SUCCESS ? 1 : e == CUDA_ERROR_NOT_READY ? 0 : -1;
    }
    cudaError_t (*query)(cudaEvent_t) = PROF_REAL(prof_cudart, cudaEventQuery);
    cudaError_t (*sync)(cudaEvent_t) = PROF_REAL(prof_cudart, cudaEventSynchronize);
    cudaError_t (*elapsed)(float *, cudaEvent_t, cudaEvent_t) = PROF_REAL(prof_cudart, cudaEventElapsedTime);
    e = query ? (int)query(p->end) : -1;
    if (e == cudaErrorNotReady && blocking)
        e = sync ? (int)sync(p->end) : -1;
    if (e == cudaSuccess)
        e = elapsed && elapsed(ms, p->start, p->end) == cudaSuccess ? 0 : -1;
    return e == cudaSuccess ? 1 : e == cudaErrorNotReady ? 0 : -1;
}

/* Write every finished record from the head (qlock held); with blocking,
 * wait for each. */
static void collect_locked(int blocking)
{
    while (head) {
        float ms = 0;
        int m = head->start ? measurement(head, blocking, &ms) : -1;
        if (m == 0)
            return;
        if (m > 0 && ms >= 0)
            write_head(1, (uint64_t)((double)ms * 1e6 + 0.5));
        else
            write_head(0, 0);
    }
}

void prof_collect(int blocking)
{
    if (!blocking && nheld < COLLECT_AT)
        return;
    pthread_mutex_lock(&qlock);
    collect_locked(blocking || nheld >= BLOCK_AT);
    pthread_mutex_unlock(&qlock);
}

void prof_collect_now(void)
{
    pthread_mutex_lock(&qlock);
    collect_locked(0);
    pthread_mutex_unlock(&qlock);
}

static void at_exit(void)
{
    pthread_mutex_lock(&qlock);
    collect_locked(1);
    uint64_t m = nmeasured, u = nunmeasured;
    pthread_mutex_unlock(&qlock);
    if (u && !emu_config()->quiet)
        fprintf(stderr, "maya-profile: %llu of %llu device ops could not be measured (an event "
                "could not be recorded or read)\n", (unsigned long long)u, (unsigned long long)(m + u));
}
