/* CUDA graphs: graphs of nodes, executable graphs and their launches.
 * Stream capture, which builds graphs from stream work, is in capture.c.
 *
 * A graph keeps its nodes in an array in creation order (the order
 * cudaGraphExecUpdate pairs nodes by); each node keeps the nodes it depends
 * on. Dependents are found by scanning: O(nodes x edges) for a listing,
 * which programs do rarely; instantiation computes them once.
 *
 * Instantiation flattens child graphs into one list of "slots", sorts it
 * topologically and gives each slot a lane: a chain of nodes that run one
 * after another. Lane 0 is the launching stream; other lanes are internal
 * streams of the executable graph. A dependency between lanes becomes an
 * event record after the first node and a wait before the second, so a
 * launch is traced as ordinary stream ops the simulator already replays,
 * with the graph's concurrency intact.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "graph_int.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

static uint64_t next_graph_id = 1, next_exec_id = 1;

/* ---- user objects ---- */

#define UOBJ_MAGIC 0x756f626au

struct emu_user_object {
    uint32_t magic;
    void *ptr;
    void (*destroy)(void *);
    unsigned refs;               /* atomic */
};

EMU_API enum emu_err emu_user_object_create(void *ptr, void (*destroy)(void *), unsigned refs,
                                            struct emu_user_object **out)
{
    if (!destroy || !refs || !out)
        return EMU_ERR_INVALID_VALUE;
    struct emu_user_object *o = calloc(1, sizeof *o);
    if (!o)
        return EMU_ERR_OUT_OF_MEMORY;
    o->magic = UOBJ_MAGIC;
    o->ptr = ptr;
    o->destroy = destroy;
    o->refs = refs;
    *out = o;
    return EMU_OK;
}

EMU_API struct emu_user_object *emu_user_object_resolve(const void *handle)
{
    const struct emu_user_object *o = handle;
    return o && o->magic == UOBJ_MAGIC ? (struct emu_user_object *)o : NULL;
}

EMU_API enum emu_err emu_user_object_retain(struct emu_user_object *o, unsigned count)
{
    if (!emu_user_object_resolve(o) || !count)
        return EMU_ERR_INVALID_VALUE;
    __atomic_add_fetch(&o->refs, count, __ATOMIC_RELAXED);
    return EMU_OK;
}

/* The destructor runs like a host function, off the caller's thread (CUDA
 * runs it asynchronously; it may not call CUDA). The object is kept,
 * marked dead, so a stale handle is refused rather than read after free. */
