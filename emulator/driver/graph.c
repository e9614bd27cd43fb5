/* Driver graphs over the core's (graph.c, graph_launch.c), which the
 * runtime's cudaGraph* share: a CUgraph, CUgraphNode and CUgraphExec are the
 * core's structs, so the two APIs' graphs mix (stream capture: capture.c).
 * The driver's parameter structs are converted to and from the core's node
 * parameters here; a launched graph is traced as the ops it holds, each
 * carrying the API of the call that made its node. */
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

/* The calling thread's current context (NULL: none). */
static CUcontext current_ctx(void)
{
    struct emu_thread *t = emu_thread();
    return t->nctx > 0 ? (CUcontext)t->ctx[t->nctx - 1] : NULL;
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

static CUresult memcpy_params(uint32_t api, const CUDA_MEMCPY3D *cp, CUcontext ctx, struct emu_node_params *p)
{
    node_init(p, api, EMU_NODE_MEMCPY);
    return emu_ctx_valid((struct emu_ctx *)ctx) ? drv_copy_3d_params(cp, &p->copy) : CUDA_ERROR_INVALID_CONTEXT;
}

/* ctx: the context the copy runs in; its device is the node's. */
CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = memcpy_params(DRV_API(), copyParams, ctx, &p);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

/* The element size, rows and destination are checked as the node is made
 * (core graph.c). */
static CUresult memset_params(uint32_t api, const CUDA_MEMSET_NODE_PARAMS *mp, CUcontext ctx,
                              struct emu_node_params *p)
{
    node_init(p, api, EMU_NODE_MEMSET);
    if (!mp)
        return CUDA_ERROR_INVALID_VALUE;
    if (!emu_ctx_valid((struct emu_ctx *)ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    p->memset.dst = (void *)(uintptr_t)mp->dst;
    p->memset.value = mp->value;
    p->memset.elem_bytes = mp->elementSize;
    p->memset.width = mp->width;
    p->memset.height = MAYA_MAX(mp->height, 1);
    p->memset.pitch = mp->pitch;
    return CUDA_SUCCESS;
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = memset_params(DRV_API(), memsetParams, ctx, &p);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

static CUresult host_params(uint32_t api, const CUDA_HOST_NODE_PARAMS *hp, struct emu_node_params *p)
{
    node_init(p, api, EMU_NODE_HOST);
    if (!hp || !hp->fn)
        return CUDA_ERROR_INVALID_VALUE;
    p->host.fn = hp->fn;
    p->host.arg = hp->userData;
    return CUDA_SUCCESS;
}

CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                            size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = host_params(DRV_API(), nodeParams, &p);
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

static CUresult event_params(uint32_t api, int type, CUevent event, struct emu_node_params *p)
{
    node_init(p, api, type);
    p->event = emu_event_resolve(event);
    return p->event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* At each launch a record node records the event on the branch it runs on
 * and a wait node makes its branch wait for the event's latest record
 * (traced as EVENT_RECORD and STREAM_WAIT, as cuEventRecord and
 * cuStreamWaitEvent are). */
CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   size_t numDependencies, CUevent event)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = event_params(DRV_API(), EMU_NODE_EVENT_RECORD, event, &p);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, CUevent event)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = event_params(DRV_API(), EMU_NODE_WAIT_EVENT, event, &p);
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
}

/* Graph memory is device memory of the pool's device, pinned, allocated
 * when the node is made (core graph.c); the access descriptors (peer
 * access) change nothing here. _v1 and _v2 of the struct are the same. */
static CUresult mem_alloc_params(uint32_t api, const CUDA_MEM_ALLOC_NODE_PARAMS *ap, struct emu_node_params *p)
{
    node_init(p, api, EMU_NODE_MEM_ALLOC);
    if (!ap || ap->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        ap->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        ap->poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE || (ap->accessDescCount && !ap->accessDescs))
        return CUDA_ERROR_INVALID_VALUE;
    p->mem.device = ap->poolProps.location.id;
    p->mem.bytes = ap->bytesize;
    return CUDA_SUCCESS;
}

/* The address a memory-allocation node made. */
static CUdeviceptr node_mem_ptr(CUgraphNode node)
{
    return (CUdeviceptr)emu_graph_node_params(N(node))->mem.ptr;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = mem_alloc_params(DRV_API(), nodeParams, &p);
    e = add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, e, &p);
    if (e == CUDA_SUCCESS)
        nodeParams->dptr = node_mem_ptr(*phGraphNode);
    return e;
}

/* dptr: the start of a device allocation (checked as the node is made). */
CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                               size_t numDependencies, CUdeviceptr dptr)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, DRV_API(), EMU_NODE_MEM_FREE);
    p.mem.ptr = dptr;
    return add_node(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, CUDA_SUCCESS, &p);
}

