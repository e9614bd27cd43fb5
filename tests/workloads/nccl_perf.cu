// A sweep of one NCCL collective over message sizes, the way nccl-tests
// measures it, in either of its two modes: one process driving N devices
// (`all_reduce_perf -b 8 -e 8G -f 2 -g N`: every iteration is one
// ncclGroupStart/End over the N ranks), or one process per GPU (mpirun or
// torchrun style: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set,
// WORLD_SIZE > 1). Iterations are issued back to back; for each size,
// warm-up iterations and then timed ones, and a stream synchronisation. Sizes are what nccl-tests prints in its size
// column: the buffer for all-reduce and broadcast, the whole output of an
// all-gather, the whole input of a reduce-scatter, a rank's whole send buffer
// for all-to-all, the message for send/recv (each rank sends to the next and
// receives from the previous). Elements are float32, as nccl-tests' default.
//
//   nccl_perf --op allreduce|allgather|reducescatter|alltoall|broadcast|sendrecv
//             [--devices N] [--min BYTES] [--max BYTES] [--factor F]
//             [--warmup W] [--iters I]
//
// On GPUs it prints the measured time per iteration and the bus bandwidth
// (nccl-tests' busbw) per size. Under maya the times are the emulator's and
// mean nothing: the simulated ones are read from the run's timeline, where
// the collectives of each size come in order, W + I iterations each.
#include <chrono>
#include <string>
#include <vector>

#include "nccl_boot.h"

enum Op { ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST, SENDRECV };

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    size_t mul = 1;
    switch (*end) {
    case 'K': case 'k': mul = 1ull << 10; break;
    case 'M': case 'm': mul = 1ull << 20; break;
    case 'G': case 'g': mul = 1ull << 30; break;
    case '\0': break;
    default:
        fprintf(stderr, "nccl_perf: size \"%s\": expected a number with K, M or G\n", s);
        exit(2);
    }
    return (size_t)(v * mul);
}