EMU_API enum emu_err emu_user_object_release(struct emu_user_object *o, unsigned count)
{
    if (!emu_user_object_resolve(o) || !count)
        return EMU_ERR_INVALID_VALUE;
    unsigned old = __atomic_load_n(&o->refs, __ATOMIC_RELAXED);
    do {
        if (count > old)
            return EMU_ERR_INVALID_VALUE;
    } while (!__atomic_compare_exchange_n(&o->refs, &old, old - count, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    if (old == count) {
        o->magic = 0;
        if (emu_hostfn_enqueue(NULL, o->destroy, o->ptr) != EMU_OK)
            o->destroy(o->ptr);
    }
    return EMU_OK;
}

static enum emu_err uref_add(struct emu_graph *g, struct emu_user_object *o, unsigned count)
{
    for (size_t i = 0; i < g->nurefs; i++)
        if (g->urefs[i].obj == o) {
            g->urefs[i].count += count;
            return EMU_OK;
        }
    if (graph_grow(&g->urefs, &g->urefcap, g->nurefs, sizeof *g->urefs) < 0)
        return EMU_ERR_OUT_OF_MEMORY;
    g->urefs[g->nurefs++] = (struct graph_uref){ o, count };
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_retain_user_object(struct emu_graph *g, struct emu_user_object *o, unsigned count,
                                                  int move)
{
    if (!emu_graph_resolve(g) || !emu_user_object_resolve(o) || !count)
        return EMU_ERR_INVALID_VALUE;
    enum emu_err e = move ? EMU_OK : emu_user_object_retain(o, count);
    if (e == EMU_OK && (e = uref_add(g, o, count)) != EMU_OK && !move)
        emu_user_object_release(o, count);
    return e;
}

EMU_API enum emu_err emu_graph_release_user_object(struct emu_graph *g, struct emu_user_object *o, unsigned count)
{
    if (!emu_graph_resolve(g) || !emu_user_object_resolve(o) || !count)
        return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < g->nurefs; i++)
        if (g->urefs[i].obj == o) {
            if (count > g->urefs[i].count)
                return EMU_ERR_INVALID_VALUE;
            g->urefs[i].count -= count;
            if (!g->urefs[i].count)
                g->urefs[i] = g->urefs[--g->nurefs];
            return emu_user_object_release(o, count);
        }
    return EMU_ERR_INVALID_VALUE;
}

/* ---- graphs and nodes ---- */

EMU_API struct emu_graph *emu_graph_resolve(const void *handle)
{
    const struct emu_graph *g = handle;
    return g && g->magic == GRAPH_MAGIC ? (struct emu_graph *)g : NULL;
}

EMU_API struct emu_graph_node *emu_graph_node_resolve(const void *handle)
{
    const struct emu_graph_node *n = handle;
    return n && n->magic == NODE_MAGIC ? (struct emu_graph_node *)n : NULL;
}

EMU_API struct emu_graph_exec *emu_graph_exec_resolve(const void *handle)
{
    const struct emu_graph_exec *x = handle;
    return x && x->magic == EXEC_MAGIC ? (struct emu_graph_exec *)x : NULL;
}

EMU_API enum emu_err emu_graph_create(struct emu_graph **out)
{
    if (!out)
        return EMU_ERR_INVALID_VALUE;
    struct emu_graph *g = calloc(1, sizeof *g);
    if (!g)
        return EMU_ERR_OUT_OF_MEMORY;
    g->magic = GRAPH_MAGIC;
    g->id = __atomic_fetch_add(&next_graph_id, 1, __ATOMIC_RELAXED);
    *out = g;
    return EMU_OK;
}

/* ---- graph memory ----
 * An allocation made by a MEM_ALLOC node belongs to the graphs holding that
 * node (the graph, its clones, executable graphs' copies). When a graph
 * also frees it (a MEM_FREE node), it is the graph's own workspace and is
 * given back when the last graph holding it goes; memory a graph allocates
 * without freeing is the program's to free, as in CUDA. Few entries: a
 * list under a mutex. */

struct gmem {
    uint64_t ptr;
    int refs;                    /* MEM_ALLOC nodes holding it */
    int freed_in_graph;          /* some MEM_FREE node frees it */
    struct gmem *next;
};

static struct gmem *gmems;
static pthread_mutex_t gmem_lock = PTHREAD_MUTEX_INITIALIZER;

static void gmem_ref(const struct emu_node_params *p, int delta)
{
    if (!p->mem.ptr || (p->type != EMU_NODE_MEM_ALLOC && p->type != EMU_NODE_MEM_FREE))
        return;
    uint64_t release = 0;
    pthread_mutex_lock(&gmem_lock);
    struct gmem **at = &gmems;
    while (*at && (*at)->ptr != p->mem.ptr)
        at = &(*at)->next;
    struct gmem *m = *at;
    if (!m && p->type == EMU_NODE_MEM_ALLOC && delta > 0 && (m = calloc(1, sizeof *m)) != NULL) {
        m->ptr = p->mem.ptr;
        m->next = gmems;
        gmems = m;
        at = &gmems;
    }
    if (m && p->type == EMU_NODE_MEM_FREE)
        m->freed_in_graph |= delta > 0;
    if (m && p->type == EMU_NODE_MEM_ALLOC && (m->refs += delta) <= 0) {
        if (m->freed_in_graph)
            release = m->ptr;
        *at = m->next;
        free(m);
    }
    pthread_mutex_unlock(&gmem_lock);
    struct emu_alloc a;
    uint64_t t0 = emu_now();
    if (release && emu_mem_free(release, 1 << MAYA_ALLOC_ASYNC, &a) == EMU_OK) {
        /* Traced as the destruction of a graph, in the API that made the
         * node (runtime: cuda..., driver: cu...). */
        const char *made_by = emu_string_text(p->api);
        uint32_t api = made_by && strncmp(made_by, "cuda", 4) != 0 ? EMU_API_ID("cuGraphDestroy")
                                                                    : EMU_API_ID("cudaGraphDestroy");
        emu_trace_alloc(MAYA_REC_FREE, api, t0, 0, a.base, a.bytes, a.kind, a.device, 0, 0);
    }
}

EMU_API enum emu_err emu_graph_mem_attr(int device, int attr, int set, uint64_t *value)
{
    if (!value || attr < 0 || attr > 3 || (set && ((attr != 1 && attr != 3) || *value != 0)))
        return EMU_ERR_INVALID_VALUE;
    if (!emu_device(device))
        return EMU_ERR_INVALID_DEVICE;
    if (!set)
        *value = 0;
    return EMU_OK;
}

static void params_release(struct emu_node_params *p)
{
    gmem_ref(p, -1);
    free((void *)p->kparams);
    p->kparams = NULL;
    free(p->kargs);
    p->kargs = NULL;
    if (p->child)
        emu_graph_destroy(p->child);
    p->child = NULL;
    free((void *)p->op_rec);
    p->op_rec = NULL;
}

/* Copy what a node owns: the kernel parameter buffer and a child graph. */
static enum emu_err params_copy(struct emu_node_params *dst, const struct emu_node_params *src)
{
    *dst = *src;
    dst->kparams = NULL;
    dst->kargs = NULL;
    dst->child = NULL;
    dst->op_rec = NULL;
    if (src->type == EMU_NODE_OP) {
        uint32_t bytes = ((const struct maya_rec_hdr *)src->op_rec)->bytes;
        void *r = malloc(bytes);
        if (!r)
            return EMU_ERR_OUT_OF_MEMORY;
        memcpy(r, src->op_rec, bytes);
        dst->op_rec = r;
    }
    if (src->type == EMU_NODE_KERNEL && src->kparams && src->kparam_bytes) {
        unsigned char *b = malloc(src->kparam_bytes);
        if (!b)
            return EMU_ERR_OUT_OF_MEMORY;
        memcpy(b, src->kparams, src->kparam_bytes);
        dst->kparams = b;
        const struct emu_kernel *k = src->launch.kernel;
        if (k && k->layout_known && k->param_bytes <= src->kparam_bytes &&
            (dst->kargs = malloc((k->nparams + 1) * sizeof *dst->kargs)) != NULL)
            for (uint32_t i = 0; i < k->nparams; i++)
                dst->kargs[i] = b + k->params[i].offset;
    } else {
        dst->kparam_bytes = 0;
    }
    gmem_ref(dst, +1);
    if (src->type == EMU_NODE_GRAPH) {
        struct emu_graph *c = emu_graph_resolve(src->child);
        if (!c) {
            free((void *)dst->kparams);
            free(dst->kargs);
            return EMU_ERR_INVALID_VALUE;
        }
        enum emu_err e = emu_graph_clone(c, &dst->child);
        if (e != EMU_OK) {
            free((void *)dst->kparams);
            free(dst->kargs);
            return e;
        }
    }
    return EMU_OK;
}

static int node_has_dep(const struct emu_graph_node *n, const struct emu_graph_node *d)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == d)
            return 1;
    return 0;
}

