/* The runtime's CUDA graph API over the core's graphs (core graph.c):
 * converting the runtime's parameter structs to and from node parameters,
 * instantiation, launch and update. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

#define G(h) emu_graph_resolve(h)
#define N(h) emu_graph_node_resolve(h)
#define X(h) emu_graph_exec_resolve(h)

/* ---- runtime parameter structs -> node parameters ---- */

/* Kernel node parameters; kparams point into the thread's buffer
 * (emu_node_kernel) until the node is added. */
static cudaError_t kernel_params(uint32_t api, const struct cudaKernelNodeParams *kp, struct emu_node_params *p)
{
    if (!kp)
        return cudaErrorInvalidValue;
    struct emu_kernel *k = rt_find_kernel(kp->func);
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    struct emu_launch l = {
        .kernel = k,
        .grid = { kp->gridDim.x, kp->gridDim.y, kp->gridDim.z },
        .block = { kp->blockDim.x, kp->blockDim.y, kp->blockDim.z },
        .smem_bytes = kp->sharedMemBytes,
    };
    return rt_error(emu_node_kernel(p, api, &l, kp->kernelParams, kp->extra));
}

static cudaError_t memcpy_params(uint32_t api, const struct cudaMemcpy3DParms *cp, struct emu_node_params *p)
{
    memset(p, 0, sizeof *p);
    p->type = EMU_NODE_MEMCPY;
    p->api = api;
    cudaError_t e = rt_copy_from_parms(cp, &p->copy);
    return e == cudaSuccess ? rt_copy_check(&p->copy, cp->kind) : e;
}

static cudaError_t memcpy1d_params(uint32_t api, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                   struct emu_node_params *p)
{
    memset(p, 0, sizeof *p);
    p->type = EMU_NODE_MEMCPY;
    p->api = api;
    p->copy = (struct emu_copy){ .dst = dst, .src = src, .width = count, .height = 1, .depth = 1,
                                 .dpitch = count, .spitch = count };
    return rt_copy_check(&p->copy, kind);
}

/* The element size, rows and destination are checked as the node is
 * made (core graph.c). */
static cudaError_t memset_params(uint32_t api, const struct cudaMemsetParams *mp, struct emu_node_params *p)
{
    if (!mp)
        return cudaErrorInvalidValue;
    memset(p, 0, sizeof *p);
    p->type = EMU_NODE_MEMSET;
    p->api = api;
    p->memset.dst = mp->dst;
    p->memset.value = mp->value;
    p->memset.elem_bytes = mp->elementSize;
    p->memset.width = mp->width;
    p->memset.height = MAYA_MAX(mp->height, 1);
    p->memset.pitch = mp->pitch;
    return cudaSuccess;
}

static cudaError_t simple_params(uint32_t api, int type, struct emu_node_params *p)
{
    memset(p, 0, sizeof *p);
    p->type = type;
    p->api = api;
    return cudaSuccess;
}

/* Add a node: check, convert, add, trace. */
static cudaError_t add_node(uint32_t api, uint64_t t0, cudaGraphNode_t *out, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t ndeps, cudaError_t conv,
                            const struct emu_node_params *p)
{
    cudaError_t e = conv;
    if (e == cudaSuccess && (!out || !G(graph) || (ndeps && !deps)))
        e = cudaErrorInvalidValue;
    struct emu_graph_node *n = NULL;
    if (e == cudaSuccess)
        e = rt_error(emu_graph_add_node(G(graph), p, (struct emu_graph_node *const *)deps, ndeps, &n));
    if (e == cudaSuccess)
        *out = (cudaGraphNode_t)n;
    emu_trace_call(api, t0, e, 0, 0);
    return rt_note(e);
}

/* ---- graphs ---- */

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    RT_ENTER();
    RT_RETURN(flags ? cudaErrorInvalidValue : rt_error(emu_graph_create((struct emu_graph **)pGraph)));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_destroy(G(graph))));
}

cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_clone(G(originalGraph), (struct emu_graph **)pGraphClone)));
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *pNode, cudaGraphNode_t originalNode, cudaGraph_t clonedGraph)
{
    RT_ENTER();
    if (!pNode || !N(originalNode))
        RT_RETURN(cudaErrorInvalidValue);
    struct emu_graph_node *n = emu_graph_node_in_clone(G(clonedGraph), N(originalNode));
    if (!n)
        RT_RETURN(cudaErrorInvalidValue);
    *pNode = (cudaGraphNode_t)n;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, const struct cudaKernelNodeParams *params)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = kernel_params(RT_API(), params, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, const struct cudaMemcpy3DParms *params)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = memcpy_params(RT_API(), params, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                     size_t ndeps, void *dst, const void *src, size_t count,
                                     enum cudaMemcpyKind kind)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = memcpy1d_params(RT_API(), dst, src, count, kind, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

static cudaError_t symbol_copy_params(uint32_t api, int to, const void *symbol, void *host, size_t count,
                                      size_t offset, enum cudaMemcpyKind kind, struct emu_node_params *p)
{
    void *dev;
    size_t bytes;
    cudaError_t e = rt_symbol(symbol, &dev, &bytes);
    if (e == cudaSuccess && (offset > bytes || count > bytes - offset))
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
        return e;
    char *d = (char *)dev + offset;
    return to ? memcpy1d_params(api, d, host, count, kind, p) : memcpy1d_params(api, host, d, count, kind, p);
}

cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                           const cudaGraphNode_t *deps, size_t ndeps, const void *symbol,
                                           const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = symbol_copy_params(RT_API(), 1, symbol, (void *)src, count, offset, kind, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t *deps, size_t ndeps, void *dst,
                                             const void *symbol, size_t count, size_t offset,
                                             enum cudaMemcpyKind kind)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = symbol_copy_params(RT_API(), 0, symbol, dst, count, offset, kind, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, const struct cudaMemsetParams *params)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = memset_params(RT_API(), params, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                 size_t ndeps, const struct cudaHostNodeParams *params)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = params && params->fn ? simple_params(RT_API(), EMU_NODE_HOST, &p) : cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        p.host.fn = params->fn;
        p.host.arg = params->userData;
    }
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                       size_t ndeps, cudaGraph_t childGraph)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = G(childGraph) && childGraph != graph ? simple_params(RT_API(), EMU_NODE_GRAPH, &p)
                                                          : cudaErrorInvalidValue;
    p.child = G(childGraph);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                  size_t ndeps)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = simple_params(RT_API(), EMU_NODE_EMPTY, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

static cudaError_t event_params(uint32_t api, int type, cudaEvent_t event, struct emu_node_params *p)
{
    simple_params(api, type, p);
    p->event = emu_event_resolve(event);
    return p->event ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                        size_t ndeps, cudaEvent_t event)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = event_params(RT_API(), EMU_NODE_EVENT_RECORD, event, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                      size_t ndeps, cudaEvent_t event)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = event_params(RT_API(), EMU_NODE_WAIT_EVENT, event, &p);
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                     size_t ndeps, struct cudaMemAllocNodeParams *params)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = params && params->poolProps.location.type == cudaMemLocationTypeDevice
                        ? simple_params(RT_API(), EMU_NODE_MEM_ALLOC, &p)
                        : cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        p.mem.device = params->poolProps.location.id;
        p.mem.bytes = params->bytesize;
    }
    e = add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
    if (e == cudaSuccess)
        params->dptr = (void *)(uintptr_t)emu_graph_node_params(N(*pGraphNode))->mem.ptr;
    return e;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                    size_t ndeps, void *dptr)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = simple_params(RT_API(), EMU_NODE_MEM_FREE, &p);
    p.mem.ptr = (uint64_t)(uintptr_t)dptr;
    return add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
}