int main(int argc, char **argv)
{
    Op op = ALLREDUCE;
    int ndev = 8, warmup = 1, iters = 5;
    size_t minb = 8, maxb = 8ull << 30, factor = 2;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "nccl_perf: %s needs a value\n", a.c_str());
            return 2;
        }
        i++;
        if (a == "--op") {
            std::string o = v;
            op = o == "allreduce" ? ALLREDUCE : o == "allgather" ? ALLGATHER : o == "reducescatter" ? REDUCESCATTER
               : o == "alltoall" ? ALLTOALL : o == "broadcast" ? BROADCAST : o == "sendrecv" ? SENDRECV : (Op)-1;
            if ((int)op < 0) {
                fprintf(stderr, "nccl_perf: --op %s: expected allreduce, allgather, reducescatter, alltoall, "
                                "broadcast or sendrecv\n", v);
                return 2;
            }
        } else if (a == "--devices") {
            ndev = atoi(v);
        } else if (a == "--min") {
            minb = parse_size(v);
        } else if (a == "--max") {
            maxb = parse_size(v);
        } else if (a == "--factor") {
            factor = (size_t)atoi(v);
        } else if (a == "--warmup") {
            warmup = atoi(v);
        } else if (a == "--iters") {
            iters = atoi(v);
        } else {
            fprintf(stderr, "nccl_perf: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    int have = 0;
    CUDA_CHECK(cudaGetDeviceCount(&have));
    int world = env_int("WORLD_SIZE", 1), rank = env_int("RANK", 0);
    if (world > 1)
        ndev = 1; // one rank per process
    if (ndev < 1 || ndev > have || factor < 2 || minb < 1 || maxb < minb || iters < 1 || warmup < 0) {
        fprintf(stderr, "nccl_perf: expected 1..%d devices, factor >= 2, 1 <= min <= max, iters >= 1\n", have);
        return 2;
    }
    // nranks: the communicator's size; this process's ranks are first..first+ndev-1
    int nranks = world > 1 ? world : ndev, first = world > 1 ? rank : 0;
    std::vector<int> devs(ndev);
    for (int d = 0; d < ndev; d++)
        devs[d] = world > 1 ? env_int("LOCAL_RANK", 0) % have : d;
    std::vector<ncclComm_t> comms(ndev);
    if (world > 1) {
        ncclUniqueId id;
        share_unique_id(&id, rank, world);
        CUDA_CHECK(cudaSetDevice(devs[0]));
        NCCL_CHECK(ncclCommInitRank(&comms[0], world, id, rank));
    } else {
        NCCL_CHECK(ncclCommInitAll(comms.data(), ndev, devs.data()));
    }
    // buffers for the largest size: what each op reads and writes
    size_t send_bytes = maxb, recv_bytes = maxb;
    if (op == ALLGATHER)
        send_bytes = maxb / nranks;
    if (op == REDUCESCATTER)
        recv_bytes = maxb / nranks;
    std::vector<cudaStream_t> streams(ndev);
    std::vector<void *> sendbuf(ndev), recvbuf(ndev);
    for (int d = 0; d < ndev; d++) {
        CUDA_CHECK(cudaSetDevice(devs[d]));
        CUDA_CHECK(cudaStreamCreate(&streams[d]));
        CUDA_CHECK(cudaMalloc(&sendbuf[d], send_bytes > 0 ? send_bytes : 4));
        CUDA_CHECK(cudaMalloc(&recvbuf[d], recv_bytes > 0 ? recv_bytes : 4));
    }
    if (first == 0)
        printf("# nccl_perf op=%d ranks=%d warmup=%d iters=%d\n", (int)op, nranks, warmup, iters);
    printf("#        size    count      time_us   busbw_gbps\n");
    for (size_t size = minb; size <= maxb; size *= factor) {
        // elements per call, as NCCL counts them; sizes too small to give
        // every rank one element are skipped (nccl-tests prints them empty)
        size_t elems = size / 4;
        size_t count = op == ALLGATHER || op == REDUCESCATTER || op == ALLTOALL ? elems / nranks : elems;
        if (count == 0)
            continue;
        double t0 = 0;
        for (int it = -warmup; it < iters; it++) {
            if (it == 0) {
                for (int d = 0; d < ndev; d++)
                    CUDA_CHECK(cudaStreamSynchronize(streams[d]));
                t0 = std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now().time_since_epoch()).count();
            }
            NCCL_CHECK(ncclGroupStart());
            for (int d = 0; d < ndev; d++) {
                ncclComm_t c = comms[d];
                cudaStream_t s = streams[d];
                int r = first + d;
                switch (op) {
                case ALLREDUCE:
                    NCCL_CHECK(ncclAllReduce(sendbuf[d], recvbuf[d], count, ncclFloat32, ncclSum, c, s));
                    break;
                case ALLGATHER:
                    NCCL_CHECK(ncclAllGather(sendbuf[d], recvbuf[d], count, ncclFloat32, c, s));
                    break;
                case REDUCESCATTER:
                    NCCL_CHECK(ncclReduceScatter(sendbuf[d], recvbuf[d], count, ncclFloat32, ncclSum, c, s));
                    break;
                case ALLTOALL: // count: elements to each peer
                    NCCL_CHECK(ncclAlltoAll(sendbuf[d], recvbuf[d], count, ncclFloat32, c, s));
                    break;
                case BROADCAST:
                    NCCL_CHECK(ncclBroadcast(sendbuf[d], recvbuf[d], count, ncclFloat32, 0, c, s));
                    break;
                case SENDRECV:
                    NCCL_CHECK(ncclSend(sendbuf[d], count, ncclFloat32, (r + 1) % nranks, c, s));
                    NCCL_CHECK(ncclRecv(recvbuf[d], count, ncclFloat32, (r + nranks - 1) % nranks, c, s));
                    break;
                }
            }
            NCCL_CHECK(ncclGroupEnd());
        }
        for (int d = 0; d < ndev; d++)
            CUDA_CHECK(cudaStreamSynchronize(streams[d]));
        double us = (std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now().time_since_epoch()).count() - t0) / iters;
        double n = nranks, algbw = size / us / 1e3;
        double f = op == ALLREDUCE ? 2 * (n - 1) / n
                 : op == ALLGATHER || op == REDUCESCATTER || op == ALLTOALL ? (n - 1) / n : 1;
        if (first == 0)
            printf("%13zu %8zu %12.2f %12.2f\n", size, count, us, algbw * f);
    }
    for (int d = 0; d < ndev; d++) {
        CUDA_CHECK(cudaSetDevice(devs[d]));
        CUDA_CHECK(cudaFree(sendbuf[d]));
        CUDA_CHECK(cudaFree(recvbuf[d]));
        NCCL_CHECK(ncclCommDestroy(comms[d]));
    }
    return 0;
}
