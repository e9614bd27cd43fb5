// The emulated NCCL's own cost, for bench/nccl_bench.sh: wall-clock time per
// call of small all-reduces (data moves between the ranks through rank 0),
// a small send/recv ring, and large all-reduces (only traced), each averaged
// over --iters calls after a warm-up. Rank 0 prints name=value lines (us).
// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT as for torchrun.
#include <chrono>

#include "nccl_boot.h"

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
    int iters = argc > 2 && !strcmp(argv[1], "--iters") ? atoi(argv[2]) : 200;
    int rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1), ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    size_t large = 16u << 20;
    void *buf;
    CUDA_CHECK(cudaMalloc(&buf, large * sizeof(float)));
    ncclUniqueId id;
    share_unique_id(&id, rank, world);
    ncclComm_t comm;
    NCCL_CHECK(ncclCommInitRank(&comm, world, id, rank));
    struct { const char *name; size_t count; int ring; } cases[] = {
        { "allreduce_4B", 1, 0 }, { "allreduce_16KiB", 4096, 0 }, { "sendrecv_ring_4KiB", 1024, 1 },
        { "allreduce_64MiB", large, 0 },
    };
    for (auto &c : cases) {
        double t0 = 0;
        for (int i = -10; i < iters; i++) {
            if (i == 0)
                t0 = now_us();
            if (c.ring) {
                NCCL_CHECK(ncclGroupStart());
                NCCL_CHECK(ncclSend(buf, c.count, ncclFloat32, (rank + 1) % world, comm, s));
                NCCL_CHECK(ncclRecv(buf, c.count, ncclFloat32, (rank + world - 1) % world, comm, s));
                NCCL_CHECK(ncclGroupEnd());
            } else {
                NCCL_CHECK(ncclAllReduce(buf, buf, c.count, ncclFloat32, ncclSum, comm, s));
            }
        }
        double us = (now_us() - t0) / iters;
        if (rank == 0)
            printf("nccl_%dranks_%s_us=%.2f\n", world, c.name, us);
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    NCCL_CHECK(ncclCommDestroy(comm));
    return 0;
}