/* cudaGraphNodeParams (CUDA 12.2+) -> node parameters. */
static cudaError_t generic_params(uint32_t api, struct cudaGraphNodeParams *np, struct emu_node_params *p)
{
    if (!np)
        return cudaErrorInvalidValue;
    switch (np->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams kp = { np->kernel.func, np->kernel.gridDim, np->kernel.blockDim,
                                           np->kernel.sharedMemBytes, np->kernel.kernelParams, np->kernel.extra };
        return kernel_params(api, &kp, p);
    }
    case cudaGraphNodeTypeMemcpy:
        return memcpy_params(api, &np->memcpy.copyParams, p);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams mp = { np->memset.dst, np->memset.pitch, np->memset.value,
                                       np->memset.elementSize, np->memset.width, np->memset.height };
        return memset_params(api, &mp, p);
    }
    case cudaGraphNodeTypeHost:
        if (!np->host.fn)
            return cudaErrorInvalidValue;
        simple_params(api, EMU_NODE_HOST, p);
        p->host.fn = np->host.fn;
        p->host.arg = np->host.userData;
        return cudaSuccess;
    case cudaGraphNodeTypeGraph:
        simple_params(api, EMU_NODE_GRAPH, p);
        p->child = G(np->graph.graph);
        return p->child ? cudaSuccess : cudaErrorInvalidValue;
    case cudaGraphNodeTypeEmpty:
        return simple_params(api, EMU_NODE_EMPTY, p);
    case cudaGraphNodeTypeWaitEvent:
        return event_params(api, EMU_NODE_WAIT_EVENT, np->eventWait.event, p);
    case cudaGraphNodeTypeEventRecord:
        return event_params(api, EMU_NODE_EVENT_RECORD, np->eventRecord.event, p);
    case cudaGraphNodeTypeMemAlloc:
        if (np->alloc.poolProps.location.type != cudaMemLocationTypeDevice)
            return cudaErrorInvalidValue;
        simple_params(api, EMU_NODE_MEM_ALLOC, p);
        p->mem.device = np->alloc.poolProps.location.id;
        p->mem.bytes = np->alloc.bytesize;
        return cudaSuccess;
    case cudaGraphNodeTypeMemFree:
        simple_params(api, EMU_NODE_MEM_FREE, p);
        p->mem.ptr = (uint64_t)(uintptr_t)np->free.dptr;
        return cudaSuccess;
    default:
        return cudaErrorNotSupported; /* external semaphores, conditional nodes */
    }
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
                             const cudaGraphEdgeData *dependencyData, size_t ndeps,
                             struct cudaGraphNodeParams *nodeParams)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = generic_params(RT_API(), nodeParams, &p);
    e = add_node(RT_API(), rt_t0, pGraphNode, graph, deps, ndeps, e, &p);
    if (e == cudaSuccess && nodeParams->type == cudaGraphNodeTypeMemAlloc)
        nodeParams->alloc.dptr = (void *)(uintptr_t)emu_graph_node_params(N(*pGraphNode))->mem.ptr;
    return e;
}

/* ---- node parameters: get and set ---- */


cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
    RT_ENTER();
    struct emu_graph_node *n = N(node);
    if (!n || !pType)
        RT_RETURN(cudaErrorInvalidValue);
    *pType = (enum cudaGraphNodeType)emu_graph_node_params(n)->type;
    RT_RETURN(cudaSuccess);
}

static void kernel_out(const struct emu_node_params *p, struct cudaKernelNodeParams *kp)
{
    const struct emu_kernel *k = p->launch.kernel;
    kp->func = (void *)(k->host_fun ? k->host_fun : (const void *)k);
    kp->gridDim = (dim3){ p->launch.grid[0], p->launch.grid[1], p->launch.grid[2] };
    kp->blockDim = (dim3){ p->launch.block[0], p->launch.block[1], p->launch.block[2] };
    kp->sharedMemBytes = p->launch.smem_bytes;
    kp->kernelParams = p->kargs;
    kp->extra = NULL;
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(node, EMU_NODE_KERNEL);
    if (!p || !pNodeParams)
        RT_RETURN(cudaErrorInvalidValue);
    kernel_out(p, pNodeParams);
    RT_RETURN(cudaSuccess);
}

