// Every NCCL collective and send/recv, with small buffers whose results are
// copied back and checked on the host (on a GPU and under maya alike: small
// collectives carry their data between emulated ranks), then one large
// all-reduce (no data checked: under maya large ones only move time).
//
// Two ways to run:
//   one rank per process:  RANK, WORLD_SIZE, LOCAL_RANK (device), MASTER_ADDR,
//                          MASTER_PORT (rank 0 hands out the unique id there)
//   one process, N devices: nccl_colls --devices N [--group-init]
//                          (ncclCommInitAll, or ncclCommInitRank per device
//                          inside ncclGroupStart/End)
// Options: --nonblocking  init with a non-blocking ncclConfig_t and poll
//          --scalable     ncclCommInitRankScalable instead of ncclCommInitRankConfig
//          --large COUNT  elements of the large all-reduce (default 4M floats)
// Prints "nccl_colls rank R/N: K checks passed" per rank; exits 1 on a failure.
#include <cuda_fp16.h>
#include <vector>

#include "nccl_boot.h"

struct Rank {
    int rank, dev;
    ncclComm_t comm;
    cudaStream_t stream;
    void *send, *recv;        // small device buffers
    std::vector<char> host;   // results copied back
};

static int nranks;
static std::vector<Rank> ranks;  // the ranks this process drives
static int checks, failures;

static const size_t SMALL = 4096;  // bytes in each small buffer

// Run fn on every local rank, as one NCCL group (how one thread drives
// several devices; with one rank it is an ordinary call).
template <class F> static void each(F fn)
{
    NCCL_CHECK(ncclGroupStart());
    for (Rank &r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        fn(r);
    }
    NCCL_CHECK(ncclGroupEnd());
}

