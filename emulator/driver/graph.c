/* Driver graphs over the core's (graph.c, graph_launch.c), which the
 * runtime's cudaGraph* share: a CUgraph, CUgraphNode and CUgraphExec are the
 * core's structs, so the two APIs' graphs mix (stream capture: capture.c).
 * A launched graph is traced as the ops it holds, each carrying the API of
 * the call that made its node. */
#include "drv.h"

#include <string.h>

#define G(h) emu_graph_resolve(h)
#define N(h) emu_graph_node_resolve(h)
#define X(h) emu_graph_exec_resolve(h)
#define NODES(p) ((struct emu_graph_node **)(p))
#define CNODES(p) ((struct emu_graph_node *const *)(p))

/* ---- graphs and nodes ---- */

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    DRV_ENTER();
    DRV_RETURN(flags ? CUDA_ERROR_INVALID_VALUE : drv_error(emu_graph_create((struct emu_graph **)phGraph)));
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_destroy(G(hGraph))));
}

CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_clone(G(originalGraph), (struct emu_graph **)phGraphClone)));
}

CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_destroy(N(hNode))));
}

/* Add a node made from the call's parameters (conv: what converting them
 * gave), traced as a call. */
static CUresult add_node(uint32_t api, uint64_t t0, CUgraphNode *out, CUgraph graph, const CUgraphNode *deps,
                         size_t ndeps, CUresult conv, const struct emu_node_params *p)
{
    CUresult e = conv;
    if (e == CUDA_SUCCESS && (!out || !G(graph) || (ndeps && !deps)))
        e = CUDA_ERROR_INVALID_VALUE;
    struct emu_graph_node *n = NULL;
    if (e == CUDA_SUCCESS)
        e = drv_error(emu_graph_add_node(G(graph), p, CNODES(deps), ndeps, &n));
    if (e == CUDA_SUCCESS)
        *out = (CUgraphNode)n;
    emu_trace_call(api, t0, e, 0, 0);
    return e;
}

static void node_init(struct emu_node_params *p, uint32_t api, int type)
{
    memset(p, 0, sizeof *p);
    p->type = type;
    p->api = api;
}

/* CUDA_KERNEL_NODE_PARAMS_v1 is the start of _v2, which adds the kernel as
 * a CUkernel (used when func is NULL) and a context. */
static CUresult kernel_params(uint32_t api, const CUDA_KERNEL_NODE_PARAMS_v1 *kp, CUkernel kern,
                              struct emu_node_params *p)
{
    node_init(p, api, EMU_NODE_KERNEL);
    if (!kp)
        return CUDA_ERROR_INVALID_VALUE;
    if (drv_ctx_device() < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct emu_kernel *k = drv_kernel(kp->func ? (const void *)kp->func : (const void *)kern);
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    struct emu_launch l = {
        .kernel = k,
        .grid = { kp->gridDimX, kp->gridDimY, kp->gridDimZ },
        .block = { kp->blockDimX, kp->blockDimY, kp->blockDimZ },
        .smem_bytes = kp->sharedMemBytes,
        .flags = MAYA_LAUNCH_DRIVER,
    };
    return drv_error(emu_node_kernel(p, api, &l, kp->kernelParams, kp->extra));
}

CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = kernel_params(DRV_API(), nodeParams, NULL, &p);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = kernel_params(DRV_API(), (const CUDA_KERNEL_NODE_PARAMS_v1 *)nodeParams,
                               nodeParams ? nodeParams->kern : NULL, &p);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

/* ctx: the context the copy runs in; its device is the node's. */
CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, DRV_API(), EMU_NODE_MEMCPY);
    CUresult e = emu_ctx_valid((struct emu_ctx *)ctx) ? drv_copy_3d_params(copyParams, &p.copy)
                                                       : CUDA_ERROR_INVALID_CONTEXT;
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

/* The element size, rows and destination are checked as the node is made
 * (core graph.c). */
CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, DRV_API(), EMU_NODE_MEMSET);
    CUresult e = CUDA_SUCCESS;
    if (!memsetParams)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!emu_ctx_valid((struct emu_ctx *)ctx))
        e = CUDA_ERROR_INVALID_CONTEXT;
    else {
        p.memset.dst = (void *)(uintptr_t)memsetParams->dst;
        p.memset.value = memsetParams->value;
        p.memset.elem_bytes = memsetParams->elementSize;
        p.memset.width = memsetParams->width;
        p.memset.height = MAYA_MAX(memsetParams->height, 1);
        p.memset.pitch = memsetParams->pitch;
    }
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, DRV_API(), EMU_NODE_HOST);
    CUresult e = nodeParams && nodeParams->fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_SUCCESS) {
        p.host.fn = nodeParams->fn;
        p.host.arg = nodeParams->userData;
    }
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                             size_t numDependencies)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, DRV_API(), EMU_NODE_EMPTY);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, CUDA_SUCCESS, &p);
}

CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                  size_t numDependencies, CUgraph childGraph)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, DRV_API(), EMU_NODE_GRAPH);
    p.child = G(childGraph);
    CUresult e = p.child && childGraph != hGraph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

/* Every edge is a plain (default) edge: the _v2 forms' edge data is not
 * kept, as the runtime's cudaGraphAddDependencies does. */
CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                size_t numDependencies)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_add_deps(G(hGraph), CNODES(from), CNODES(to), numDependencies)));
}

CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                   const CUgraphEdgeData *edgeData, size_t numDependencies)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_add_deps(G(hGraph), CNODES(from), CNODES(to), numDependencies)));
}

CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                   size_t numDependencies)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_remove_deps(G(hGraph), CNODES(from), CNODES(to), numDependencies)));
}

CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                      const CUgraphEdgeData *edgeData, size_t numDependencies)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_remove_deps(G(hGraph), CNODES(from), CNODES(to), numDependencies)));
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    DRV_ENTER();
    struct emu_graph_node *n = N(hNode);
    if (!n || !type)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *type = (CUgraphNodeType)emu_graph_node_params(n)->type;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_nodes(G(hGraph), NODES(nodes), numNodes)));
}

CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_roots(G(hGraph), NODES(rootNodes), numRootNodes)));
}

CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_edges(G(hGraph), NODES(from), NODES(to), NULL, numEdges)));
}

CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData,
                            size_t *numEdges)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_edges(G(hGraph), NODES(from), NODES(to), edgeData, numEdges)));
}

CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags)
{
    DRV_ENTER();
    if (!G(hGraph) || !path)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(emu_graph_dot_print(G(hGraph), path) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM);
}

/* ---- executable graphs ---- */

#define KNOWN_INSTANTIATE_FLAGS \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | \
     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static CUresult instantiate(uint32_t api, uint64_t t0, CUgraphExec *out, CUgraph graph, unsigned long long flags)
{
    CUresult e;
    struct emu_graph_exec *x = NULL;
    if (!out || !G(graph) || (flags & ~(unsigned long long)KNOWN_INSTANTIATE_FLAGS))
        e = CUDA_ERROR_INVALID_VALUE;
    else
        e = drv_error(emu_graph_instantiate(G(graph), flags, &x));
    if (e == CUDA_SUCCESS)
        *out = (CUgraphExec)x;
    emu_trace_call(api, t0, e, 0, 0);
    return e;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    DRV_ENTER();
    return instantiate(DRV_API(), drv_t0, phGraphExec, hGraph, flags);
}

/* The CUDA 10-11 form: an error node and a log, both left empty (a graph
 * that instantiates has neither; one that does not fails before a node is
 * blamed). */
static CUresult instantiate_logged(uint32_t api, uint64_t t0, CUgraphExec *out, CUgraph graph,
                                   CUgraphNode *err_node, char *log, size_t log_bytes)
{
    if (err_node)
        *err_node = NULL;
    if (log && log_bytes)
        log[0] = '\0';
    return instantiate(api, t0, out, graph, 0);
}

CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                            size_t bufferSize)
{
    DRV_ENTER();
    return instantiate_logged(DRV_API(), drv_t0, phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                               char *logBuffer, size_t bufferSize)
{
    DRV_ENTER();
    return instantiate_logged(DRV_API(), drv_t0, phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
    DRV_ENTER();
    if (!X(hGraphExec) || !flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *flags = emu_graph_exec_flags(X(hGraphExec));
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_exec_destroy(X(hGraphExec))));
}

/* A launch, or an upload (which makes a later launch cheaper on a GPU and
 * has nothing to do here beyond its checks). The launch traces itself: the
 * graph's ops between begin and end records (core graph_launch.c). */
static CUresult graph_launch(uint32_t api, uint64_t t0, CUgraphExec exec, CUstream h, int pt, int upload)
{
    struct emu_stream *s = drv_stream(h, pt);
    CUresult e;
    if (!X(exec))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!s)
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        e = drv_error(emu_stream_issue_check(s));
    if (e == CUDA_SUCCESS && !upload)
        return drv_error(emu_graph_launch(X(exec), s, api, t0));
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return e;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    DRV_ENTER();
    return graph_launch(DRV_API(), drv_t0, hGraphExec, hStream, 0, 0);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    DRV_ENTER();
    return graph_launch(DRV_API(), drv_t0, hGraphExec, hStream, 1, 0);
}

CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    DRV_ENTER();
    return graph_launch(DRV_API(), drv_t0, hGraphExec, hStream, 0, 1);
}

CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    DRV_ENTER();
    return graph_launch(DRV_API(), drv_t0, hGraphExec, hStream, 1, 1);
}