static void copy_out(const struct emu_node_params *p, struct cudaMemcpy3DParms *cp)
{
    const struct emu_copy *c = &p->copy;
    memset(cp, 0, sizeof *cp);
    cp->srcPtr = (struct cudaPitchedPtr){ (void *)c->src, c->spitch, c->width,
                                          c->spitch ? c->sslice / c->spitch : 0 };
    cp->dstPtr = (struct cudaPitchedPtr){ c->dst, c->dpitch, c->width, c->dpitch ? c->dslice / c->dpitch : 0 };
    cp->extent = (struct cudaExtent){ c->width, MAYA_MAX(c->height, 1), MAYA_MAX(c->depth, 1) };
    cp->kind = cudaMemcpyDefault;
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *pNodeParams)
{
    RT_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(node, EMU_NODE_MEMCPY);
    if (!p || !pNodeParams)
        RT_RETURN(cudaErrorInvalidValue);
    copy_out(p, pNodeParams);
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, struct cudaMemsetParams *pNodeParams)
{
    RT_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(node, EMU_NODE_MEMSET);
    if (!p || !pNodeParams)
        RT_RETURN(cudaErrorInvalidValue);
    *pNodeParams = (struct cudaMemsetParams){ p->memset.dst, p->memset.pitch, p->memset.value,
                                              p->memset.elem_bytes, p->memset.width, p->memset.height };
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *pNodeParams)
{
    RT_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(node, EMU_NODE_HOST);
    if (!p || !pNodeParams)
        RT_RETURN(cudaErrorInvalidValue);
    pNodeParams->fn = p->host.fn;
    pNodeParams->userData = p->host.arg;
    RT_RETURN(cudaSuccess);
}

/* The node owns its child graph (a copy of the one it was given). */
cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *pGraph)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_ref(node, EMU_NODE_GRAPH, pGraph)));
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_ref(node, EMU_NODE_EVENT_RECORD, event_out)));
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_ref(node, EMU_NODE_WAIT_EVENT, event_out)));
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out)
{
    RT_ENTER();
    const struct emu_node_params *p = emu_graph_node_params_of(node, EMU_NODE_MEM_ALLOC);
    if (!p || !params_out)
        RT_RETURN(cudaErrorInvalidValue);
    memset(params_out, 0, sizeof *params_out);
    params_out->poolProps.allocType = cudaMemAllocationTypePinned;
    params_out->poolProps.location.type = cudaMemLocationTypeDevice;
    params_out->poolProps.location.id = p->mem.device;
    params_out->bytesize = p->mem.bytes;
    params_out->dptr = (void *)(uintptr_t)p->mem.ptr;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_ref(node, EMU_NODE_MEM_FREE, dptr_out)));
}

/* A changed node keeps the api of the call that made it. */
static uint32_t node_api(cudaGraphNode_t node, uint32_t fallback)
{
    struct emu_graph_node *n = N(node);
    return n ? emu_graph_node_params(n)->api : fallback;
}

/* Set a node's parameters: in its graph (exec NULL) or in an executable
 * graph made from it. */
static cudaError_t set_params(uint32_t api, uint64_t t0, cudaGraphExec_t exec, cudaGraphNode_t node, int type,
                              cudaError_t conv, const struct emu_node_params *p)
{
    struct emu_graph_node *n = N(node);
    cudaError_t e = conv;
    if (e == cudaSuccess && (!n || emu_graph_node_params(n)->type != type))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = exec ? (X(exec) ? rt_error(emu_graph_exec_set_params(X(exec), n, p)) : cudaErrorInvalidValue)
                 : rt_error(emu_graph_node_set_params(n, p));
    emu_trace_call(api, t0, e, 0, 0);
    return rt_note(e);
}

static cudaError_t set_kernel(uint32_t api, uint64_t t0, cudaGraphExec_t exec, cudaGraphNode_t node,
                              const struct cudaKernelNodeParams *kp)
{
    struct emu_node_params p;
    cudaError_t e = kernel_params(node_api(node, api), kp, &p);
    return set_params(api, t0, exec, node, EMU_NODE_KERNEL, e, &p);
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    return set_kernel(RT_API(), rt_t0, NULL, node, pNodeParams);
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    return set_kernel(RT_API(), rt_t0, hGraphExec, node, pNodeParams);
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = memcpy1d_params(node_api(node, RT_API()), dst, src, count, kind, &p);
    return set_params(RT_API(), rt_t0, NULL, node, EMU_NODE_MEMCPY, e, &p);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
                                               const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    struct emu_node_params p;
    cudaError_t e = memcpy1d_params(node_api(node, RT_API()), dst, src, count, kind, &p);
    return set_params(RT_API(), rt_t0, hGraphExec, node, EMU_NODE_MEMCPY, e, &p);
}

