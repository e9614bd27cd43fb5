/* Streams, events and host functions.
 *
 * Nothing runs on an emulated stream, so a stream is an identity (the id the
 * trace uses) plus its flags and capture state. Host functions are the one
 * kind of stream work the emulator executes: they run on a worker thread in
 * the order they were enqueued, as the driver runs them.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "graph_int.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_stream_id = 1, next_event_id = 1;

void emu_streams_init(void)
{
}

static void define_stream(struct emu_stream *s)
{
    struct maya_rec_stream r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_STREAM;
    r.h.bytes = sizeof r;
    r.stream = s->id;
    r.device = s->device;
    r.flags = s->flags;
    r.priority = s->priority;
    emu_trace_emit(&r);
}

static struct emu_stream *stream_new(int device, unsigned flags, int priority)
{
    struct emu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = EMU_STREAM_MAGIC;
    s->device = device;
    s->flags = flags;
    s->priority = priority;
    pthread_mutex_lock(&lock);
    s->id = next_stream_id++;
    pthread_mutex_unlock(&lock);
    emu_device_touch(emu_device(device));
    define_stream(s);
    return s;
}

struct emu_stream *emu_stream_new_internal(int device, unsigned flags, int priority)
{
    return stream_new(device, flags, priority);
}

EMU_API enum emu_err emu_stream_create(int device, unsigned flags, int priority, struct emu_stream **out)
{
    if (!emu_device(device))
        return EMU_ERR_INVALID_DEVICE;
    struct emu_stream *s = stream_new(device, flags & MAYA_STREAM_NON_BLOCKING, priority);
    if (!s)
        return EMU_ERR_OUT_OF_MEMORY;
    *out = s;
    return EMU_OK;
}

EMU_API enum emu_err emu_stream_destroy(struct emu_stream *s)
{
    if (!s || s->magic != EMU_STREAM_MAGIC || (s->flags & (MAYA_STREAM_LEGACY | MAYA_STREAM_PER_THREAD)))
        return EMU_ERR_INVALID_HANDLE;
    /* Destroying a stream lets its pending work finish first. */
    emu_hostfn_drain(s);
    s->magic = 0;
    /* Streams are small; keeping the memory means a stale handle fails the
     * magic check instead of reading freed memory. */
    return EMU_OK;
}

static struct emu_stream *legacy_stream(int device)
{
    struct emu_device *d = emu_device(device);
    if (!d)
        return NULL;
    struct emu_stream *s = __atomic_load_n(&d->legacy, __ATOMIC_ACQUIRE);
    if (s)
        return s;
    pthread_mutex_lock(&lock);
    s = d->legacy;
    pthread_mutex_unlock(&lock);
    if (s)
        return s;
    struct emu_stream *n = stream_new(device, MAYA_STREAM_LEGACY, 0);
    pthread_mutex_lock(&lock);
    if (!d->legacy)
        __atomic_store_n(&d->legacy, n, __ATOMIC_RELEASE);
    s = d->legacy;
    pthread_mutex_unlock(&lock);
    return s;
}

static struct emu_stream *per_thread_stream(int device)
{
    struct emu_thread *t = emu_thread();
    if (device < 0 || device >= (int)MAYA_ARRAY_LEN(t->per_thread))
        return NULL;
    if (!t->per_thread[device])
        t->per_thread[device] = stream_new(device, MAYA_STREAM_PER_THREAD, 0);
    return t->per_thread[device];
}

EMU_API struct emu_stream *emu_stream_resolve(const void *handle, int per_thread_default)
{
    uintptr_t h = (uintptr_t)handle;
    if (h == 0)
        return per_thread_default ? per_thread_stream(emu_current_device())
                                  : legacy_stream(emu_current_device());
    if (h == 1)
        return legacy_stream(emu_current_device());
    if (h == 2)
        return per_thread_stream(emu_current_device());
    const struct emu_stream *s = handle;
    return s->magic == EMU_STREAM_MAGIC ? (struct emu_stream *)s : NULL;
}

EMU_API enum emu_err emu_event_create(unsigned flags, struct emu_event **out)
{
    struct emu_event *e = calloc(1, sizeof *e);
    if (!e)
        return EMU_ERR_OUT_OF_MEMORY;
    e->magic = EMU_EVENT_MAGIC;
    e->flags = flags;
    e->device = emu_current_device();
    pthread_mutex_lock(&lock);
    e->id = next_event_id++;
    pthread_mutex_unlock(&lock);
    *out = e;
    return EMU_OK;
}

void emu_event_init_internal(struct emu_event *e)
{
    memset(e, 0, sizeof *e);
    e->flags = 0x2; /* cudaEventDisableTiming: nothing times internal events */
    e->device = -1;
    pthread_mutex_lock(&lock);
    e->id = next_event_id++;
    pthread_mutex_unlock(&lock);
}

EMU_API enum emu_err emu_event_destroy(struct emu_event *e)
{
    if (!e || e->magic != EMU_EVENT_MAGIC)
        return EMU_ERR_INVALID_HANDLE;
    e->magic = 0; /* kept, like streams, so stale handles are caught */
    return EMU_OK;
}

EMU_API struct emu_event *emu_event_resolve(const void *handle)
{
    const struct emu_event *e = handle;
    return e && e->magic == EMU_EVENT_MAGIC ? (struct emu_event *)e : NULL;
}