static enum emu_err node_add_dep(struct emu_graph_node *n, struct emu_graph_node *d)
{
    if (node_has_dep(n, d))
        return EMU_OK;
    if (graph_grow(&n->deps, &n->depcap, n->ndeps, sizeof *n->deps) < 0)
        return EMU_ERR_OUT_OF_MEMORY;
    n->deps[n->ndeps++] = d;
    return EMU_OK;
}

static int node_remove_dep(struct emu_graph_node *n, const struct emu_graph_node *d)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == d) {
            memmove(&n->deps[i], &n->deps[i + 1], (n->ndeps - i - 1) * sizeof *n->deps);
            n->ndeps--;
            return 1;
        }
    return 0;
}

/* Append a node whose params are already owned (copied). */
static enum emu_err graph_append(struct emu_graph *g, struct emu_graph_node *n)
{
    if (graph_grow(&g->nodes, &g->cap, g->n, sizeof *g->nodes) < 0)
        return EMU_ERR_OUT_OF_MEMORY;
    n->index = (uint32_t)g->n;
    g->nodes[g->n++] = n;
    return EMU_OK;
}

static void node_free(struct emu_graph_node *n)
{
    params_release(&n->p);
    free(n->deps);
    n->magic = 0;
    free(n);
}

static enum emu_err check_params(const struct emu_node_params *p)
{
    switch (p->type) {
    case EMU_NODE_KERNEL:
        return p->launch.kernel ? EMU_OK : EMU_ERR_INVALID_VALUE;
    case EMU_NODE_MEMSET: {
        unsigned eb = p->memset.elem_bytes;
        if (eb != 1 && eb != 2 && eb != 4)
            return EMU_ERR_INVALID_VALUE;
        if (p->memset.height > 1 && p->memset.width * eb > p->memset.pitch)
            return EMU_ERR_INVALID_VALUE; /* rows overlap */
        return emu_ptr_device((uint64_t)(uintptr_t)p->memset.dst, NULL) >= 0 ? EMU_OK : EMU_ERR_INVALID_VALUE;
    }
    case EMU_NODE_HOST:
        return p->host.fn ? EMU_OK : EMU_ERR_INVALID_VALUE;
    case EMU_NODE_GRAPH:
        return emu_graph_resolve(p->child) ? EMU_OK : EMU_ERR_INVALID_VALUE;
    case EMU_NODE_WAIT_EVENT:
    case EMU_NODE_EVENT_RECORD:
        return emu_event_resolve(p->event) ? EMU_OK : EMU_ERR_INVALID_HANDLE;
    case EMU_NODE_MEM_ALLOC:
        /* a node made by a copy of its graph has its memory already */
        return p->mem.ptr || (emu_device(p->mem.device) && p->mem.bytes) ? EMU_OK : EMU_ERR_INVALID_VALUE;
    case EMU_NODE_MEM_FREE: {
        struct emu_alloc a; /* the start of an allocation */
        return emu_mem_lookup(p->mem.ptr, &a) && a.base == p->mem.ptr ? EMU_OK : EMU_ERR_INVALID_VALUE;
    }
    case EMU_NODE_MEMCPY:
    case EMU_NODE_EMPTY:
        return EMU_OK;
    case EMU_NODE_OP: {
        const struct maya_rec_hdr *h = p->op_rec;
        return h && maya_rec_is_call(h->type) && h->bytes >= sizeof(struct maya_rec_call) ? EMU_OK
                                                                                         : EMU_ERR_INVALID_VALUE;
    }
    }
    return EMU_ERR_INVALID_VALUE;
}