static cudaError_t host_params(uint32_t api, const struct cudaHostNodeParams *hp, struct emu_node_params *p)
{
    if (!hp || !hp->fn)
        return cudaErrorInvalidValue;
    simple_params(api, EMU_NODE_HOST, p);
    p->host.fn = hp->fn;
    p->host.arg = hp->userData;
    return cudaSuccess;
}

/* A node's setter and its executable-graph twin, for parameters that
 * conv(api, params, &p) converts: cudaGraph<Name> and cudaGraphExec<Name>. */
#define NODE_SETTERS(name, ptype, conv, type) \
    cudaError_t cudaGraph##name(cudaGraphNode_t node, const ptype *params) \
    { \
        RT_ENTER(); \
        struct emu_node_params p; \
        cudaError_t e = conv(node_api(node, RT_API()), params, &p); \
        return set_params(RT_API(), rt_t0, NULL, node, type, e, &p); \
    } \
    cudaError_t cudaGraphExec##name(cudaGraphExec_t exec, cudaGraphNode_t node, const ptype *params) \
    { \
        RT_ENTER(); \
        struct emu_node_params p; \
        cudaError_t e = conv(node_api(node, RT_API()), params, &p); \
        return set_params(RT_API(), rt_t0, exec, node, type, e, &p); \
    }

NODE_SETTERS(MemcpyNodeSetParams, struct cudaMemcpy3DParms, memcpy_params, EMU_NODE_MEMCPY)
NODE_SETTERS(MemsetNodeSetParams, struct cudaMemsetParams, memset_params, EMU_NODE_MEMSET)
NODE_SETTERS(HostNodeSetParams, struct cudaHostNodeParams, host_params, EMU_NODE_HOST)

/* Memcpy nodes set to copy to or from a device variable. */
static cudaError_t set_symbol_copy(uint32_t api, uint64_t t0, cudaGraphExec_t exec, cudaGraphNode_t node, int to,
                                   const void *symbol, void *host, size_t count, size_t offset,
                                   enum cudaMemcpyKind kind)
{
    struct emu_node_params p;
    cudaError_t e = symbol_copy_params(node_api(node, api), to, symbol, host, count, offset, kind, &p);
    return set_params(api, t0, exec, node, EMU_NODE_MEMCPY, e, &p);
}

cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void *symbol, const void *src,
                                                 size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return set_symbol_copy(RT_API(), rt_t0, NULL, node, 1, symbol, (void *)src, count, offset, kind);
}

cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void *dst, const void *symbol,
                                                   size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return set_symbol_copy(RT_API(), rt_t0, NULL, node, 0, symbol, dst, count, offset, kind);
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                     const void *symbol, const void *src, size_t count,
                                                     size_t offset, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return set_symbol_copy(RT_API(), rt_t0, hGraphExec, node, 1, symbol, (void *)src, count, offset, kind);
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                       void *dst, const void *symbol, size_t count, size_t offset,
                                                       enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return set_symbol_copy(RT_API(), rt_t0, hGraphExec, node, 0, symbol, dst, count, offset, kind);
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                 cudaGraph_t childGraph)
{
    RT_ENTER();
    struct emu_node_params p;
    simple_params(node_api(node, RT_API()), EMU_NODE_GRAPH, &p);
    p.child = G(childGraph);
    return set_params(RT_API(), rt_t0, hGraphExec, node, EMU_NODE_GRAPH,
                      p.child ? cudaSuccess : cudaErrorInvalidValue, &p);
}

static cudaError_t set_event(uint32_t api, uint64_t t0, cudaGraphExec_t exec, cudaGraphNode_t node, int type,
                             cudaEvent_t event)
{
    struct emu_node_params p;
    cudaError_t e = event_params(node_api(node, api), type, event, &p);
    return set_params(api, t0, exec, node, type, e, &p);
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    RT_ENTER();
    return set_event(RT_API(), rt_t0, NULL, node, EMU_NODE_EVENT_RECORD, event);
}

cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                 cudaEvent_t event)
{
    RT_ENTER();
    return set_event(RT_API(), rt_t0, hGraphExec, hNode, EMU_NODE_EVENT_RECORD, event);
}

cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    RT_ENTER();
    return set_event(RT_API(), rt_t0, NULL, node, EMU_NODE_WAIT_EVENT, event);
}

cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, cudaEvent_t event)
{
    RT_ENTER();
    return set_event(RT_API(), rt_t0, hGraphExec, hNode, EMU_NODE_WAIT_EVENT, event);
}

static cudaError_t set_generic(uint32_t api, uint64_t t0, cudaGraphExec_t exec, cudaGraphNode_t node,
                               struct cudaGraphNodeParams *np)
{
    struct emu_node_params p;
    cudaError_t e = generic_params(node_api(node, api), np, &p);
    return set_params(api, t0, exec, node, np ? (int)np->type : -1, e, &p);
}

cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *nodeParams)
{
    RT_ENTER();
    return set_generic(RT_API(), rt_t0, NULL, node, nodeParams);
}

cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec, cudaGraphNode_t node,
                                       struct cudaGraphNodeParams *nodeParams)
{
    RT_ENTER();
    return set_generic(RT_API(), rt_t0, graphExec, node, nodeParams);
}

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, unsigned int isEnabled)
{
    RT_ENTER();
    if (!X(hGraphExec) || !N(hNode))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(rt_error(emu_graph_exec_node_enable(X(hGraphExec), N(hNode), isEnabled != 0, NULL)));
}

cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, unsigned int *isEnabled)
{
    RT_ENTER();
    int en = 0;
    if (!X(hGraphExec) || !N(hNode) || !isEnabled)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = rt_error(emu_graph_exec_node_enable(X(hGraphExec), N(hNode), -1, &en));
    if (e == cudaSuccess)
        *isEnabled = (unsigned)en;
    RT_RETURN(e);
}

/* ---- structure ---- */

/* Listings (core graph.c): edge data comes back zeroed, 8 bytes an edge. */
_Static_assert(sizeof(cudaGraphEdgeData) == 8, "edge data as the core zeroes it");
#define NODES(out) ((struct emu_graph_node **)(out))

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_nodes(G(graph), NODES(nodes), numNodes)));
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_roots(G(graph), NODES(pRootNodes), pNumRootNodes)));
}

cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                              cudaGraphEdgeData *edgeData, size_t *numEdges)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_edges(G(graph), NODES(from), NODES(to), edgeData, numEdges)));
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                         cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_deps(N(node), NODES(pDependencies), edgeData, pNumDependencies)));
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                           cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_dependents(N(node), NODES(pDependentNodes), edgeData, pNumDependentNodes)));
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_add_deps(G(graph), (struct emu_graph_node *const *)from,
                                          (struct emu_graph_node *const *)to, numDependencies)));
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_remove_deps(G(graph), (struct emu_graph_node *const *)from,
                                             (struct emu_graph_node *const *)to, numDependencies)));
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_node_destroy(N(node))));
}

/* ---- executable graphs ---- */

#define KNOWN_INSTANTIATE_FLAGS \
    (cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload | \
     cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority)

static cudaError_t instantiate(uint32_t api, uint64_t t0, cudaGraphExec_t *out, cudaGraph_t graph,
                               unsigned long long flags)
{
    cudaError_t e = cudaSuccess;
    struct emu_graph_exec *x = NULL;
    if (!out || !G(graph) || (flags & ~(unsigned long long)KNOWN_INSTANTIATE_FLAGS))
        e = cudaErrorInvalidValue;
    else
        e = rt_error(emu_graph_instantiate(G(graph), flags, &x));
    if (e == cudaSuccess)
        *out = (cudaGraphExec_t)x;
    emu_trace_call(api, t0, e, 0, 0);
    return rt_note(e);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_ENTER();
    return instantiate(RT_API(), rt_t0, pGraphExec, graph, flags);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_ENTER();
    return instantiate(RT_API(), rt_t0, pGraphExec, graph, flags);
}

