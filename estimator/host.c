/* Host cost of API calls: what the call itself takes on a real system,
 * beyond the program's own work between calls (which the trace's host gaps
 * already hold). Waiting (synchronous copies, synchronize calls) is not
 * counted here: the simulator blocks the host until the device is done.
 *
 * Figures are order-of-magnitude, from published measurements (shared data
 * reference/GPUS.md section C(a)): a kernel launch costs perf.launch_ns
 * (2.1 us H100, 3.8 us V100); library calls that launch do a little more
 * work first; cheap getters cost ~100 ns.
 */
#include <string.h>

#include "est_internal.h"

#define GROUP_TASK_NS 500 /* an NCCL call inside a group: argument checks and a task appended */

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int has(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

double est_host_ns(const struct maya_gpu_spec *g, const struct est_op *op)
{
    double launch = g->perf.launch_ns > 0 ? g->perf.launch_ns : 2500;
    const char *api = op->api ? op->api : "";
    int type = op->rec ? op->rec->type : 0;

    switch (type) {
    case MAYA_REC_LAUNCH:
        return launch;
    case MAYA_REC_GEMM:
        /* heuristic lookup and argument checks, then one or two launches */
        return launch + 1500;
    case MAYA_REC_DNN:
        /* cuDNN execute: plan lookup and variant pack before launching */
        return launch * 2 + 3000;
    case MAYA_REC_COLL:
        /* NCCL enqueue: proxy hand-off and a kernel launch. Inside a group
         * only the first op on a stream pays it: ncclGroupEnd launches one
         * kernel per communicator for all of them, the others cost the
         * append of a task to the group's plan */
        return op->group_follower ? GROUP_TASK_NS : launch + 2500;
    case MAYA_REC_MEMCPY:
    case MAYA_REC_MEMSET:
        return launch + 500;
    case MAYA_REC_ALLOC: {
        const struct maya_rec_alloc *a = (const struct maya_rec_alloc *)op->rec;
        if (op->rec->bytes < sizeof *a)
            return 5000;
        /* pinning host memory costs about 0.5 ms per GB (page faults and
         * registration); device allocations map pages (~10 us), stream-
         * ordered pool allocations are cheap. */
        if (a->kind == MAYA_ALLOC_HOST || a->kind == MAYA_ALLOC_HOST_REGISTER)
            return 10000 + (double)a->bytes * 0.5e-3;
        if (a->kind == MAYA_ALLOC_ASYNC)
            return 1000;
        return 10000;
    }
    case MAYA_REC_FREE:
        return 5000;
    case MAYA_REC_EVENT_RECORD:
    case MAYA_REC_STREAM_WAIT:
        return 1000;
    case MAYA_REC_SYNC:
        return 1500;
    case MAYA_REC_HOST_FUNC:
        return launch;
    case MAYA_REC_GRAPH:
        /* graph launch: 2.5 us plus ~1 ns per node (CUDA 12.6 constant-time
         * launch); the begin record carries it, the end record is free */
        if (op->rec->bytes >= sizeof(struct maya_rec_graph)) {
            const struct maya_rec_graph *gr = (const struct maya_rec_graph *)op->rec;
            return gr->phase == 1 ? 2500 + gr->nodes : 0;
        }
        return 2500;
    case MAYA_REC_MARKER:
        return 100;
    default:
        break;
    }
    /* plain calls, by name */
    if (has(api, "Launch"))
        return launch;
    if (has(api, "Create") || has(api, "Init") || has(api, "Load") || has(api, "Register"))
        return 5000;
    if (has(api, "Destroy") || has(api, "Unload") || has(api, "Unregister"))
        return 3000;
    if (has(api, "Query"))
        return 500;
    if (starts(api, "nccl"))
        return 300; /* group start/end and comm getters without a launch */
    /* getters, setters, error checks, version queries */
    return 100;
}