enum emu_err graph_add_node_owned(struct emu_graph *g, const struct emu_node_params *p,
                                  struct emu_graph_node *const *deps, size_t ndeps,
                                  struct emu_graph_node **out)
{
    for (size_t i = 0; i < ndeps; i++)
        if (!emu_graph_node_resolve(deps[i]) || deps[i]->graph != g)
            return EMU_ERR_INVALID_VALUE;
    enum emu_err e = check_params(p);
    if (e != EMU_OK)
        return e;
    struct emu_graph_node *n = calloc(1, sizeof *n);
    if (!n)
        return EMU_ERR_OUT_OF_MEMORY;
    n->magic = NODE_MAGIC;
    n->graph = g;
    n->enabled = 1;
    if ((e = params_copy(&n->p, p)) != EMU_OK) {
        free(n);
        return e;
    }
    if (n->p.type == EMU_NODE_MEMCPY)
        emu_copy_classify(&n->p.copy);
    if (n->p.type == EMU_NODE_MEM_ALLOC && !n->p.mem.ptr) {
        /* Graph memory is allocated when the node is made and stays
         * allocated (a real graph's pool keeps it mapped across launches). */
        uint64_t t0 = emu_now();
        e = emu_mem_alloc(n->p.mem.device, n->p.mem.bytes, MAYA_ALLOC_ASYNC, 0, &n->p.mem.ptr);
        if (e == EMU_OK) {
            emu_trace_alloc(MAYA_REC_ALLOC, n->p.api, t0, 0, n->p.mem.ptr, n->p.mem.bytes, MAYA_ALLOC_ASYNC,
                            n->p.mem.device, 0, 0);
            gmem_ref(&n->p, +1);
        }
    }
    for (size_t i = 0; i < ndeps && e == EMU_OK; i++)
        e = node_add_dep(n, deps[i]);
    if (e == EMU_OK)
        e = graph_append(g, n);
    if (e != EMU_OK) {
        node_free(n);
        return e;
    }
    if (out)
        *out = n;
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_add_node(struct emu_graph *g, const struct emu_node_params *p,
                                        struct emu_graph_node *const *deps, size_t ndeps,
                                        struct emu_graph_node **out)
{
    if (!emu_graph_resolve(g) || !p || (ndeps && !deps))
        return EMU_ERR_INVALID_VALUE;
    return graph_add_node_owned(g, p, deps, ndeps, out);
}

EMU_API enum emu_err emu_graph_node_destroy(struct emu_graph_node *n)
{
    if (!emu_graph_node_resolve(n))
        return EMU_ERR_INVALID_VALUE;
    struct emu_graph *g = n->graph;
    for (size_t i = 0; i < g->n; i++)
        node_remove_dep(g->nodes[i], n);
    size_t at = n->index;
    memmove(&g->nodes[at], &g->nodes[at + 1], (g->n - at - 1) * sizeof *g->nodes);
    g->n--;
    for (size_t i = at; i < g->n; i++)
        g->nodes[i]->index = (uint32_t)i;
    node_free(n);
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_destroy(struct emu_graph *g)
{
    if (!emu_graph_resolve(g))
        return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < g->n; i++)
        node_free(g->nodes[i]);
    free(g->nodes);
    for (size_t i = 0; i < g->nurefs; i++)
        emu_user_object_release(g->urefs[i].obj, g->urefs[i].count);
    free(g->urefs);
    g->magic = 0;
    free(g);
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_clone(struct emu_graph *g, struct emu_graph **out)
{
    if (!emu_graph_resolve(g) || !out)
        return EMU_ERR_INVALID_VALUE;
    struct emu_graph *c;
    enum emu_err e = emu_graph_create(&c);
    for (size_t i = 0; i < g->n && e == EMU_OK; i++) {
        const struct emu_graph_node *o = g->nodes[i];
        struct emu_graph_node *n = calloc(1, sizeof *n);
        if (!n) {
            e = EMU_ERR_OUT_OF_MEMORY;
            break;
        }
        n->magic = NODE_MAGIC;
        n->graph = c;
        n->enabled = o->enabled;
        n->clone_of = (struct emu_graph_node *)o;
        if ((e = params_copy(&n->p, &o->p)) != EMU_OK) {
            free(n);
            break;
        }
        if ((e = graph_append(c, n)) != EMU_OK)
            node_free(n);
    }
    /* A clone keeps the user objects alive as well. */
    for (size_t i = 0; i < g->nurefs && e == EMU_OK; i++)
        e = emu_graph_retain_user_object(c, g->urefs[i].obj, g->urefs[i].count, 0);
    /* Edges by index: the clone's nodes are in the same order. */
    for (size_t i = 0; i < g->n && e == EMU_OK; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps && e == EMU_OK; j++)
            e = node_add_dep(c->nodes[i], c->nodes[g->nodes[i]->deps[j]->index]);
    if (e != EMU_OK) {
        if (c)
            emu_graph_destroy(c);
        return e;
    }
    *out = c;
    return EMU_OK;
}

EMU_API struct emu_graph_node *emu_graph_node_in_clone(struct emu_graph *clone, const struct emu_graph_node *orig)
{
    if (!emu_graph_resolve(clone))
        return NULL;
    for (size_t i = 0; i < clone->n; i++)
        if (clone->nodes[i]->clone_of == orig)
            return clone->nodes[i];
    return NULL;
}

EMU_API const struct emu_node_params *emu_graph_node_params(const struct emu_graph_node *n)
{
    return &n->p;
}

EMU_API const struct emu_node_params *emu_graph_node_params_of(const void *node, int type)
{
    const struct emu_graph_node *n = emu_graph_node_resolve(node);
    return n && n->p.type == type ? &n->p : NULL;
}

EMU_API enum emu_err emu_graph_node_ref(const void *node, int type, void *out)
{
    const struct emu_node_params *p = emu_graph_node_params_of(node, type);
    if (!p || !out)
        return EMU_ERR_INVALID_VALUE;
    switch (type) {
    case EMU_NODE_GRAPH: *(struct emu_graph **)out = p->child; break;
    case EMU_NODE_EVENT_RECORD:
    case EMU_NODE_WAIT_EVENT: *(struct emu_event **)out = p->event; break;
    case EMU_NODE_MEM_FREE: *(uint64_t *)out = p->mem.ptr; break;
    default: return EMU_ERR_INVALID_VALUE;
    }
    return EMU_OK;
}

EMU_API struct emu_graph *emu_graph_node_graph(const struct emu_graph_node *n)
{
    return n->graph;
}

EMU_API enum emu_err emu_graph_node_set_params(struct emu_graph_node *n, const struct emu_node_params *p)
{
    if (!emu_graph_node_resolve(n) || !p || p->type != n->p.type)
        return EMU_ERR_INVALID_VALUE;
    enum emu_err e = check_params(p);
    struct emu_node_params np;
    if (e != EMU_OK || (e = params_copy(&np, p)) != EMU_OK)
        return e;
    if (np.type == EMU_NODE_MEMCPY)
        emu_copy_classify(&np.copy);
    params_release(&n->p);
    n->p = np;
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_add_deps(struct emu_graph *g, struct emu_graph_node *const *from,
                                        struct emu_graph_node *const *to, size_t n)
{
    if (!emu_graph_resolve(g) || (n && (!from || !to)))
        return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++)
        if (!emu_graph_node_resolve(from[i]) || !emu_graph_node_resolve(to[i]) || from[i]->graph != g ||
            to[i]->graph != g || from[i] == to[i] || node_has_dep(to[i], from[i]))
            return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        enum emu_err e = node_add_dep(to[i], from[i]);
        if (e != EMU_OK)
            return e;
    }
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_remove_deps(struct emu_graph *g, struct emu_graph_node *const *from,
                                           struct emu_graph_node *const *to, size_t n)
{
    if (!emu_graph_resolve(g) || (n && (!from || !to)))
        return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++)
        if (!emu_graph_node_resolve(from[i]) || !emu_graph_node_resolve(to[i]) || to[i]->graph != g ||
            !node_has_dep(to[i], from[i]))
            return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++)
        node_remove_dep(to[i], from[i]);
    return EMU_OK;
}

