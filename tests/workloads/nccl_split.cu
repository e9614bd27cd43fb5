// ncclCommSplit and ncclCommShrink on a job of WORLD_SIZE ranks (one per
// process; RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT as for torchrun),
// with the new communicators' sizes, ranks and small collectives checked on
// the host:
//   halves  color = rank % 2, key = -rank: ranks in reverse order
//   tail    color NCCL_SPLIT_NOCOLOR on rank 0 (it gets no communicator),
//           0 elsewhere, key = rank
//   again   halves split again with one color: same members, parent = halves
//   shrunk  the world without its last rank (ncclCommShrink; that rank does
//           not take part)
// Prints "nccl_split rank R: K checks, F failed"; exits 1 on a failure.
#include <vector>

#include "nccl_boot.h"

static int rank, world, checks, failures;
static cudaStream_t stream;
static int *dsend, *drecv;

static void expect(bool ok, const char *what, long got, long want)
{
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "rank %d: %s: got %ld, expected %ld\n", rank, what, got, want);
    }
}

// Check a communicator's size and this rank's place, then all-gather the
// world ranks of its members (in comm-rank order) and all-reduce their sum.
static void check_comm(ncclComm_t comm, const std::vector<int> &members, const char *name)
{
    int n, r, want_rank = -1;
    for (size_t i = 0; i < members.size(); i++)
        if (members[i] == rank)
            want_rank = (int)i;
    NCCL_CHECK(ncclCommCount(comm, &n));
    NCCL_CHECK(ncclCommUserRank(comm, &r));
    char what[128];
    snprintf(what, sizeof what, "%s: size", name);
    expect(n == (int)members.size(), what, n, (long)members.size());
    snprintf(what, sizeof what, "%s: rank", name);
    expect(r == want_rank, what, r, want_rank);

    CUDA_CHECK(cudaMemcpy(dsend, &rank, sizeof rank, cudaMemcpyHostToDevice));
    NCCL_CHECK(ncclAllGather(dsend, drecv, 1, ncclInt32, comm, stream));
    std::vector<int> got(n);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(got.data(), drecv, n * sizeof(int), cudaMemcpyDeviceToHost));
    snprintf(what, sizeof what, "%s: all-gathered world rank", name);
    for (int i = 0; i < n && i < (int)members.size(); i++)
        expect(got[i] == members[i], what, got[i], members[i]);

    int sum = 0, out = -1;
    for (int m : members)
        sum += m;
    NCCL_CHECK(ncclAllReduce(dsend, drecv, 1, ncclInt32, ncclSum, comm, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(&out, drecv, sizeof out, cudaMemcpyDeviceToHost));
    snprintf(what, sizeof what, "%s: all-reduced sum of world ranks", name);
    expect(out == sum, what, out, sum);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        printf("usage: nccl_split (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set; WORLD_SIZE >= 2)\n");
        return strcmp(argv[1], "--help") ? 2 : 0;
    }
    rank = env_int("RANK", 0);
    world = env_int("WORLD_SIZE", 1);
    int ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    CUDA_CHECK(cudaStreamCreate(&stream));
    CUDA_CHECK(cudaMalloc(&dsend, 4096));
    CUDA_CHECK(cudaMalloc(&drecv, 4096));
    ncclUniqueId id;
    share_unique_id(&id, rank, world);
    ncclComm_t comm;
    NCCL_CHECK(ncclCommInitRank(&comm, world, id, rank));

    std::vector<int> all, halves, tail, shrunk;
    for (int r = 0; r < world; r++)
        all.push_back(r);
    for (int r = world - 1; r >= 0; r--)
        if (r % 2 == rank % 2)
            halves.push_back(r);
    for (int r = 1; r < world; r++)
        tail.push_back(r);
    for (int r = 0; r < world - 1; r++)
        shrunk.push_back(r);
    check_comm(comm, all, "world");

    ncclComm_t h, t, again, s = NULL;
    NCCL_CHECK(ncclCommSplit(comm, rank % 2, -rank, &h, NULL));
    check_comm(h, halves, "halves");

    NCCL_CHECK(ncclCommSplit(comm, rank == 0 ? NCCL_SPLIT_NOCOLOR : 0, rank, &t, NULL));
    expect((rank == 0) == (t == NULL), "tail: NCCL_SPLIT_NOCOLOR gives NULL", t == NULL, rank == 0);
    if (t)
        check_comm(t, tail, "tail");

    NCCL_CHECK(ncclCommSplit(h, 0, 0, &again, NULL));
    check_comm(again, halves, "again");

    // p2p on a split communicator: its rank 0 sends to its last rank
    int hn, hr;
    NCCL_CHECK(ncclCommCount(h, &hn));
    NCCL_CHECK(ncclCommUserRank(h, &hr));
    if (hn > 1 && (hr == 0 || hr == hn - 1)) {
        int v = 500 + rank, got = -1;
        CUDA_CHECK(cudaMemcpy(dsend, &v, sizeof v, cudaMemcpyHostToDevice));
        if (hr == 0)
            NCCL_CHECK(ncclSend(dsend, 1, ncclInt32, hn - 1, h, stream));
        else
            NCCL_CHECK(ncclRecv(drecv, 1, ncclInt32, 0, h, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (hr == hn - 1) {
            CUDA_CHECK(cudaMemcpy(&got, drecv, sizeof got, cudaMemcpyDeviceToHost));
            expect(got == 500 + halves[0], "halves: received from its rank 0", got, 500 + halves[0]);
        }
    }

    if (rank != world - 1) {
        int excluded = world - 1;
        NCCL_CHECK(ncclCommShrink(comm, &excluded, 1, &s, NULL, NCCL_SHRINK_DEFAULT));
        check_comm(s, shrunk, "shrunk");
    }

    for (ncclComm_t c : { s, again, t, h, comm })
        if (c)
            NCCL_CHECK(ncclCommDestroy(c));
    printf("nccl_split rank %d: %d checks, %d failed\n", rank, checks, failures);
    return failures ? 1 : 0;
}
