/* Stream capture: work issued to a capturing stream becomes nodes of a
 * graph instead of running.
 *
 * A capture starts on one stream (its origin); other streams join it by
 * waiting on an event recorded in it, and must be joined back into the
 * origin (the origin waits on an event recorded after their last work)
 * before the capture ends. Each capturing stream keeps the set of nodes
 * its next op depends on; an event recorded in a capture keeps a copy.
 *
 * Capture modes decide which "potentially unsafe" calls (allocation,
 * synchronisation, queries) a thread may make while captures are under
 * way; a forbidden call fails with cudaErrorStreamCaptureUnsupported and
 * invalidates the captures that forbade it, as CUDA does.
 *
 * One mutex guards all capture state. The paths every call takes when no
 * capture is under way read one counter and take no lock.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "graph_int.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

enum { MODE_GLOBAL = 0, MODE_THREAD_LOCAL = 1, MODE_RELAXED = 2 };

struct emu_capture {
    uint64_t id;
    struct emu_graph *graph;
    int own_graph;               /* made by the capture (not cudaStreamBeginCaptureToGraph) */
    int mode;
    int invalidated;
    int ended;
    const struct emu_thread *owner; /* the thread that began it (compared, never read) */
    struct emu_stream *origin;
    struct emu_stream **streams; /* every stream that took part */
    size_t nstreams, cap;
    struct emu_capture *next;    /* in the list of captures under way */
};

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static int active;               /* captures under way */
static struct emu_capture *captures;
static uint64_t next_capture_id = 1;
static __thread int thread_mode; /* cudaThreadExchangeStreamCaptureMode; 0 = global */

static int set_deps(struct emu_graph_node ***arr, size_t *n, size_t *cap, struct emu_graph_node *const *d,
                    size_t nd)
{
    if (nd && graph_grow(arr, cap, nd - 1, sizeof **arr) < 0)
        return -1;
    if (nd)
        memcpy(*arr, d, nd * sizeof *d);
    *n = nd;
    return 0;
}

static int add_deps(struct emu_stream *s, struct emu_graph_node *const *d, size_t nd)
{
    for (size_t i = 0; i < nd; i++) {
        int dup = 0;
        for (size_t j = 0; j < s->ncap_deps && !dup; j++)
            dup = s->cap_deps[j] == d[i];
        if (dup)
            continue;
        if (graph_grow(&s->cap_deps, &s->cap_deps_cap, s->ncap_deps, sizeof *s->cap_deps) < 0)
            return -1;
        s->cap_deps[s->ncap_deps++] = d[i];
    }
    return 0;
}

static int join(struct emu_capture *c, struct emu_stream *s)
{
    if (graph_grow(&c->streams, &c->cap, c->nstreams, sizeof *c->streams) < 0)
        return -1;
    c->streams[c->nstreams++] = s;
    s->capture = c;
    s->capture_mode = c->mode + 1;
    s->ncap_deps = 0;
    return 0;
}

/* End a capture: every stream leaves it (cap_lock held). The struct stays
 * allocated, marked ended: events recorded in it may still point at it. */