static void list_put(struct emu_graph_node **out, size_t cap, size_t *k, struct emu_graph_node *n)
{
    if (out && *k < cap)
        out[*k] = n;
    (*k)++;
}

/* The end of a listing: every edge is a plain (default) edge, so the edge
 * data of those listed (8 bytes each in both APIs) is zeroed. */
static enum emu_err list_end(void *edge_data, size_t cap, size_t k, size_t *count)
{
    if (edge_data)
        memset(edge_data, 0, MAYA_MIN(k, cap) * 8);
    *count = k;
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_nodes(struct emu_graph *g, struct emu_graph_node **out, size_t *count)
{
    if (!emu_graph_resolve(g) || !count)
        return EMU_ERR_INVALID_VALUE;
    size_t k = 0, cap = out ? *count : 0;
    for (size_t i = 0; i < g->n; i++)
        list_put(out, cap, &k, g->nodes[i]);
    return list_end(NULL, cap, k, count);
}

EMU_API enum emu_err emu_graph_roots(struct emu_graph *g, struct emu_graph_node **out, size_t *count)
{
    if (!emu_graph_resolve(g) || !count)
        return EMU_ERR_INVALID_VALUE;
    size_t k = 0, cap = out ? *count : 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i]->ndeps == 0)
            list_put(out, cap, &k, g->nodes[i]);
    return list_end(NULL, cap, k, count);
}

EMU_API enum emu_err emu_graph_edges(struct emu_graph *g, struct emu_graph_node **from, struct emu_graph_node **to,
                                     void *edge_data, size_t *count)
{
    if (!emu_graph_resolve(g) || !count || (!from) != (!to))
        return EMU_ERR_INVALID_VALUE;
    size_t k = 0, cap = from ? *count : 0;
    for (size_t i = 0; i < g->n; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps; j++) {
            size_t at = k;
            list_put(from, cap, &k, g->nodes[i]->deps[j]);
            list_put(to, cap, &at, g->nodes[i]);
        }
    return list_end(edge_data, cap, k, count);
}

EMU_API enum emu_err emu_graph_node_deps(struct emu_graph_node *n, struct emu_graph_node **out, void *edge_data,
                                         size_t *count)
{
    if (!emu_graph_node_resolve(n) || !count)
        return EMU_ERR_INVALID_VALUE;
    size_t k = 0, cap = out ? *count : 0;
    for (size_t i = 0; i < n->ndeps; i++)
        list_put(out, cap, &k, n->deps[i]);
    return list_end(edge_data, cap, k, count);
}

EMU_API enum emu_err emu_graph_node_dependents(struct emu_graph_node *n, struct emu_graph_node **out,
                                               void *edge_data, size_t *count)
{
    if (!emu_graph_node_resolve(n) || !count)
        return EMU_ERR_INVALID_VALUE;
    size_t k = 0, cap = out ? *count : 0;
    struct emu_graph *g = n->graph;
    for (size_t i = 0; i < g->n; i++)
        if (node_has_dep(g->nodes[i], n))
            list_put(out, cap, &k, g->nodes[i]);
    return list_end(edge_data, cap, k, count);
}

/* ---- flattening: child graphs inlined, one slot per node ---- */

struct flat {
    struct slot *s;
    int n, cap;
};

static int flat_add(struct flat *f, const struct emu_graph_node *src)
{
    if (f->n == f->cap) {
        int c = f->cap ? f->cap * 2 : 32;
        struct slot *p = realloc(f->s, (size_t)c * sizeof *p);
        if (!p)
            return -1;
        f->s = p;
        f->cap = c;
    }
    struct slot *s = &f->s[f->n];
    memset(s, 0, sizeof *s);
    s->src = src;
    s->src_type = src->p.type;
    s->walk = f->n;
    s->enabled = src->enabled;
    return f->n++;
}

static int slot_add_dep(struct slot *s, int d)
{
    for (int i = 0; i < s->ndeps; i++)
        if (s->deps[i] == d)
            return 0;
    int *p = realloc(s->deps, (size_t)(s->ndeps + 1) * sizeof *p);
    if (!p)
        return -1;
    s->deps = p;
    s->deps[s->ndeps++] = d;
    return 0;
}

static void flat_free(struct flat *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->s[i].deps);
    free(f->s);
    f->s = NULL;
    f->n = f->cap = 0;
}

