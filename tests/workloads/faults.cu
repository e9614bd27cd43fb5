// A job whose rank 1 (or the only rank) fails on purpose at iteration N,
// for the reliability tests (tests/runs/test_run_faults.sh). Each iteration
// every rank memsets 256 bytes of a buffer to the iteration number (low
// byte) on its stream, then all-reduces 1024 floats (with two or more
// ranks); the memset's value tells how far a trace got.
//   faults ok N       N iterations, exit 0
//   faults kill N     rank 1 kills itself (SIGKILL) before iteration N's all-reduce
//   faults term N     the same with SIGTERM
//   faults stop N     rank 1 stops itself (SIGSTOP): a hung rank, the others wait in all-reduce #N
//   faults exit N     rank 1 exits 3 before iteration N's all-reduce
//   faults busy N     rank 1 computes on the CPU for 6 s (no CUDA call) before
//                     iteration N's all-reduce, then goes on: busy, not hung
// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT as for torchrun.
#include <csignal>
#include <ctime>
#include <string>

#include "nccl_boot.h"

int main(int argc, char **argv)
{
    std::string mode = argc > 2 ? argv[1] : "";
    if (mode != "ok" && mode != "kill" && mode != "term" && mode != "stop" && mode != "exit" && mode != "busy") {
        fprintf(stderr, "usage: faults ok|kill|term|stop|exit|busy N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    int rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1), ndev = 0;
    int victim = world > 1 ? 1 : 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    void *buf;
    CUDA_CHECK(cudaMalloc(&buf, 1024 * sizeof(float)));
    ncclComm_t comm = NULL;
    if (world > 1) {
        ncclUniqueId id;
        share_unique_id(&id, rank, world);
        NCCL_CHECK(ncclCommInitRank(&comm, world, id, rank));
    }
    for (int i = 0; i < n; i++) {
        CUDA_CHECK(cudaMemsetAsync(buf, i & 0xff, 256, stream));
        if (rank == victim && i == n - 1 && mode != "ok") {
            CUDA_CHECK(cudaStreamSynchronize(stream));
            if (mode == "kill")
                raise(SIGKILL);
            if (mode == "term")
                raise(SIGTERM);
            if (mode == "stop")
                raise(SIGSTOP);
            if (mode == "exit")
                exit(3);
            if (mode == "busy") {
                struct timespec t0, t;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                volatile unsigned long spin = 0;
                do {
                    for (int k = 0; k < 1000000; k++)
                        spin += (unsigned long)k;
                    clock_gettime(CLOCK_MONOTONIC, &t);
                } while (t.tv_sec - t0.tv_sec < 6);
            }
        }
        if (comm)
            NCCL_CHECK(ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (comm)
        ncclCommDestroy(comm);
    return 0;
}
