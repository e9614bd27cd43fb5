/* Inside the core: the structures behind graph, node, executable graph and
 * capture handles (graph.c, graph_launch.c, capture.c). */
#ifndef MAYA_GRAPH_INT_H
#define MAYA_GRAPH_INT_H

#include "emu.h"

#include <stdlib.h>

#define GRAPH_MAGIC 0x67726170u
#define NODE_MAGIC 0x6e6f6465u
#define EXEC_MAGIC 0x67657865u

struct emu_graph_node {
    uint32_t magic;
    struct emu_graph *graph;
    struct emu_node_params p;    /* kparams and child owned by the node */
    struct emu_graph_node **deps;
    size_t ndeps, depcap;
    struct emu_graph_node *clone_of; /* in a clone: the node it was copied from */
    struct emu_graph_node *alias;    /* in an executable graph's copy after an update:
                                        the node of the first graph it stands for */
    uint32_t index;              /* position in graph->nodes */
    int enabled;                 /* cudaGraphNodeSetEnabled (executable graphs) */
};

/* A user object reference a graph holds (cudaGraphRetainUserObject). */
struct graph_uref {
    struct emu_user_object *obj;
    unsigned count;
};

struct emu_graph {
    uint32_t magic;
    uint64_t id;
    struct emu_graph_node **nodes; /* creation order */
    size_t n, cap;
    struct graph_uref *urefs;    /* user objects it keeps alive */
    size_t nurefs, urefcap;
};

/* One node of an executable graph, child graphs inlined. */
struct slot {
    const struct emu_graph_node *src; /* node of the exec's own graph copy */
    int src_type;
    int walk;                    /* position in the flattening walk (pairs nodes for updates) */
    int child_end;
    int *deps, ndeps;            /* slot indices (topological order: all before this one) */
    int lane;                    /* 0: the launching stream, else an internal stream */
    int has_event;               /* records ev after its op: a slot on another lane waits on it */
    int lane_tail;               /* last slot of its lane */
    int join_at_end;             /* lane tail the launching stream must wait for at the end
                                    (no later slot of lane 0 waited for it already) */
    int enabled;
    struct emu_node_params p;    /* what it does; p.kparams = kbuf */
    void *kbuf;
    struct emu_event ev;
};

struct emu_graph_exec {
    uint32_t magic;
    uint64_t id;
    uint64_t flags;
    struct emu_graph *graph;     /* a copy of the graph it was made from */
    struct slot *slots;
    int n;
    int nlanes;
    struct emu_stream **lanes;   /* internal streams, [1..nlanes) */
    int lane_device;
    struct emu_event fork;       /* recorded on the launching stream, waited on by new lanes */
    int need_fork;               /* a lane other than 0 starts with a root */
    uint32_t launches;
    pthread_mutex_t lock;
};

/* Room for element n of a growable array (doubling from 4): 0, or -1 when
 * out of memory. */
static inline int graph_grow(void *arrp, size_t *cap, size_t n, size_t elem)
{
    void **arr = arrp;
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 4;
    while (c <= n)
        c *= 2;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

enum emu_err graph_add_node_owned(struct emu_graph *g, const struct emu_node_params *p,
                                  struct emu_graph_node *const *deps, size_t ndeps,
                                  struct emu_graph_node **out);
/* streams.c: an event the emulator uses itself (not a program's handle),
 * and a stream with any MAYA_STREAM_* flags. */
void emu_event_init_internal(struct emu_event *e);
struct emu_stream *emu_stream_new_internal(int device, unsigned flags, int priority);

#endif