/* CUgraphNodeParams (cuGraphAddNode, cuGraph[Exec]NodeSetParams) -> node
 * parameters. Reserved fields must be zero; a NULL context is the current
 * one. External semaphores, batched memory operations and conditional
 * nodes are not emulated; a child graph is always copied
 * (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE is not supported: the core's nodes
 * own copies of their child graphs). Both are counted as unsupported. */
static CUresult generic_params(uint32_t api, const CUgraphNodeParams *np, struct emu_node_params *p)
{
    node_init(p, api, -1);
    if (!np || np->reserved0[0] || np->reserved0[1] || np->reserved0[2] || np->reserved2)
        return CUDA_ERROR_INVALID_VALUE;
    switch (np->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        /* _v3 is laid out as _v2: _v1, then the CUkernel and a context */
        return kernel_params(api, (const CUDA_KERNEL_NODE_PARAMS_v1 *)&np->kernel, np->kernel.kern, p);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (np->memcpy.flags || np->memcpy.reserved)
            return CUDA_ERROR_INVALID_VALUE;
        return memcpy_params(api, &np->memcpy.copyParams, np->memcpy.copyCtx ? np->memcpy.copyCtx : current_ctx(),
                             p);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        const CUDA_MEMSET_NODE_PARAMS_v2 *m = &np->memset;
        CUDA_MEMSET_NODE_PARAMS mp = { m->dst, m->pitch, m->value, m->elementSize, m->width, m->height };
        return memset_params(api, &mp, m->ctx ? m->ctx : current_ctx(), p);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS hp = { np->host.fn, np->host.userData };
        return host_params(api, &hp, p);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
        node_init(p, api, EMU_NODE_GRAPH);
        if (np->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
            emu_unsupported("CUgraphNodeParams: a child graph moved into its node", CUDA_ERROR_NOT_SUPPORTED);
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        p->child = G(np->graph.graph);
        return p->child && np->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE ? CUDA_SUCCESS
                                                                                        : CUDA_ERROR_INVALID_VALUE;
    case CU_GRAPH_NODE_TYPE_EMPTY:
        node_init(p, api, EMU_NODE_EMPTY);
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return event_params(api, EMU_NODE_WAIT_EVENT, np->eventWait.event, p);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return event_params(api, EMU_NODE_EVENT_RECORD, np->eventRecord.event, p);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        return mem_alloc_params(api, (const CUDA_MEM_ALLOC_NODE_PARAMS *)&np->alloc, p);
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        node_init(p, api, EMU_NODE_MEM_FREE);
        p->mem.ptr = np->free.dptr;
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        emu_unsupported("CUgraphNodeParams: an external-semaphore, batched memory-operation or conditional node",
                        CUDA_ERROR_NOT_SUPPORTED);
        return CUDA_ERROR_NOT_SUPPORTED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult add_generic(uint32_t api, uint64_t t0, CUgraphNode *out, CUgraph graph, const CUgraphNode *deps,
                            size_t ndeps, CUgraphNodeParams *np)
{
    struct emu_node_params p;
    CUresult e = generic_params(api, np, &p);
    e = add_node(api, t0, out, graph, deps, ndeps, e, &p);
    if (e == CUDA_SUCCESS && np->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        np->alloc.dptr = node_mem_ptr(*out);
    return e;
}

CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                        size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    DRV_ENTER();
    return add_generic(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

/* Every edge is a plain (default) edge: the edge data is not kept. */
CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                           const CUgraphEdgeData *dependencyData, size_t numDependencies,
                           CUgraphNodeParams *nodeParams)
{
    DRV_ENTER();
    return add_generic(DRV_API(), drv_t0, phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
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

CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies, size_t *numDependencies)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_deps(N(hNode), NODES(dependencies), NULL, numDependencies)));
}

CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData,
                                       size_t *numDependencies)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_deps(N(hNode), NODES(dependencies), edgeData, numDependencies)));
}

CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes, size_t *numDependentNodes)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_dependents(N(hNode), NODES(dependentNodes), NULL, numDependentNodes)));
}

CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode *dependentNodes, CUgraphEdgeData *edgeData,
                                         size_t *numDependentNodes)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_dependents(N(hNode), NODES(dependentNodes), edgeData, numDependentNodes)));
}

/* The node of a clone (cuGraphClone) copied from hOriginalNode. */
CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
{
    DRV_ENTER();
    struct emu_graph_node *n = N(hOriginalNode) ? emu_graph_node_in_clone(G(hClonedGraph), N(hOriginalNode)) : NULL;
    if (!phNode || !n)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *phNode = (CUgraphNode)n;
    DRV_RETURN(CUDA_SUCCESS);
}

/* ---- node parameters: get and set ---- */

/* _v2 adds the CUkernel and context: the kernel is given as the function,
 * and the context as NULL (the current one), which the node does not keep. */
static CUresult kernel_get(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS_v1 *kp, CUDA_KERNEL_NODE_PARAMS *kp2)
{
    const struct emu_node_params *p = emu_graph_node_params_of(node, EMU_NODE_KERNEL);
    if (!p || !kp)
        return CUDA_ERROR_INVALID_VALUE;
    const struct emu_launch *l = &p->launch;
    *kp = (CUDA_KERNEL_NODE_PARAMS_v1){
        .func = (CUfunction)l->kernel,
        .gridDimX = l->grid[0], .gridDimY = l->grid[1], .gridDimZ = l->grid[2],
        .blockDimX = l->block[0], .blockDimY = l->block[1], .blockDimZ = l->block[2],
        .sharedMemBytes = l->smem_bytes,
        .kernelParams = p->kargs,
    };
    if (kp2) {
        kp2->kern = NULL;
        kp2->ctx = NULL;
    }
    return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    DRV_ENTER();
    DRV_RETURN(kernel_get(hNode, nodeParams, NULL));
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    DRV_RETURN(kernel_get(hNode, (CUDA_KERNEL_NODE_PARAMS_v1 *)nodeParams, nodeParams));
}

/* One end of a copy as CUDA_MEMCPY3D gives it: host or device memory by
 * where the pointer lives, the offsets folded into the address. */
static void copy_end_out(void *ptr, int device, uint64_t pitch, uint64_t slice, CUmemorytype *type, void **host,
                         CUdeviceptr *dev, size_t *out_pitch, size_t *out_height)
{
    *type = device >= 0 ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    if (device >= 0)
        *dev = (CUdeviceptr)(uintptr_t)ptr;
    else
        *host = ptr;
    *out_pitch = pitch;
    *out_height = pitch ? slice / pitch : 0;
}

CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
    DRV_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(hNode, EMU_NODE_MEMCPY);
    if (!p || !nodeParams)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    const struct emu_copy *c = &p->copy;
    CUDA_MEMCPY3D *o = nodeParams;
    memset(o, 0, sizeof *o);
    copy_end_out((void *)c->src, c->src_device, c->spitch, c->sslice, &o->srcMemoryType, (void **)&o->srcHost,
                 &o->srcDevice, &o->srcPitch, &o->srcHeight);
    copy_end_out(c->dst, c->dst_device, c->dpitch, c->dslice, &o->dstMemoryType, &o->dstHost, &o->dstDevice,
                 &o->dstPitch, &o->dstHeight);
    o->WidthInBytes = c->width;
    o->Height = MAYA_MAX(c->height, 1);
    o->Depth = MAYA_MAX(c->depth, 1);
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(hNode, EMU_NODE_MEMSET);
    if (!p || !nodeParams)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *nodeParams = (CUDA_MEMSET_NODE_PARAMS){ (CUdeviceptr)(uintptr_t)p->memset.dst, p->memset.pitch,
                                             p->memset.value, p->memset.elem_bytes, p->memset.width,
                                             p->memset.height };
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(hNode, EMU_NODE_HOST);
    if (!p || !nodeParams)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *nodeParams = (CUDA_HOST_NODE_PARAMS){ p->host.fn, p->host.arg };
    DRV_RETURN(CUDA_SUCCESS);
}

