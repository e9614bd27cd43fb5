/* The collective and point-to-point calls: check the arguments as NCCL
 * does, decide small (data moves between ranks) or large (traced only),
 * build the trace record, and hand the operation to the group machinery. */
#include "nc.h"

#include <string.h>

static int rec_has_redop(uint32_t op)
{
    return op == MAYA_COLL_ALLREDUCE || op == MAYA_COLL_REDUCE || op == MAYA_COLL_REDUCESCATTER;
}

static ncclResult_t check(struct ncclComm *c, const char *api, uint32_t op, ncclDataType_t dtype, int redop,
                          int peer)
{
    ncclResult_t r = nc_comm_ready(c, api);
    if (r != ncclSuccess)
        return r;
    if (nc_type_size(dtype) == 0)
        return nc_fail(ncclInvalidArgument, "%s: datatype %d is not an ncclDataType_t (0..%d)", api, (int)dtype,
                       ncclNumTypes - 1);
    if (rec_has_redop(op)) {
        int i = redop - ncclNumOps;
        if (redop < 0 || (redop >= ncclNumOps && (i >= c->nredops || !c->redops[i].live)))
            return nc_fail(ncclInvalidArgument, "%s: reduction %d is neither built in nor made by "
                           "ncclRedOpCreatePreMulSum on this communicator", api, redop);
        if (redop >= ncclNumOps && c->redops[i].dtype != dtype)
            return nc_fail(ncclInvalidArgument, "%s: reduction %d was made for %s, the call uses %s", api, redop,
                           nc_type_name(c->redops[i].dtype), nc_type_name(dtype));
    }
    if (peer != -1 && (peer < 0 || peer >= c->nranks))
        return nc_fail(ncclInvalidArgument, "%s: %s %d is not a rank of the communicator (0..%d)", api,
                       op == MAYA_COLL_SEND || op == MAYA_COLL_RECV ? "peer" : "root", peer, c->nranks - 1);
    return ncclSuccess;
}

static ncclResult_t enqueue(const char *api, uint32_t api_id, uint64_t t0, uint32_t op, const void *sendbuf,
                            void *recvbuf, size_t count, ncclDataType_t dtype, int redop, int peer,
                            struct ncclComm *c, cudaStream_t stream)
{
    ncclResult_t r = check(c, api, op, dtype, redop, peer);
    struct emu_stream *s = NULL;
    if (r == ncclSuccess && !(s = emu_stream_resolve(stream, 0)))
        r = nc_fail(ncclUnhandledCudaError, "%s: %p is not a valid stream", api, (void *)stream);
    if (r != ncclSuccess || count == 0) {
        /* A failed call, or one with nothing to move (NCCL returns at once). */
        nc_group_fail(r);
        emu_trace_call(api_id, t0, r, s ? s->id : 0, 0);
        return r;
    }
    struct nc_task t;
    memset(&t, 0, sizeof t);
    t.type = op == MAYA_COLL_SEND ? NC_T_SEND : op == MAYA_COLL_RECV ? NC_T_RECV : NC_T_COLL;
    t.comm = c;
    t.op = op;
    t.sendbuf = sendbuf;
    t.recvbuf = recvbuf;
    t.count = count;
    t.dtype = dtype;
    t.redop = redop;
    t.peer = peer;
    if (redop >= ncclNumOps && rec_has_redop(op))
        t.premul = c->redops[redop - ncclNumOps];
    /* Work captured into a CUDA graph runs when the graph does: nothing
     * moves now, and it is numbered at each launch (capture.c). */
    int capturing = s->capture_mode != 0;
    t.small = !capturing && nc_total_bytes(op, count, dtype, c->nranks) <= emu_config()->copy_threshold;
    t.capture = capturing ? s : NULL;
    if (!t.small && !capturing) /* moves no data: the result holds no real values */
        emu_real_written((uint64_t)(uintptr_t)recvbuf, MAYA_WRITER_COLL, api_id);

    struct maya_rec_coll *rec = &t.rec;
    rec->h.type = MAYA_REC_COLL;
    rec->h.flags = capturing ? MAYA_F_CAPTURING : 0;
    rec->h.bytes = sizeof *rec;
    rec->comm = c->id;
    rec->count = count;
    rec->bytes = (uint64_t)count * nc_type_size(dtype);
    rec->sendbuf = (uint64_t)(uintptr_t)sendbuf;
    rec->recvbuf = (uint64_t)(uintptr_t)recvbuf;
    rec->op = op;
    rec->dtype = dtype;
    rec->redop = rec_has_redop(op) ? redop : -1;
    rec->rank = c->rank;
    rec->nranks = c->nranks;
    rec->peer = peer;
    rec->flags = t.small ? MAYA_COLL_DATA_MOVED : 0;
    emu_call_fill(&rec->call, api_id, t0, ncclSuccess, s->id);
    rec->call.device = c->device;
    return nc_submit(&t);
}

#define ENQUEUE(op, send, recv, count, dtype, redop, peer, comm, stream) \
    enqueue(__func__, NC_API(), nc_t0, op, send, recv, count, dtype, redop, peer, comm, stream)

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, -1, comm, stream);
}
NC_ALIAS(ncclAllReduce);

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_BROADCAST, sendbuff, recvbuff, count, datatype, 0, root, comm, stream);
}
NC_ALIAS(ncclBroadcast);

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_BROADCAST, buff, buff, count, datatype, 0, root, comm, stream);
}
NC_ALIAS(ncclBcast);

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}
NC_ALIAS(ncclReduce);

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, 0, -1, comm, stream);
}
NC_ALIAS(ncclAllGather);

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, -1, comm, stream);
}
NC_ALIAS(ncclReduceScatter);

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_ALLTOALL, sendbuff, recvbuff, count, datatype, 0, -1, comm, stream);
}
NC_ALIAS(ncclAlltoAll);

ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_GATHER, sendbuff, recvbuff, count, datatype, 0, root, comm, stream);
}
NC_ALIAS(ncclGather);

ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_SCATTER, sendbuff, recvbuff, count, datatype, 0, root, comm, stream);
}
NC_ALIAS(ncclScatter);

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_SEND, sendbuff, NULL, count, datatype, 0, peer, comm, stream);
}
NC_ALIAS(ncclSend);

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    NC_ENTER();
    return ENQUEUE(MAYA_COLL_RECV, NULL, recvbuff, count, datatype, 0, peer, comm, stream);
}
NC_ALIAS(ncclRecv);