/* ---- host functions ----
 * One worker thread runs every stream's host functions in enqueue order,
 * which preserves each stream's order (the only order CUDA promises). */

struct hostfn {
    void (*fn)(void *);
    void *arg;
    struct emu_stream *stream;
    struct hostfn *next;
};

static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fn_cond = PTHREAD_COND_INITIALIZER;
static struct hostfn *fn_head, *fn_tail;
static struct hostfn *fn_running;
static uint64_t fn_queued, fn_done;    /* host functions queued / finished so far */
static int fn_worker_started;
static int fn_worker_ready;            /* the worker has read the clock once */
static pthread_t fn_worker;

static void *hostfn_main(void *arg)
{
    /* The clock sees this thread from its start (the active clock: a host
     * function it runs while the program's thread waits for a CPU is the
     * process working, not stalled, which the clock tells only of threads
     * it watches; host_clock.c); the thread that started it waits for this. */
    emu_now();
    pthread_mutex_lock(&fn_lock);
    fn_worker_ready = 1;
    pthread_cond_broadcast(&fn_cond);
    for (;;) {
        while (!fn_head)
            pthread_cond_wait(&fn_cond, &fn_lock);
        struct hostfn *f = fn_head;
        fn_head = f->next;
        if (!fn_head)
            fn_tail = NULL;
        fn_running = f;
        pthread_mutex_unlock(&fn_lock);
        f->fn(f->arg);
        emu_now(); /* the cpu host clock counts the function's work (host_clock.c) */
        pthread_mutex_lock(&fn_lock);
        fn_running = NULL;
        fn_done++;
        free(f);
        pthread_cond_broadcast(&fn_cond);
    }
    return NULL;
}

EMU_API enum emu_err emu_hostfn_enqueue(struct emu_stream *s, void (*fn)(void *), void *arg)
{
    if (emu_stream_capturing(s))
        return EMU_OK; /* captured: it runs when the graph is launched */
    struct hostfn *f = calloc(1, sizeof *f);
    if (!f)
        return EMU_ERR_OUT_OF_MEMORY;
    f->fn = fn;
    f->arg = arg;
    f->stream = s;
    pthread_mutex_lock(&fn_lock);
    if (!fn_worker_started) {
        /* Starting the worker is the emulator's cost, not the program's. */
        emu_wait_begin();
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&fn_worker, &attr, hostfn_main, NULL);
        pthread_attr_destroy(&attr);
        while (rc == 0 && !fn_worker_ready)
            pthread_cond_wait(&fn_cond, &fn_lock);
        emu_wait_end();
        if (rc != 0) {
            pthread_mutex_unlock(&fn_lock);
            free(f);
            return EMU_ERR_OUT_OF_MEMORY;
        }
        fn_worker_started = 1;
    }
    if (fn_tail)
        fn_tail->next = f;
    else
        fn_head = f;
    fn_tail = f;
    fn_queued++;
    pthread_cond_broadcast(&fn_cond);
    pthread_mutex_unlock(&fn_lock);
    return EMU_OK;
}

/* Does synchronising s wait for work of stream t? A stream waits for its
 * own work; the legacy default stream also for every blocking stream of its
 * device (its implicit synchronisation); NULL stands for the whole process. */
static int waits_for(const struct emu_stream *s, const struct emu_stream *t)
{
    if (!s || s == t)
        return 1;
    return (s->flags & MAYA_STREAM_LEGACY) && t && t->device == s->device &&
           !(t->flags & MAYA_STREAM_NON_BLOCKING);
}

static int pending_for(struct emu_stream *s)
{
    if (fn_running && waits_for(s, fn_running->stream))
        return 1;
    for (struct hostfn *f = fn_head; f; f = f->next)
        if (waits_for(s, f->stream))
            return 1;
    return 0;
}

EMU_API void emu_hostfn_drain(struct emu_stream *s)
{
    pthread_mutex_lock(&fn_lock);
    if (pending_for(s)) {
        /* A host function is the program's own work: time spent waiting for
         * it stays on the host clock, as on a GPU. */
        while (pending_for(s))
            pthread_cond_wait(&fn_cond, &fn_lock);
    }
    pthread_mutex_unlock(&fn_lock);
}

EMU_API int emu_hostfn_pending(struct emu_stream *s)
{
    pthread_mutex_lock(&fn_lock);
    int p = pending_for(s);
    pthread_mutex_unlock(&fn_lock);
    return p;
}

EMU_API uint64_t emu_hostfn_mark(void)
{
    pthread_mutex_lock(&fn_lock);
    uint64_t m = fn_queued;
    pthread_mutex_unlock(&fn_lock);
    return m;
}

EMU_API int emu_hostfn_done(uint64_t mark)
{
    pthread_mutex_lock(&fn_lock);
    int d = fn_done >= mark;
    pthread_mutex_unlock(&fn_lock);
    return d;
}

EMU_API void emu_hostfn_wait(uint64_t mark)
{
    pthread_mutex_lock(&fn_lock);
    while (fn_done < mark)
        pthread_cond_wait(&fn_cond, &fn_lock);
    pthread_mutex_unlock(&fn_lock);
}
