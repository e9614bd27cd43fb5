/* A graph in Graphviz DOT (cudaGraphDebugDotPrint, cuGraphDebugDotPrint):
 * a node per graph node labelled with its type (kernels with their name and
 * configuration, copies with their size), child graphs inlined, an edge per
 * dependency. The file is written atomically (temp + rename). */
#define _GNU_SOURCE
#include "emu.h"
#include "graph_int.h"
#include "maya/common.h"

#include <errno.h>
#include <stdio.h>

static const char *type_name(int t)
{
    static const char *names[] = { "kernel", "memcpy", "memset", "host", "graph", "empty", "wait_event",
                                   "event_record", "ext_sem_signal", "ext_sem_wait", "mem_alloc", "mem_free" };
    if (t == EMU_NODE_OP)
        return "library_op";
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "?";
}

static void dot_graph(FILE *f, const struct emu_graph *g, const char *prefix, int depth)
{
    for (size_t i = 0; i < g->n; i++) {
        const struct emu_graph_node *n = g->nodes[i];
        const struct emu_node_params *p = &n->p;
        fprintf(f, "  \"%s%zu\" [label=\"%s", prefix, i, type_name(p->type));
        if (p->type == EMU_NODE_KERNEL)
            fprintf(f, "\\n%s\\ngrid %u,%u,%u block %u,%u,%u", p->launch.kernel->name, p->launch.grid[0],
                    p->launch.grid[1], p->launch.grid[2], p->launch.block[0], p->launch.block[1],
                    p->launch.block[2]);
        else if (p->type == EMU_NODE_MEMCPY)
            fprintf(f, "\\n%llu bytes", (unsigned long long)(p->copy.width * MAYA_MAX(p->copy.height, 1) *
                                                              MAYA_MAX(p->copy.depth, 1)));
        fprintf(f, "\"];\n");
        if (p->type == EMU_NODE_GRAPH && p->child && depth < 8) {
            char sub[64];
            snprintf(sub, sizeof sub, "%s%zu_", prefix, i);
            dot_graph(f, p->child, sub, depth + 1);
        }
        for (size_t j = 0; j < n->ndeps; j++)
            fprintf(f, "  \"%s%u\" -> \"%s%zu\";\n", prefix, n->deps[j]->index, prefix, i);
    }
}

EMU_API int emu_graph_dot_print(struct emu_graph *g, const char *path)
{
    if (!emu_graph_resolve(g) || !path) {
        errno = EINVAL;
        return -1;
    }
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    fprintf(af.fp, "digraph cuda_graph {\n");
    dot_graph(af.fp, g, "n", 0);
    fprintf(af.fp, "}\n");
    return maya_atomic_commit(&af);
}
