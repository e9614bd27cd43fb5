// A job whose ranks disagree about their NCCL calls, the bugs that hang real
// jobs, one per MODE. Each rank issues 3 small all-reduces (4 int32) and
// reports the first NCCL error on stderr, then exits 1 (0 if all succeeded).
//   ok         all ranks agree
//   count      rank 2 gives count 8 to all-reduce #1
//   skip       rank 1 skips all-reduce #1 (and issues #2)
//   skip-last  rank 1 skips all-reduce #2, then destroys its communicator
//   root-skip  rank 0 skips all-reduce #2, then destroys its communicator
//   exit       rank 1 exits before all-reduce #1 without destroying anything
//   hang       rank 1 skips all-reduce #2 and sleeps 4 s (the others time out)
//   slow       rank 1 sleeps 1.5 s before all-reduce #1 (no error)
//   p2p        rank 0 sends 4 int32 to rank 1, which expects 8
//   large      large all-reduces (1M floats), rank 1's count one more
//              (nothing moves, so no error here: the traces show it)
//   init-nranks  rank 3 calls ncclCommInitRank with nranks 5
//   init-dup     rank 3 calls ncclCommInitRank as rank 2
//   init-missing rank 3 gets the unique id but exits without joining
// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT as for torchrun.
#include <string>

#include "nccl_boot.h"

int main(int argc, char **argv)
{
    std::string mode = argc > 1 ? argv[1] : "";
    const char *modes[] = { "ok", "count", "skip", "skip-last", "root-skip", "exit", "hang", "slow", "p2p", "large",
                            "init-nranks", "init-dup", "init-missing" };
    bool known = false;
    for (const char *m : modes)
        known |= mode == m;
    if (!known) {
        fprintf(stderr, "usage: nccl_mismatch MODE (ok count skip skip-last root-skip exit hang slow p2p large "
                        "init-nranks init-dup init-missing)\n");
        return 2;
    }
    int rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1), ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    size_t large = 1 << 20;
    void *send, *recv;
    CUDA_CHECK(cudaMalloc(&send, (large + 1) * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&recv, (large + 1) * sizeof(float)));
    ncclUniqueId id;
    share_unique_id(&id, rank, world);
    ncclComm_t comm;
    if (mode == "init-missing" && rank == 3)
        return 0;
    int init_world = mode == "init-nranks" && rank == 3 ? world + 1 : world;
    int init_rank = mode == "init-dup" && rank == 3 ? 2 : rank;
    NCCL_CHECK(ncclCommInitRank(&comm, init_world, id, init_rank));

    ncclResult_t r = ncclSuccess;
    const char *what = "";
    if (mode == "p2p") {
        what = rank == 0 ? "ncclSend" : "ncclRecv";
        if (rank == 0)
            r = ncclSend(send, 4, ncclInt32, 1, comm, stream);
        else if (rank == 1)
            r = ncclRecv(recv, 8, ncclInt32, 0, comm, stream);
    }
    for (int i = 0; i < 3 && r == ncclSuccess && mode != "p2p"; i++) {
        size_t count = 4;
        ncclDataType_t type = ncclInt32;
        if (mode == "count" && rank == 2 && i == 1)
            count = 8;
        if (mode == "large") {
            count = large + (rank == 1);
            type = ncclFloat32;
        }
        if (((mode == "skip" && i == 1) || (mode == "skip-last" && i == 2)) && rank == 1)
            continue;
        if (mode == "root-skip" && rank == 0 && i == 2)
            continue;
        if (mode == "exit" && rank == 1 && i == 1) {
            printf("rank 1 exits\n");
            fflush(stdout);
            exit(0);
        }
        if (mode == "hang" && rank == 1 && i == 2) {
            sleep(4);
            continue;
        }
        if (mode == "slow" && rank == 1 && i == 1)
            usleep(1500 * 1000);
        what = "ncclAllReduce";
        r = ncclAllReduce(send, recv, count, type, ncclSum, comm, stream);
        if (r == ncclSuccess)
            CUDA_CHECK(cudaStreamSynchronize(stream));
        else
            fprintf(stderr, "rank %d: %s #%d returned %s\n", rank, what, i, ncclGetErrorString(r));
    }
    if (r != ncclSuccess && mode == "p2p")
        fprintf(stderr, "rank %d: %s returned %s\n", rank, what, ncclGetErrorString(r));
    // An error leaves the communicator unusable: abort it, as NCCL programs do.
    NCCL_CHECK(r == ncclSuccess ? ncclCommDestroy(comm) : ncclCommAbort(comm));
    printf("rank %d: %s\n", rank, r == ncclSuccess ? "done" : "failed");
    return r == ncclSuccess ? 0 : 1;
}
