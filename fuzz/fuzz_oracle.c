/* Fuzzing the oracle reader and matcher (estimator/oracle.c): the input is
 * a durations file; what it accepts prices a small job's worth of ops (GEMMs,
 * a launch, collectives, host calls on two ranks), globs included. Seeds:
 * the examples of docs/oracle-format.md. */
#include "fuzz.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/trace_format.h"

#include <stdlib.h>
#include <string.h>

static const struct maya_gpu_spec *gpu;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    gpu = maya_hwspecs_find_gpu(fuzz_hwspecs(), "h100");
    return gpu ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("oracle.txt", data, size);
    struct est_config cfg = { .gpu = gpu, .oracle_path = path };
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = EST_ORACLE;
    struct estimator *e;
    if (est_create(&cfg, &e) < 0)
        return 0;
    struct maya_rec_gemm g;
    memset(&g, 0, sizeof g);
    g.h = (struct maya_rec_hdr){ MAYA_REC_GEMM, 0, sizeof g };
    g.m = g.n = g.k = 1024;
    g.batch = 1;
    struct maya_rec_coll c;
    memset(&c, 0, sizeof c);
    c.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof c };
    c.op = MAYA_COLL_ALLREDUCE;
    c.count = c.bytes = 1 << 20;
    c.nranks = 2;
    struct maya_rec_call call;
    memset(&call, 0, sizeof call);
    call.h = (struct maya_rec_hdr){ MAYA_REC_CALL, 0, sizeof call };
    static const char *names[] = {
        "cublasSgemm_v2", "ncclAllReduce", "cudaMemcpyAsync", "cudaLaunchKernel",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float)",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    };
    for (int rank = 0; rank < 2; rank++)
        for (uint64_t seq = 0; seq < 12; seq++) {
            const struct maya_rec_hdr *rec = seq % 3 == 0 ? &g.h : seq % 3 == 1 ? &c.h : &call.h;
            ((struct maya_rec_call *)rec)->call.seq = seq;
            struct est_op op = { .rec = rec, .api = names[seq % (sizeof names / sizeof names[0])], .rank = rank,
                                 .kernel_name = names[4 + seq % 2], .coll_nodes = 1, .coll_ranks_per_node = 2 };
            struct est_result r;
            est_estimate(e, &op, &r);
        }
    est_destroy(e);
    return 0;
}