/* The node owns its child graph (a copy of the one it was given). */
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_ref(hNode, EMU_NODE_GRAPH, phGraph)));
}

CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_ref(hNode, EMU_NODE_EVENT_RECORD, event_out)));
}

CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_node_ref(hNode, EMU_NODE_WAIT_EVENT, event_out)));
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
    DRV_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(hNode, EMU_NODE_MEM_ALLOC);
    if (!p || !params_out)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    memset(params_out, 0, sizeof *params_out);
    params_out->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params_out->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params_out->poolProps.location.id = p->mem.device;
    params_out->bytesize = p->mem.bytes;
    params_out->dptr = (CUdeviceptr)p->mem.ptr;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
    DRV_ENTER();
    _Static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t), "the core writes 64 bits");
    DRV_RETURN(drv_error(emu_graph_node_ref(hNode, EMU_NODE_MEM_FREE, dptr_out)));
}

/* A changed node keeps the api of the call that made it. */
static uint32_t node_api(CUgraphNode node, uint32_t fallback)
{
    struct emu_graph_node *n = N(node);
    return n ? emu_graph_node_params(n)->api : fallback;
}

/* Set a node's parameters (conv: what converting the call's gave): in its
 * graph (exec NULL) or in an executable graph made from it; traced as a
 * call. Memory nodes cannot be changed in either. */
static CUresult set_params(uint32_t api, uint64_t t0, CUgraphExec exec, CUgraphNode node, CUresult conv,
                           const struct emu_node_params *p)
{
    struct emu_graph_node *n = N(node);
    CUresult e = conv;
    if (e == CUDA_SUCCESS && (!n || emu_graph_node_params(n)->type != p->type))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (e == CUDA_SUCCESS && (p->type == EMU_NODE_MEM_ALLOC || p->type == EMU_NODE_MEM_FREE))
        e = CUDA_ERROR_NOT_SUPPORTED;
    if (e == CUDA_SUCCESS)
        e = exec ? (X(exec) ? drv_error(emu_graph_exec_set_params(X(exec), n, p)) : CUDA_ERROR_INVALID_VALUE)
                 : drv_error(emu_graph_node_set_params(n, p));
    emu_trace_call(api, t0, e, 0, 0);
    return e;
}

/* The kernel node setters: in the graph or in an executable graph
 * (exec_param), of the _v1 or _v2 struct (kern: the CUkernel _v2 adds). */
#define SET_KERNEL(name, exec_param, exec, ptype, kern) \
    CUresult name(exec_param CUgraphNode hNode, const ptype *nodeParams) \
    { \
        DRV_ENTER(); \
        struct emu_node_params p; \
        CUresult e = kernel_params(node_api(hNode, DRV_API()), (const CUDA_KERNEL_NODE_PARAMS_v1 *)nodeParams, \
                                   kern, &p); \
        return set_params(DRV_API(), drv_t0, exec, hNode, e, &p); \
    }
#define NO_EXEC
#define IN_EXEC CUgraphExec hGraphExec,
#define V2_KERN (nodeParams ? nodeParams->kern : NULL)