template <class T> static void put(Rank &r, void *dst, const std::vector<T> &v)
{
    CUDA_CHECK(cudaSetDevice(r.dev));
    CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <class T> static std::vector<T> get(Rank &r, size_t n)
{
    std::vector<T> v(n);
    CUDA_CHECK(cudaSetDevice(r.dev));
    CUDA_CHECK(cudaStreamSynchronize(r.stream));
    CUDA_CHECK(cudaMemcpy(v.data(), r.recv, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

static void expect(const Rank &r, bool ok, const char *what, double got, double want)
{
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "rank %d: %s: got %g, expected %g\n", r.rank, what, got, want);
    }
}

template <class T> static void expect_all(const Rank &r, const std::vector<T> &v, double want, const char *what)
{
    for (size_t i = 0; i < v.size(); i++)
        if ((double)v[i] != want) {
            expect(r, false, what, (double)v[i], want);
            return;
        }
    expect(r, true, what, want, want);
}

static void check_allreduce()
{
    const int n = 4;
    each([&](Rank &r) {
        put(r, r.send, std::vector<int>(n, r.rank + 1));
        NCCL_CHECK(ncclAllReduce(r.send, r.recv, n, ncclInt32, ncclSum, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        expect_all(r, get<int>(r, n), nranks * (nranks + 1) / 2, "all-reduce sum of rank+1 (int32)");

    const ncclRedOp_t ops[] = { ncclMax, ncclMin, ncclProd, ncclAvg };
    double fact = 1;
    for (int i = 1; i <= nranks; i++)
        fact *= i;
    const double want[] = { (double)nranks, 1.0, fact, (nranks + 1) / 2.0 };
    const char *names[] = { "all-reduce max (float)", "all-reduce min (float)", "all-reduce prod (float)",
                            "all-reduce avg (float)" };
    for (int k = 0; k < 4; k++) {
        each([&](Rank &r) {
            put(r, r.send, std::vector<float>(n, (float)(r.rank + 1)));
            NCCL_CHECK(ncclAllReduce(r.send, r.recv, n, ncclFloat32, ops[k], r.comm, r.stream));
        });
        for (Rank &r : ranks)
            expect_all(r, get<float>(r, n), want[k], names[k]);
    }

    // half precision, in place
    each([&](Rank &r) {
        put(r, r.recv, std::vector<__half>(n, __float2half((float)(r.rank + 1))));
        NCCL_CHECK(ncclAllReduce(r.recv, r.recv, n, ncclFloat16, ncclSum, r.comm, r.stream));
    });
    for (Rank &r : ranks) {
        std::vector<__half> v = get<__half>(r, n);
        std::vector<float> f;
        for (__half h : v)
            f.push_back(__half2float(h));
        expect_all(r, f, nranks * (nranks + 1) / 2, "all-reduce sum in place (float16)");
    }

    // PreMulSum: each rank scales its 1.0 by rank+1
    each([&](Rank &r) {
        float scalar = (float)(r.rank + 1);
        ncclRedOp_t op;
        NCCL_CHECK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, r.comm));
        put(r, r.send, std::vector<float>(n, 1.0f));
        NCCL_CHECK(ncclAllReduce(r.send, r.recv, n, ncclFloat32, op, r.comm, r.stream));
        NCCL_CHECK(ncclRedOpDestroy(op, r.comm));
    });
    for (Rank &r : ranks)
        expect_all(r, get<float>(r, n), nranks * (nranks + 1) / 2, "all-reduce PreMulSum(rank+1) of 1.0");

    // barrier(): a one-element all-reduce
    each([&](Rank &r) {
        put(r, r.send, std::vector<int>(1, 1));
        NCCL_CHECK(ncclAllReduce(r.send, r.recv, 1, ncclInt32, ncclSum, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        expect_all(r, get<int>(r, 1), nranks, "barrier (1-element all-reduce)");
}

static void check_rooted()
{
    const int n = 3, root = nranks - 1;
    each([&](Rank &r) {
        put(r, r.send, std::vector<int>(n, r.rank == root ? 1000 + root : -1));
        NCCL_CHECK(ncclBroadcast(r.send, r.recv, n, ncclInt32, root, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        expect_all(r, get<int>(r, n), 1000 + root, "broadcast from the last rank");

    each([&](Rank &r) {
        put(r, r.recv, std::vector<int>(n, r.rank == 0 ? 77 : r.rank));
        NCCL_CHECK(ncclBcast(r.recv, n, ncclInt32, 0, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        expect_all(r, get<int>(r, n), 77, "ncclBcast from rank 0 (in place)");

    each([&](Rank &r) {
        put(r, r.send, std::vector<int>(n, r.rank));
        put(r, r.recv, std::vector<int>(n, -5));
        NCCL_CHECK(ncclReduce(r.send, r.recv, n, ncclInt32, ncclSum, root, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        expect_all(r, get<int>(r, n), r.rank == root ? nranks * (nranks - 1) / 2 : -5,
                   "reduce sum of ranks to the last rank (others untouched)");

    each([&](Rank &r) {
        put(r, r.send, std::vector<int>(1, 10 * r.rank));
        NCCL_CHECK(ncclGather(r.send, r.recv, 1, ncclInt32, 0, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        if (r.rank == 0) {
            std::vector<int> v = get<int>(r, nranks);
            for (int i = 0; i < nranks; i++)
                expect(r, v[i] == 10 * i, "gather of 10*rank to rank 0", v[i], 10 * i);
        }

    each([&](Rank &r) {
        std::vector<int> v(nranks);
        for (int i = 0; i < nranks; i++)
            v[i] = r.rank == 0 ? 7 * i : -1;
        put(r, r.send, v);
        NCCL_CHECK(ncclScatter(r.send, r.recv, 1, ncclInt32, 0, r.comm, r.stream));
    });
    for (Rank &r : ranks)
        expect_all(r, get<int>(r, 1), 7 * r.rank, "scatter of 7*i from rank 0");
}

static void check_all_to_all()
{
    each([&](Rank &r) {
        put(r, r.send, std::vector<int>(1, r.rank));
        NCCL_CHECK(ncclAllGather(r.send, r.recv, 1, ncclInt32, r.comm, r.stream));
    });
    for (Rank &r : ranks) {
        std::vector<int> v = get<int>(r, nranks);
        for (int i = 0; i < nranks; i++)
            expect(r, v[i] == i, "all-gather of rank ids", v[i], i);
    }

    const int c = 2; // reduce-scatter: send[i] = i + 100*rank
    each([&](Rank &r) {
        std::vector<int> v(c * nranks);
        for (int i = 0; i < c * nranks; i++)
            v[i] = i + 100 * r.rank;
        put(r, r.send, v);
        NCCL_CHECK(ncclReduceScatter(r.send, r.recv, c, ncclInt32, ncclSum, r.comm, r.stream));
    });
    for (Rank &r : ranks) {
        std::vector<int> v = get<int>(r, c);
        for (int j = 0; j < c; j++) {
            int want = nranks * (c * r.rank + j) + 100 * nranks * (nranks - 1) / 2;
            expect(r, v[j] == want, "reduce-scatter of i+100*rank", v[j], want);
        }
    }

    each([&](Rank &r) {
        std::vector<int> v(nranks);
        for (int j = 0; j < nranks; j++)
            v[j] = 100 * r.rank + j;
        put(r, r.send, v);
        NCCL_CHECK(ncclAlltoAll(r.send, r.recv, 1, ncclInt32, r.comm, r.stream));
    });
    for (Rank &r : ranks) {
        std::vector<int> v = get<int>(r, nranks);
        for (int i = 0; i < nranks; i++)
            expect(r, v[i] == 100 * i + r.rank, "all-to-all of 100*rank+dest", v[i], 100 * i + r.rank);
    }
}

static void check_send_recv()
{
    // a ring: send to the next rank, receive from the previous one, twice
    for (int round = 0; round < 2; round++) {
        each([&](Rank &r) {
            put(r, r.send, std::vector<int>(5, 1000 * round + r.rank));
            NCCL_CHECK(ncclSend(r.send, 5, ncclInt32, (r.rank + 1) % nranks, r.comm, r.stream));
            NCCL_CHECK(ncclRecv(r.recv, 5, ncclInt32, (r.rank + nranks - 1) % nranks, r.comm, r.stream));
        });
        for (Rank &r : ranks)
            expect_all(r, get<int>(r, 5), 1000 * round + (r.rank + nranks - 1) % nranks,
                       "send/recv ring value from the previous rank");
    }
}

// A large all-reduce on memory from ncclMemAlloc, registered with the
// communicator and as a window, as NCCL's zero-copy paths would have it.
static void check_large(size_t count)
{
    std::vector<void *> bufs, handles;
    std::vector<ncclWindow_t> wins;
    for (Rank &r : ranks) {
        void *buf, *handle;
        ncclWindow_t win;
        CUDA_CHECK(cudaSetDevice(r.dev));
        NCCL_CHECK(ncclMemAlloc(&buf, count * sizeof(float)));
        NCCL_CHECK(ncclCommRegister(r.comm, buf, count * sizeof(float), &handle));
        NCCL_CHECK(ncclCommWindowRegister(r.comm, buf, count * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC));
        bufs.push_back(buf);
        handles.push_back(handle);
        wins.push_back(win);
    }
    int i = 0;
    each([&](Rank &r) {
        NCCL_CHECK(ncclAllReduce(bufs[i], bufs[i], count, ncclFloat32, ncclSum, r.comm, r.stream));
        i++;
    });
    for (size_t k = 0; k < ranks.size(); k++) {
        Rank &r = ranks[k];
        CUDA_CHECK(cudaSetDevice(r.dev));
        CUDA_CHECK(cudaStreamSynchronize(r.stream));
        NCCL_CHECK(ncclCommWindowDeregister(r.comm, wins[k]));
        NCCL_CHECK(ncclCommDeregister(r.comm, handles[k]));
        NCCL_CHECK(ncclMemFree(bufs[k]));
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: nccl_colls [--devices N [--group-init]] [--nonblocking] [--scalable] [--large COUNT]\n"
               "Runs every NCCL collective and send/recv on small buffers and checks the results on the\n"
               "host, then one large all-reduce of COUNT floats (default 4194304).\n"
               "Without --devices each process is one rank: RANK, WORLD_SIZE, LOCAL_RANK (its device),\n"
               "MASTER_ADDR and MASTER_PORT (where rank 0 hands out the unique id) must be set.\n"
               "  --devices N    one process drives devices 0..N-1 (ncclCommInitAll)\n"
               "  --group-init   with --devices: ncclCommInitRank per device inside ncclGroupStart/End\n"
               "  --nonblocking  make communicators with a non-blocking ncclConfig_t\n"
               "  --scalable     one rank per process: ncclCommInitRankScalable (one id)\n");
}

static void init_comms(int devices, bool group_init, bool nonblocking, bool scalable)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = nonblocking ? 0 : 1;
    config.commName = "nccl_colls";
    if (devices > 0 && !group_init) {
        std::vector<ncclComm_t> comms(devices);
        NCCL_CHECK(ncclCommInitAll(comms.data(), devices, NULL));
        for (int i = 0; i < devices; i++)
            ranks[i].comm = comms[i];
    } else {
        ncclUniqueId id;
        if (devices > 0)
            NCCL_CHECK(ncclGetUniqueId(&id));
        else
            share_unique_id(&id, ranks[0].rank, nranks);
        if (devices == 0 && scalable) {
            NCCL_CHECK(ncclCommInitRankScalable(&ranks[0].comm, nranks, ranks[0].rank, 1, &id, &config));
        } else if (devices == 0) { // one rank: no group, so a non-blocking init returns at once
            NCCL_CHECK(ncclCommInitRankConfig(&ranks[0].comm, nranks, id, ranks[0].rank, &config));
        } else {
            each([&](Rank &r) {
                NCCL_CHECK(ncclCommInitRankConfig(&r.comm, nranks, id, r.rank, &config));
            });
        }
    }
    for (Rank &r : ranks) { // a non-blocking init finishes in the background
        ncclResult_t state;
        do
            NCCL_CHECK(ncclCommGetAsyncError(r.comm, &state));
        while (state == ncclInProgress);
        NCCL_CHECK(state);
    }
}

int main(int argc, char **argv)
{
    int devices = 0;
    bool group_init = false, nonblocking = false, scalable = false;
    size_t large = 4u << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--devices") && i + 1 < argc)
            devices = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--group-init"))
            group_init = true;
        else if (!strcmp(argv[i], "--nonblocking"))
            nonblocking = true;
        else if (!strcmp(argv[i], "--scalable"))
            scalable = true;
        else if (!strcmp(argv[i], "--large") && i + 1 < argc)
            large = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (devices > 0) {
        nranks = devices;
        for (int i = 0; i < devices; i++)
            ranks.push_back(Rank{ i, i });
    } else {
        nranks = env_int("WORLD_SIZE", 1);
        int ndev = 0;
        CUDA_CHECK(cudaGetDeviceCount(&ndev));
        ranks.push_back(Rank{ env_int("RANK", 0), env_int("LOCAL_RANK", 0) % ndev });
    }
    for (Rank &r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        CUDA_CHECK(cudaStreamCreate(&r.stream));
        CUDA_CHECK(cudaMalloc(&r.send, SMALL));
        CUDA_CHECK(cudaMalloc(&r.recv, SMALL));
    }
    init_comms(devices, group_init, nonblocking, scalable);
    for (Rank &r : ranks) {
        int count, user_rank, dev;
        NCCL_CHECK(ncclCommCount(r.comm, &count));
        NCCL_CHECK(ncclCommUserRank(r.comm, &user_rank));
        NCCL_CHECK(ncclCommCuDevice(r.comm, &dev));
        expect(r, count == nranks, "ncclCommCount", count, nranks);
        expect(r, user_rank == r.rank, "ncclCommUserRank", user_rank, r.rank);
        expect(r, dev == r.dev, "ncclCommCuDevice", dev, r.dev);
    }

    check_allreduce();
    check_rooted();
    check_all_to_all();
    check_send_recv();
    check_large(large);

    for (Rank &r : ranks) {
        NCCL_CHECK(ncclCommFinalize(r.comm));
        NCCL_CHECK(ncclCommDestroy(r.comm));
    }
    for (Rank &r : ranks)
        printf("nccl_colls rank %d/%d: %d checks, %d failed\n", r.rank, nranks, checks, failures);
    return failures ? 1 : 0;
}