/* Slots for the nodes of g, in g's order, then each child graph's slots
 * (recursively) in a block after. Roots take outer as their dependencies.
 * A child-graph node becomes an empty "join" slot after its graph's leaves. */
static int flatten(struct flat *f, const struct emu_graph *g, const int *outer, int nouter, int depth)
{
    if (depth > 64)
        return -1; /* a graph cannot contain itself; this bounds a damaged one */
    int base = f->n;
    for (size_t i = 0; i < g->n; i++)
        if (flat_add(f, g->nodes[i]) < 0)
            return -1;
    for (size_t i = 0; i < g->n; i++) {
        const struct emu_graph_node *n = g->nodes[i];
        int me = base + (int)i;
        int *deps = NULL, nd = 0;
        if (n->ndeps) {
            deps = malloc(n->ndeps * sizeof *deps);
            if (!deps)
                return -1;
            for (size_t j = 0; j < n->ndeps; j++)
                deps[nd++] = base + (int)n->deps[j]->index;
        } else if (nouter) {
            deps = malloc((size_t)nouter * sizeof *deps);
            if (!deps)
                return -1;
            memcpy(deps, outer, (size_t)nouter * sizeof *deps);
            nd = nouter;
        }
        int rc = 0;
        if (n->p.type == EMU_NODE_GRAPH && n->p.child && n->p.child->n) {
            const struct emu_graph *c = n->p.child;
            int cbase = f->n;
            rc = flatten(f, c, deps, nd, depth + 1);
            /* the join waits for the child's leaves */
            for (size_t j = 0; j < c->n && rc == 0; j++) {
                int leaf = 1;
                for (size_t k = 0; k < c->n && leaf; k++)
                    leaf = !node_has_dep(c->nodes[k], c->nodes[j]);
                if (leaf)
                    rc = slot_add_dep(&f->s[me], cbase + (int)j);
            }
            f->s[me].child_end = f->n;
        } else {
            for (int j = 0; j < nd && rc == 0; j++)
                rc = slot_add_dep(&f->s[me], deps[j]);
        }
        free(deps);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Kahn's algorithm: order[i] = walk index of the i-th slot to run.
 * Returns -1 on a cycle. O(slots + edges) with a dependents count. */
static int topo_sort(const struct flat *f, int *order)
{
    int n = f->n, head = 0, tail = 0, rc = 0;
    int *indeg = calloc((size_t)n + 1, sizeof *indeg);
    int *nout = calloc((size_t)n + 1, sizeof *nout);
    int **out = calloc((size_t)n + 1, sizeof *out);
    if (!indeg || !nout || !out) {
        rc = -1;
        goto done;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < f->s[i].ndeps; j++)
            nout[f->s[i].deps[j]]++;
    for (int i = 0; i < n; i++) {
        out[i] = malloc((size_t)(nout[i] + 1) * sizeof **out);
        if (!out[i]) {
            rc = -1;
            goto done;
        }
        nout[i] = 0;
    }
    for (int i = 0; i < n; i++) {
        indeg[i] = f->s[i].ndeps;
        for (int j = 0; j < f->s[i].ndeps; j++) {
            int d = f->s[i].deps[j];
            out[d][nout[d]++] = i;
        }
    }
    for (int i = 0; i < n; i++)
        if (indeg[i] == 0)
            order[tail++] = i;
    while (head < tail) {
        int v = order[head++];
        for (int j = 0; j < nout[v]; j++)
            if (--indeg[out[v][j]] == 0)
                order[tail++] = out[v][j];
    }
    if (tail != n)
        rc = -1;
done:
    if (out)
        for (int i = 0; i < n; i++)
            free(out[i]);
    free(out);
    free(nout);
    free(indeg);
    return rc;
}

/* ---- executable graphs ---- */

static void exec_free_slots(struct emu_graph_exec *x)
{
    for (int i = 0; i < x->n; i++) {
        free(x->slots[i].deps);
        free(x->slots[i].kbuf);
    }
    free(x->slots);
    x->slots = NULL;
    x->n = 0;
}

/* The params a slot runs with: the source node's, the kernel buffer owned
 * by the slot (sources may be changed or destroyed after instantiation). */
static int slot_take_params(struct slot *s, const struct emu_graph_node *src)
{
    void *kb = NULL;
    if (src->p.type == EMU_NODE_KERNEL && src->p.kparams && src->p.kparam_bytes) {
        kb = malloc(src->p.kparam_bytes);
        if (!kb)
            return -1;
        memcpy(kb, src->p.kparams, src->p.kparam_bytes);
    }
    free(s->kbuf);
    s->kbuf = kb;
    s->p = src->p;
    s->p.kparams = kb;
    s->p.kargs = NULL;
    s->p.child = NULL;
    if (s->p.type == EMU_NODE_GRAPH)
        s->p.type = EMU_NODE_EMPTY; /* its join: the child's nodes have their own slots */
    return 0;
}

static enum emu_err exec_build(struct emu_graph_exec *x, const struct emu_graph *g)
{
    struct flat f = { 0 };
    int *order = NULL, *pos = NULL, *tail = NULL;
    enum emu_err e = EMU_ERR_OUT_OF_MEMORY;
    if (flatten(&f, g, NULL, 0, 0) < 0)
        goto out;
    order = malloc(((size_t)f.n + 1) * sizeof *order);
    pos = malloc(((size_t)f.n + 1) * sizeof *pos);
    tail = malloc(((size_t)f.n + 1) * sizeof *tail);
    if (!order || !pos || !tail)
        goto out;
    if (topo_sort(&f, order) < 0) {
        e = EMU_ERR_INVALID_VALUE; /* a cycle */
        goto out;
    }
    struct slot *s = calloc((size_t)f.n + 1, sizeof *s);
    if (!s)
        goto out;
    for (int i = 0; i < f.n; i++)
        pos[order[i]] = i;
    for (int i = 0; i < f.n; i++) {
        s[i] = f.s[order[i]];
        f.s[order[i]].deps = NULL;
        for (int j = 0; j < s[i].ndeps; j++)
            s[i].deps[j] = pos[s[i].deps[j]];
        s[i].kbuf = NULL;
        if (slot_take_params(&s[i], s[i].src) < 0) {
            for (int k = 0; k <= i; k++) {
                free(s[k].deps);
                free(s[k].kbuf);
            }
            for (int k = i + 1; k < f.n; k++)
                free(s[k].deps);
            free(s);
            goto out;
        }
    }
    /* Lanes: a slot continues the lane of its first dependency that is
     * still that lane's last slot; otherwise it starts a lane. */
    int nlanes = 0;
    for (int i = 0; i < f.n; i++) {
        int lane = -1;
        for (int j = 0; j < s[i].ndeps && lane < 0; j++) {
            int d = s[i].deps[j];
            if (tail[s[d].lane] == d)
                lane = s[d].lane;
        }
        if (lane < 0)
            lane = nlanes++;
        s[i].lane = lane;
        tail[lane] = i;
    }
    for (int i = 0; i < f.n; i++)
        for (int j = 0; j < s[i].ndeps; j++)
            if (s[s[i].deps[j]].lane != s[i].lane)
                s[s[i].deps[j]].has_event = 1;
    for (int l = 1; l < nlanes; l++)
        s[tail[l]].has_event = 1; /* joined back into the launching stream */
    x->need_fork = 0;
    for (int i = 0; i < f.n; i++) {
        s[i].lane_tail = tail[s[i].lane] == i;
        s[i].join_at_end = s[i].lane_tail && s[i].lane != 0;
        x->need_fork |= s[i].lane != 0 && s[i].ndeps == 0;
    }
    for (int i = 0; i < f.n; i++)
        for (int j = 0; j < s[i].ndeps && s[i].lane == 0; j++)
            s[s[i].deps[j]].join_at_end = 0; /* lane 0 waits for it already */
    exec_free_slots(x);
    x->slots = s;
    x->n = f.n;
    x->nlanes = MAYA_MAX(nlanes, 1);
    e = EMU_OK;
out:
    flat_free(&f);
    free(order);
    free(pos);
    free(tail);
    return e;
}

EMU_API enum emu_err emu_graph_instantiate(struct emu_graph *g, uint64_t flags, struct emu_graph_exec **out)
{
    if (!emu_graph_resolve(g) || !out)
        return EMU_ERR_INVALID_VALUE;
    struct emu_graph_exec *x = calloc(1, sizeof *x);
    if (!x)
        return EMU_ERR_OUT_OF_MEMORY;
    x->flags = flags;
    enum emu_err e = emu_graph_clone(g, &x->graph);
    if (e == EMU_OK)
        e = exec_build(x, x->graph);
    if (e != EMU_OK) {
        if (x->graph)
            emu_graph_destroy(x->graph);
        free(x);
        return e;
    }
    pthread_mutex_init(&x->lock, NULL);
    x->magic = EXEC_MAGIC;
    x->id = __atomic_fetch_add(&next_exec_id, 1, __ATOMIC_RELAXED);
    emu_event_init_internal(&x->fork);
    for (int i = 0; i < x->n; i++)
        if (x->slots[i].has_event)
            emu_event_init_internal(&x->slots[i].ev);
    *out = x;
    return EMU_OK;
}

EMU_API enum emu_err emu_graph_exec_destroy(struct emu_graph_exec *x)
{
    if (!emu_graph_exec_resolve(x))
        return EMU_ERR_INVALID_VALUE;
    x->magic = 0;
    exec_free_slots(x);
    emu_graph_destroy(x->graph);
    /* Internal streams are kept (their ids are in the trace; a stream is a
     * few dozen bytes): destroying one would need its work drained first. */
    free(x->lanes);
    pthread_mutex_destroy(&x->lock);
    free(x);
    return EMU_OK;
}

EMU_API uint64_t emu_graph_exec_flags(const struct emu_graph_exec *x)
{
    return x->flags;
}

/* Nodes of x->graph paired with nodes of g by position, recursively into
 * child graphs: same count, same types, same edges. */
static enum emu_update_result compare(const struct emu_graph *a, const struct emu_graph *b,
                                      struct emu_graph_node **err_node, int depth)
{
    if (a->n != b->n || depth > 64) {
        *err_node = NULL;
        return EMU_UPDATE_TOPOLOGY_CHANGED;
    }
    for (size_t i = 0; i < a->n; i++) {
        const struct emu_graph_node *p = a->nodes[i], *q = b->nodes[i];
        *err_node = (struct emu_graph_node *)q;
        if (p->p.type != q->p.type)
            return EMU_UPDATE_NODE_TYPE_CHANGED;
        if (p->ndeps != q->ndeps)
            return EMU_UPDATE_TOPOLOGY_CHANGED;
        for (size_t j = 0; j < p->ndeps; j++) {
            int found = 0;
            for (size_t k = 0; k < q->ndeps && !found; k++)
                found = q->deps[k]->index == p->deps[j]->index;
            if (!found)
                return EMU_UPDATE_TOPOLOGY_CHANGED;
        }
        if (p->p.type == EMU_NODE_MEM_ALLOC || p->p.type == EMU_NODE_MEM_FREE) {
            if (p->p.mem.ptr != q->p.mem.ptr || p->p.mem.bytes != q->p.mem.bytes)
                return EMU_UPDATE_NOT_SUPPORTED;
        }
        if (p->p.type == EMU_NODE_GRAPH) {
            enum emu_update_result r = compare(p->p.child, q->p.child, err_node, depth + 1);
            if (r != EMU_UPDATE_SUCCESS)
                return r;
        }
    }
    *err_node = NULL;
    return EMU_UPDATE_SUCCESS;
}

/* After a successful compare: give each slot the params of the matching
 * node of b (slots remember their walk position, which is the same for
 * both graphs). */
static enum emu_err exec_take(struct emu_graph_exec *x, const struct emu_graph *b)
{
    struct flat f = { 0 };
    if (flatten(&f, b, NULL, 0, 0) < 0 || f.n != x->n) {
        flat_free(&f);
        return EMU_ERR_OUT_OF_MEMORY;
    }
    enum emu_err e = EMU_OK;
    for (int i = 0; i < x->n && e == EMU_OK; i++) {
        struct slot *s = &x->slots[i];
        int en = f.s[s->walk].src->enabled;
        if (slot_take_params(s, f.s[s->walk].src) < 0)
            e = EMU_ERR_OUT_OF_MEMORY;
        s->src = f.s[s->walk].src;
        s->enabled = en;
    }
    flat_free(&f);
    return e;
}

EMU_API enum emu_err emu_graph_exec_update(struct emu_graph_exec *x, struct emu_graph *g,
                                           enum emu_update_result *result, struct emu_graph_node **err_node)
{
    struct emu_graph_node *bad = NULL;
    enum emu_update_result r = EMU_UPDATE_ERROR;
    enum emu_err e = EMU_ERR_INVALID_VALUE;
    if (emu_graph_exec_resolve(x) && emu_graph_resolve(g)) {
        r = compare(x->graph, g, &bad, 0);
        e = r == EMU_UPDATE_SUCCESS ? EMU_OK : EMU_ERR_GRAPH_UPDATE;
    }
    struct emu_graph *c = NULL;
    if (e == EMU_OK && (e = emu_graph_clone(g, &c)) == EMU_OK) {
        /* Nodes of the graph x was first made from keep naming their
         * counterparts (cudaGraphExec*SetParams takes either). */
        for (size_t i = 0; i < c->n; i++)
            c->nodes[i]->alias = x->graph->nodes[i]->alias ? x->graph->nodes[i]->alias
                                                           : x->graph->nodes[i]->clone_of;
        e = exec_take(x, c);
        if (e == EMU_OK) {
            emu_graph_destroy(x->graph);
            x->graph = c;
        } else {
            emu_graph_destroy(c);
        }
    }
    if (e != EMU_OK && e != EMU_ERR_GRAPH_UPDATE)
        r = EMU_UPDATE_ERROR;
    if (result)
        *result = r;
    if (err_node)
        *err_node = bad;
    return e;
}

/* The node of x's own graph standing for n (a node of the graph x was made
 * from, or of one it was updated from). */
static struct emu_graph_node *exec_node(struct emu_graph_exec *x, const struct emu_graph_node *n)
{
    for (size_t i = 0; i < x->graph->n; i++) {
        struct emu_graph_node *m = x->graph->nodes[i];
        if (m->clone_of == n || m->alias == n)
            return m;
    }
    return NULL;
}

EMU_API enum emu_err emu_graph_exec_set_params(struct emu_graph_exec *x, struct emu_graph_node *n,
                                               const struct emu_node_params *p)
{
    if (!emu_graph_exec_resolve(x) || !emu_graph_node_resolve(n) || !p)
        return EMU_ERR_INVALID_VALUE;
    struct emu_graph_node *m = exec_node(x, n);
    if (!m || m->p.type != p->type)
        return EMU_ERR_INVALID_VALUE;
    if (p->type == EMU_NODE_GRAPH) {
        struct emu_graph_node *bad;
        if (!emu_graph_resolve(p->child) || compare(m->p.child, p->child, &bad, 0) != EMU_UPDATE_SUCCESS)
            return EMU_ERR_INVALID_VALUE;
    }
    if ((p->type == EMU_NODE_MEM_ALLOC || p->type == EMU_NODE_MEM_FREE))
        return EMU_ERR_INVALID_VALUE;
    enum emu_err e = emu_graph_node_set_params(m, p);
    return e == EMU_OK ? exec_take(x, x->graph) : e;
}

EMU_API enum emu_err emu_graph_exec_node_enable(struct emu_graph_exec *x, struct emu_graph_node *n,
                                                int enable, int *was_enabled)
{
    if (!emu_graph_exec_resolve(x) || !emu_graph_node_resolve(n))
        return EMU_ERR_INVALID_VALUE;
    struct emu_graph_node *m = exec_node(x, n);
    if (!m)
        return EMU_ERR_INVALID_VALUE;
    if (was_enabled)
        *was_enabled = m->enabled;
    if (enable < 0)
        return EMU_OK;
    int t = m->p.type;
    if (t != EMU_NODE_KERNEL && t != EMU_NODE_MEMCPY && t != EMU_NODE_MEMSET)
        return EMU_ERR_INVALID_VALUE; /* as CUDA: only these can be disabled */
    m->enabled = enable != 0;
    for (int i = 0; i < x->n; i++)
        if (x->slots[i].src == m)
            x->slots[i].enabled = m->enabled;
    return EMU_OK;
}