SET_KERNEL(cuGraphKernelNodeSetParams, NO_EXEC, NULL, CUDA_KERNEL_NODE_PARAMS_v1, NULL)
SET_KERNEL(cuGraphKernelNodeSetParams_v2, NO_EXEC, NULL, CUDA_KERNEL_NODE_PARAMS, V2_KERN)
SET_KERNEL(cuGraphExecKernelNodeSetParams, IN_EXEC, hGraphExec, CUDA_KERNEL_NODE_PARAMS_v1, NULL)
SET_KERNEL(cuGraphExecKernelNodeSetParams_v2, IN_EXEC, hGraphExec, CUDA_KERNEL_NODE_PARAMS, V2_KERN)

/* In its graph a node has no context to change: the current one is checked. */
CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = memcpy_params(node_api(hNode, DRV_API()), nodeParams, current_ctx(), &p);
    return set_params(DRV_API(), drv_t0, NULL, hNode, e, &p);
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *copyParams,
                                        CUcontext ctx)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = memcpy_params(node_api(hNode, DRV_API()), copyParams, ctx, &p);
    return set_params(DRV_API(), drv_t0, hGraphExec, hNode, e, &p);
}

CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = memset_params(node_api(hNode, DRV_API()), nodeParams, current_ctx(), &p);
    return set_params(DRV_API(), drv_t0, NULL, hNode, e, &p);
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = memset_params(node_api(hNode, DRV_API()), memsetParams, ctx, &p);
    return set_params(DRV_API(), drv_t0, hGraphExec, hNode, e, &p);
}

CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = host_params(node_api(hNode, DRV_API()), nodeParams, &p);
    return set_params(DRV_API(), drv_t0, NULL, hNode, e, &p);
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                      const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = host_params(node_api(hNode, DRV_API()), nodeParams, &p);
    return set_params(DRV_API(), drv_t0, hGraphExec, hNode, e, &p);
}

/* The new child graph must have the topology of the node's. */
CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph)
{
    DRV_ENTER();
    struct emu_node_params p;
    node_init(&p, node_api(hNode, DRV_API()), EMU_NODE_GRAPH);
    p.child = G(childGraph);
    return set_params(DRV_API(), drv_t0, hGraphExec, hNode, p.child ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE, &p);
}

static CUresult set_event(uint32_t api, uint64_t t0, CUgraphExec exec, CUgraphNode node, int type, CUevent event)
{
    struct emu_node_params p;
    CUresult e = event_params(node_api(node, api), type, event, &p);
    return set_params(api, t0, exec, node, e, &p);
}

CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event)
{
    DRV_ENTER();
    return set_event(DRV_API(), drv_t0, NULL, hNode, EMU_NODE_EVENT_RECORD, event);
}

CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event)
{
    DRV_ENTER();
    return set_event(DRV_API(), drv_t0, NULL, hNode, EMU_NODE_WAIT_EVENT, event);
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event)
{
    DRV_ENTER();
    return set_event(DRV_API(), drv_t0, hGraphExec, hNode, EMU_NODE_EVENT_RECORD, event);
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event)
{
    DRV_ENTER();
    return set_event(DRV_API(), drv_t0, hGraphExec, hNode, EMU_NODE_WAIT_EVENT, event);
}

CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = generic_params(node_api(hNode, DRV_API()), nodeParams, &p);
    return set_params(DRV_API(), drv_t0, NULL, hNode, e, &p);
}

CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
    DRV_ENTER();
    struct emu_node_params p;
    CUresult e = generic_params(node_api(hNode, DRV_API()), nodeParams, &p);
    return set_params(DRV_API(), drv_t0, hGraphExec, hNode, e, &p);
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

/* CUDA 12's form: the flags and, for CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD,
 * the stream to upload on, in a struct that also says why it failed (no
 * node is named: the core finds a cycle without blaming one). */