static void finish(struct emu_capture *c)
{
    for (size_t i = 0; i < c->nstreams; i++) {
        struct emu_stream *s = c->streams[i];
        if (s->capture == c) {
            s->capture = NULL;
            s->capture_mode = 0;
            s->ncap_deps = 0;
        }
    }
    free(c->streams);
    c->streams = NULL;
    c->nstreams = c->cap = 0;
    for (struct emu_capture **p = &captures; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    c->ended = 1;
    __atomic_store_n(&active, active - 1, __ATOMIC_RELEASE);
}

EMU_API enum emu_err emu_capture_begin(struct emu_stream *s, int mode, struct emu_graph *into,
                                       struct emu_graph_node *const *deps, size_t ndeps)
{
    if (!s || mode < MODE_GLOBAL || mode > MODE_RELAXED || (ndeps && !deps) || (into && !emu_graph_resolve(into)))
        return EMU_ERR_INVALID_VALUE;
    if (s->flags & MAYA_STREAM_LEGACY)
        return EMU_ERR_CAPTURE_UNSUPPORTED; /* the legacy stream cannot be captured */
    for (size_t i = 0; i < ndeps; i++)
        if (!into || !emu_graph_node_resolve(deps[i]) || deps[i]->graph != into)
            return EMU_ERR_INVALID_VALUE;
    struct emu_capture *c = calloc(1, sizeof *c);
    if (!c)
        return EMU_ERR_OUT_OF_MEMORY;
    enum emu_err e = EMU_OK;
    pthread_mutex_lock(&cap_lock);
    if (s->capture) {
        e = EMU_ERR_ILLEGAL_STATE;
    } else if (!into && (e = emu_graph_create(&c->graph)) == EMU_OK) {
        c->own_graph = 1;
    } else if (into) {
        c->graph = into;
    }
    if (e == EMU_OK) {
        c->id = next_capture_id++;
        c->mode = mode;
        c->owner = emu_thread();
        c->origin = s;
        if (join(c, s) < 0 || add_deps(s, deps, ndeps) < 0) {
            s->capture = NULL;
            s->capture_mode = 0;
            e = EMU_ERR_OUT_OF_MEMORY;
        }
    }
    if (e == EMU_OK) {
        c->next = captures;
        captures = c;
        __atomic_store_n(&active, active + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&cap_lock);
    if (e != EMU_OK) {
        if (c->own_graph)
            emu_graph_destroy(c->graph);
        free(c->streams);
        free(c);
    }
    return e;
}

/* Is every node a joined stream depends on an ancestor of (or one of) the
 * origin's dependencies? (cap_lock held) */
static int all_joined(struct emu_capture *c)
{
    struct emu_graph *g = c->graph;
    if (c->nstreams <= 1)
        return 1;
    unsigned char *mark = calloc(g->n + 1, 1);
    struct emu_graph_node **stack = malloc((g->n + 1) * sizeof *stack);
    int ok = 1;
    if (!mark || !stack) {
        free(mark);
        free(stack);
        return 1; /* cannot check: let it pass rather than fail the program */
    }
    size_t sp = 0;
    for (size_t i = 0; i < c->origin->ncap_deps; i++)
        if (!mark[c->origin->cap_deps[i]->index]) {
            mark[c->origin->cap_deps[i]->index] = 1;
            stack[sp++] = c->origin->cap_deps[i];
        }
    while (sp) {
        struct emu_graph_node *n = stack[--sp];
        for (size_t i = 0; i < n->ndeps; i++)
            if (!mark[n->deps[i]->index]) {
                mark[n->deps[i]->index] = 1;
                stack[sp++] = n->deps[i];
            }
    }
    for (size_t i = 0; i < c->nstreams && ok; i++) {
        struct emu_stream *s = c->streams[i];
        if (s == c->origin || s->capture != c)
            continue;
        for (size_t j = 0; j < s->ncap_deps && ok; j++)
            ok = mark[s->cap_deps[j]->index];
    }
    free(mark);
    free(stack);
    return ok;
}

EMU_API enum emu_err emu_capture_end(struct emu_stream *s, struct emu_graph **out)
{
    if (!s || !out)
        return EMU_ERR_INVALID_VALUE;
    *out = NULL;
    pthread_mutex_lock(&cap_lock);
    struct emu_capture *c = s->capture;
    enum emu_err e = EMU_OK;
    if (!c)
        e = EMU_ERR_ILLEGAL_STATE;
    else if (c->origin != s)
        e = EMU_ERR_CAPTURE_UNMATCHED;
    else if (c->mode != MODE_RELAXED && c->owner != emu_thread())
        e = EMU_ERR_CAPTURE_WRONG_THREAD;
    if (e != EMU_OK) {
        pthread_mutex_unlock(&cap_lock);
        return e;
    }
    if (c->invalidated)
        e = EMU_ERR_CAPTURE_INVALIDATED;
    else if (!all_joined(c))
        e = EMU_ERR_CAPTURE_UNJOINED;
    finish(c);
    if (e == EMU_OK)
        *out = c->graph;
    else if (c->own_graph)
        emu_graph_destroy(c->graph);
    c->graph = NULL;
    pthread_mutex_unlock(&cap_lock);
    return e;
}

EMU_API int emu_capture_status(const struct emu_stream *s, uint64_t *id, struct emu_graph **graph,
                               struct emu_graph_node *const **deps, size_t *ndeps)
{
    pthread_mutex_lock(&cap_lock);
    struct emu_capture *c = s->capture;
    int st = !c ? 0 : c->invalidated ? 2 : 1;
    if (id)
        *id = c ? c->id : 0;
    if (graph)
        *graph = c ? c->graph : NULL;
    if (deps)
        *deps = c ? s->cap_deps : NULL;
    if (ndeps)
        *ndeps = c ? s->ncap_deps : 0;
    pthread_mutex_unlock(&cap_lock);
    return st;
}

EMU_API enum emu_err emu_capture_update_deps(struct emu_stream *s, struct emu_graph_node *const *deps,
                                             size_t n, unsigned flags)
{
    if (!s || (n && !deps) || flags > 1)
        return EMU_ERR_INVALID_VALUE;
    pthread_mutex_lock(&cap_lock);
    struct emu_capture *c = s->capture;
    enum emu_err e = EMU_OK;
    if (!c)
        e = EMU_ERR_ILLEGAL_STATE;
    else if (c->invalidated)
        e = EMU_ERR_CAPTURE_INVALIDATED;
    for (size_t i = 0; i < n && e == EMU_OK; i++)
        if (!emu_graph_node_resolve(deps[i]) || deps[i]->graph != c->graph)
            e = EMU_ERR_INVALID_VALUE;
    if (e == EMU_OK) {
        if (flags == 1)
            s->ncap_deps = 0; /* cudaStreamSetCaptureDependencies */
        if (add_deps(s, deps, n) < 0)
            e = EMU_ERR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&cap_lock);
    return e;
}

EMU_API enum emu_err emu_capture_add(struct emu_stream *s, const struct emu_node_params *p,
                                     struct emu_graph_node **out)
{
    pthread_mutex_lock(&cap_lock);
    struct emu_capture *c = s->capture;
    enum emu_err e = EMU_OK;
    struct emu_graph_node *n = NULL;
    if (!c)
        e = EMU_ERR_ILLEGAL_STATE;
    else if (c->invalidated)
        e = EMU_ERR_CAPTURE_INVALIDATED;
    else
        e = graph_add_node_owned(c->graph, p, s->cap_deps, s->ncap_deps, &n);
    if (e == EMU_OK && set_deps(&s->cap_deps, &s->ncap_deps, &s->cap_deps_cap, &n, 1) < 0)
        e = EMU_ERR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&cap_lock);
    if (e == EMU_OK && out)
        *out = n;
    return e;
}

EMU_API int emu_capture_exchange_mode(int mode)
{
    int old = thread_mode;
    thread_mode = mode;
    return old;
}

/* ---- what other calls may do while captures are under way ---- */

EMU_API enum emu_err emu_stream_issue_check(struct emu_stream *s)
{
    if (__builtin_expect(__atomic_load_n(&active, __ATOMIC_ACQUIRE) == 0, 1) || !s)
        return EMU_OK;
    enum emu_err e = EMU_OK;
    pthread_mutex_lock(&cap_lock);
    if (s->capture) {
        if (s->capture->invalidated)
            e = EMU_ERR_CAPTURE_INVALIDATED;
    } else if (s->flags & MAYA_STREAM_LEGACY) {
        /* The legacy stream synchronises with every blocking stream of its
         * device: using it while one of them captures breaks the capture. */
        for (struct emu_capture *c = captures; c; c = c->next)
            for (size_t i = 0; i < c->nstreams; i++) {
                struct emu_stream *t = c->streams[i];
                if (t->capture == c && t->device == s->device && !(t->flags & MAYA_STREAM_NON_BLOCKING)) {
                    c->invalidated = 1;
                    e = EMU_ERR_CAPTURE_IMPLICIT;
                }
            }
    }
    pthread_mutex_unlock(&cap_lock);
    return e;
}

EMU_API enum emu_err emu_capture_unsafe_call(struct emu_stream *s)
{
    if (__builtin_expect(__atomic_load_n(&active, __ATOMIC_ACQUIRE) == 0, 1))
        return EMU_OK;
    enum emu_err e = EMU_OK;
    const struct emu_thread *self = emu_thread();
    pthread_mutex_lock(&cap_lock);
    if (s && s->capture) {
        s->capture->invalidated = 1;
        e = EMU_ERR_CAPTURE_UNSUPPORTED;
    } else if (thread_mode != MODE_RELAXED) {
        /* Forbidden by this thread's own captures (unless relaxed), and in
         * global mode by other threads' global-mode captures. */
        for (struct emu_capture *c = captures; c; c = c->next) {
            if (c->mode == MODE_RELAXED)
                continue;
            if (c->owner == self || (thread_mode == MODE_GLOBAL && c->mode == MODE_GLOBAL)) {
                c->invalidated = 1;
                e = EMU_ERR_CAPTURE_UNSUPPORTED;
            }
        }
    }
    pthread_mutex_unlock(&cap_lock);
    return e;
}

/* ---- events ---- */

EMU_API enum emu_err emu_event_record_on(struct emu_event *e, struct emu_stream *s, int external, uint32_t api)
{
    if (!emu_stream_capturing(s)) {
        if (__builtin_expect(e->capture != NULL, 0)) {
            pthread_mutex_lock(&cap_lock);
            e->capture = NULL;
            e->ncap_deps = 0;
            pthread_mutex_unlock(&cap_lock);
        }
        emu_event_record(e, s);
        return EMU_OK;
    }
    enum emu_err rc = EMU_OK;
    pthread_mutex_lock(&cap_lock);
    struct emu_capture *c = s->capture;
    if (c->invalidated) {
        rc = EMU_ERR_CAPTURE_INVALIDATED;
    } else if (external) {
        struct emu_node_params p = { .type = EMU_NODE_EVENT_RECORD, .api = api, .event = e };
        struct emu_graph_node *n;
        rc = graph_add_node_owned(c->graph, &p, s->cap_deps, s->ncap_deps, &n);
        if (rc == EMU_OK && set_deps(&s->cap_deps, &s->ncap_deps, &s->cap_deps_cap, &n, 1) < 0)
            rc = EMU_ERR_OUT_OF_MEMORY;
    }
    if (rc == EMU_OK) {
        size_t cap = e->ncap_deps;
        if (set_deps(&e->cap_deps, &e->ncap_deps, &cap, s->cap_deps, s->ncap_deps) < 0)
            rc = EMU_ERR_OUT_OF_MEMORY;
        else
            e->capture = c;
    }
    pthread_mutex_unlock(&cap_lock);
    return rc;
}

EMU_API enum emu_err emu_stream_wait_on(struct emu_stream *s, struct emu_event *e, uint32_t api)
{
    if (__builtin_expect(!e->capture && !s->capture, 1))
        return EMU_OK;
    enum emu_err rc = EMU_OK;
    pthread_mutex_lock(&cap_lock);
    struct emu_capture *c = e->capture;
    if (c && c->ended) {
        e->capture = NULL; /* recorded in a capture that is over */
        c = NULL;
    }
    if (c) {
        if (s->capture && s->capture != c)
            rc = EMU_ERR_CAPTURE_ISOLATION;
        else if (c->invalidated)
            rc = EMU_ERR_CAPTURE_INVALIDATED;
        else if (!s->capture && join(c, s) < 0)
            rc = EMU_ERR_OUT_OF_MEMORY;
        if (rc == EMU_OK && add_deps(s, e->cap_deps, e->ncap_deps) < 0)
            rc = EMU_ERR_OUT_OF_MEMORY;
    } else if (s->capture) {
        /* An event recorded outside the capture: the graph waits for it. */
        if (s->capture->invalidated) {
            rc = EMU_ERR_CAPTURE_INVALIDATED;
        } else {
            struct emu_node_params p = { .type = EMU_NODE_WAIT_EVENT, .api = api, .event = e };
            struct emu_graph_node *n;
            rc = graph_add_node_owned(s->capture->graph, &p, s->cap_deps, s->ncap_deps, &n);
            if (rc == EMU_OK && set_deps(&s->cap_deps, &s->ncap_deps, &s->cap_deps_cap, &n, 1) < 0)
                rc = EMU_ERR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&cap_lock);
    return rc;
}