static cudaError_t instantiate_params(uint32_t api, uint64_t t0, cudaGraphExec_t *out, cudaGraph_t graph,
                                      cudaGraphInstantiateParams *ip)
{
    if (!ip) {
        emu_trace_call(api, t0, cudaErrorInvalidValue, 0, 0);
        return rt_note(cudaErrorInvalidValue);
    }
    cudaError_t e = instantiate(api, t0, out, graph, ip->flags);
    ip->errNode_out = NULL;
    ip->result_out = e == cudaSuccess ? cudaGraphInstantiateSuccess
                     : e == cudaErrorInvalidValue && G(graph) ? cudaGraphInstantiateInvalidStructure
                                                               : cudaGraphInstantiateError;
    return e;
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams *instantiateParams)
{
    RT_ENTER();
    return instantiate_params(RT_API(), rt_t0, pGraphExec, graph, instantiateParams);
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams *instantiateParams)
{
    RT_ENTER();
    return instantiate_params(RT_API(), rt_t0, pGraphExec, graph, instantiateParams);
}

cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags)
{
    RT_ENTER();
    if (!X(graphExec) || !flags)
        RT_RETURN(cudaErrorInvalidValue);
    *flags = emu_graph_exec_flags(X(graphExec));
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_exec_destroy(X(graphExec))));
}

/* A launch, or an upload (which makes a later launch cheaper on a GPU and
 * has nothing to do here beyond its checks). */
static cudaError_t graph_launch(uint32_t api, uint64_t t0, cudaGraphExec_t exec, cudaStream_t stream, int pt,
                                int upload)
{
    struct emu_stream *s = NULL;
    cudaError_t e = X(exec) ? rt_issue_stream(stream, pt, &s) : cudaErrorInvalidValue;
    if (e == cudaSuccess && !upload)
        e = rt_error(emu_graph_launch(X(exec), s, api, t0));
    else
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    return graph_launch(RT_API(), rt_t0, graphExec, stream, 0, 0);
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    return graph_launch(RT_API(), rt_t0, graphExec, stream, 1, 0);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    return graph_launch(RT_API(), rt_t0, graphExec, stream, 0, 1);
}

cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    return graph_launch(RT_API(), rt_t0, graphExec, stream, 1, 1);
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo *resultInfo)
{
    RT_ENTER();
    enum emu_update_result r = EMU_UPDATE_ERROR;
    struct emu_graph_node *bad = NULL;
    if (!X(hGraphExec) || !G(hGraph))
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = rt_error(emu_graph_exec_update(X(hGraphExec), G(hGraph), &r, &bad));
    if (resultInfo) {
        resultInfo->result = (enum cudaGraphExecUpdateResult)r;
        resultInfo->errorNode = (cudaGraphNode_t)bad;
        resultInfo->errorFromNode = NULL;
    }
    RT_RETURN(e);
}

/* ---- graph memory ---- */

/* Graph memory is allocated when its node is made and stays allocated, so
 * there is no idle graph memory to trim. */
cudaError_t cudaDeviceGraphMemTrim(int device)
{
    RT_ENTER();
    RT_RETURN(emu_device(device) ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_mem_attr(device, (int)attr, 0, value)));
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_mem_attr(device, (int)attr, 1, value)));
}

cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    RT_ENTER();
    if (!G(graph) || !path)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(emu_graph_dot_print(G(graph), path) == 0 ? cudaSuccess : cudaErrorOperatingSystem);
}

/* ---- user objects ---- */

cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy,
                                 unsigned int initialRefcount, unsigned int flags)
{
    RT_ENTER();
    struct emu_user_object *o = NULL;
    if (!object_out || flags != cudaUserObjectNoDestructorSync)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = rt_error(emu_user_object_create(ptr, destroy, initialRefcount, &o));
    if (e == cudaSuccess)
        *object_out = (cudaUserObject_t)o;
    RT_RETURN(e);
}

cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_user_object_retain(emu_user_object_resolve(object), count)));
}

cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_user_object_release(emu_user_object_resolve(object), count)));
}

cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                      unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)cudaGraphUserObjectMove)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(rt_error(emu_graph_retain_user_object(G(graph), emu_user_object_resolve(object), count,
                                                    (flags & cudaGraphUserObjectMove) != 0)));
}

cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_graph_release_user_object(G(graph), emu_user_object_resolve(object), count)));
}