static CUresult instantiate_params(uint32_t api, uint64_t t0, CUgraphExec *out, CUgraph graph, int pt,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
{
    if (!ip) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_VALUE, 0, 0);
        return CUDA_ERROR_INVALID_VALUE;
    }
    ip->hErrNode_out = NULL;
    CUresult e;
    if ((ip->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) && !drv_stream(ip->hUploadStream, pt)) {
        e = CUDA_ERROR_INVALID_HANDLE;
        emu_trace_call(api, t0, e, 0, 0);
    } else {
        e = instantiate(api, t0, out, graph, ip->flags);
    }
    /* a valid graph with valid flags refused by the core has a cycle */
    int structure = e == CUDA_ERROR_INVALID_VALUE && G(graph) && out &&
                    !(ip->flags & ~(cuuint64_t)KNOWN_INSTANTIATE_FLAGS);
    ip->result_out = e == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS
                     : structure       ? CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE
                                       : CUDA_GRAPH_INSTANTIATE_ERROR;
    return e;
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    DRV_ENTER();
    return instantiate_params(DRV_API(), drv_t0, phGraphExec, hGraph, 0, instantiateParams);
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    DRV_ENTER();
    return instantiate_params(DRV_API(), drv_t0, phGraphExec, hGraph, 1, instantiateParams);
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

/* Give an executable graph the parameters of hGraph, which must have its
 * topology (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and why otherwise). The
 * CUDA 10.2-11 form names the node that differs and the result apart. */
static CUresult exec_update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResult *result, CUgraphNode *err_node)
{
    enum emu_update_result r = EMU_UPDATE_ERROR;
    struct emu_graph_node *bad = NULL;
    CUresult e = X(exec) && G(graph) ? drv_error(emu_graph_exec_update(X(exec), G(graph), &r, &bad))
                                     : CUDA_ERROR_INVALID_VALUE;
    if (result)
        *result = (CUgraphExecUpdateResult)r;
    if (err_node)
        *err_node = (CUgraphNode)bad;
    return e;
}

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                           CUgraphExecUpdateResult *updateResult_out)
{
    DRV_ENTER();
    if (!hErrorNode_out || !updateResult_out)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(exec_update(hGraphExec, hGraph, updateResult_out, hErrorNode_out));
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{
    DRV_ENTER();
    if (!resultInfo)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    resultInfo->errorFromNode = NULL;
    DRV_RETURN(exec_update(hGraphExec, hGraph, &resultInfo->result, &resultInfo->errorNode));
}

/* Only kernel, memcpy and memset nodes can be disabled: a disabled node's
 * op is left out of the launches that follow. */
CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_exec_node_enable(X(hGraphExec), N(hNode), isEnabled != 0, NULL)));
}

CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled)
{
    DRV_ENTER();
    int en = 0;
    if (!isEnabled)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    CUresult e = drv_error(emu_graph_exec_node_enable(X(hGraphExec), N(hNode), -1, &en));
    if (e == CUDA_SUCCESS)
        *isEnabled = (unsigned)en;
    DRV_RETURN(e);
}

/* ---- graph memory and user objects ---- */

/* Graph memory is allocated when its node is made and stays allocated, so
 * there is no idle graph memory to trim. */
CUresult cuDeviceGraphMemTrim(CUdevice device)
{
    DRV_ENTER();
    DRV_RETURN(emu_device(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_mem_attr(device, (int)attr, 0, value)));
}

CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_mem_attr(device, (int)attr, 1, value)));
}

CUresult cuUserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy, unsigned int initialRefcount,
                            unsigned int flags)
{
    DRV_ENTER();
    struct emu_user_object *o = NULL;
    if (!object_out || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    CUresult e = drv_error(emu_user_object_create(ptr, destroy, initialRefcount, &o));
    if (e == CUDA_SUCCESS)
        *object_out = (CUuserObject)o;
    DRV_RETURN(e);
}

CUresult cuUserObjectRetain(CUuserObject object, unsigned int count)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_user_object_retain(emu_user_object_resolve(object), count)));
}

CUresult cuUserObjectRelease(CUuserObject object, unsigned int count)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_user_object_release(emu_user_object_resolve(object), count)));
}

CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count, unsigned int flags)
{
    DRV_ENTER();
    if (flags & ~(unsigned)CU_GRAPH_USER_OBJECT_MOVE)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(drv_error(emu_graph_retain_user_object(G(graph), emu_user_object_resolve(object), count,
                                                      (flags & CU_GRAPH_USER_OBJECT_MOVE) != 0)));
}

CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_graph_release_user_object(G(graph), emu_user_object_resolve(object), count)));
}
