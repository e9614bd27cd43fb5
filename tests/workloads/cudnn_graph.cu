// cuDNN's backend (graph) API as cuDNN's frontend drives it: a convolution
// graph, an attention graph built from matmuls, a scale, a causal mask,
// softmax and a second matmul (the frontend's SDPA), an attention through
// cuDNN's own SDPA operation, and a matmul with a fused bias; each through
// heuristics (count first, then caller-made engine configs), an execution
// plan and a variant pack. Then misuse the real library refuses, each
// printed with the status it got.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cudnn.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECK(x) do { cudnnStatus_t s_ = (x); if (s_ != CUDNN_STATUS_SUCCESS) { \
    char msg_[256]; cudnnGetLastErrorString(msg_, sizeof msg_); \
    fprintf(stderr, "line %d: %s: %s (%s)\n", __LINE__, #x, cudnnGetErrorString(s_), msg_); exit(1); } } while (0)

typedef cudnnBackendDescriptor_t Desc;
static cudnnHandle_t handle;

static Desc make(cudnnBackendDescriptorType_t t)
{
    Desc d;
    CHECK(cudnnBackendCreateDescriptor(t, &d));
    return d;
}

static void set(Desc d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
    CHECK(cudnnBackendSetAttribute(d, a, t, n, v));
}

static void setd(Desc d, cudnnBackendAttributeName_t a, Desc v)
{
    set(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

// A tensor: dims and strides (elements), its uid; virtual ones live only in the kernel.
static Desc tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                   cudnnDataType_t t = CUDNN_DATA_HALF, bool virt = false, bool by_value = false)
{
    Desc d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t align = 16;
    set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t);
    set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, (int64_t)dims.size(), dims.data());
    set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, (int64_t)strides.size(), strides.data());
    set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    if (by_value)
        set(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    CHECK(cudnnBackendFinalize(d));
    return d;
}

// Packed strides of dims (row-major).
static std::vector<int64_t> packed(std::vector<int64_t> dims)
{
    std::vector<int64_t> s(dims.size());
    int64_t n = 1;
    for (size_t i = dims.size(); i-- > 0;)
        s[i] = n, n *= dims[i];
    return s;
}

static Desc pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc y, int64_t axis = -1)
{
    Desc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (axis >= 0)
        set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    CHECK(cudnnBackendFinalize(pw));
    Desc op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b)
        setd(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    CHECK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(pw);
    return op;
}

static Desc select_op(Desc x, Desc b, Desc t, Desc y)
{
    Desc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnPointwiseMode_t mode = CUDNN_POINTWISE_BINARY_SELECT;
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    CHECK(cudnnBackendFinalize(pw));
    Desc op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t);
    setd(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    CHECK(cudnnBackendFinalize(op));
    return op;
}

static Desc reduction(cudnnReduceTensorOp_t r, Desc x, Desc y)
{
    Desc red = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &r);
    set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    CHECK(cudnnBackendFinalize(red));
    Desc op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    setd(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    setd(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    setd(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red);
    CHECK(cudnnBackendFinalize(op));
    return op;
}

static Desc matmul(Desc a, Desc b, Desc c)
{
    Desc mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    CHECK(cudnnBackendFinalize(mm));
    Desc op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    setd(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    setd(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    setd(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    setd(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    CHECK(cudnnBackendFinalize(op));
    return op;
}

// Graph -> heuristics -> first engine config -> plan; prints what it found.
static Desc plan_for(std::vector<Desc> ops, const char *name, int64_t *workspace)
{
    Desc graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, (int64_t)ops.size(), ops.data());
    CHECK(cudnnBackendFinalize(graph));
    int64_t engines = 0, n = 0;
    CHECK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                   &engines));
    Desc heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    setd(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CHECK(cudnnBackendFinalize(heur));
    int64_t count = 0;
    CHECK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                   NULL));
    std::vector<Desc> cfgs(count);
    for (auto &c : cfgs)
        c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    CHECK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &n,
                                   cfgs.data()));
    Desc engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    CHECK(cudnnBackendGetAttribute(cfgs[0], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine));
    int64_t index = -1;
    CHECK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index));
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t nnotes = -1;
    CHECK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                   CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nnotes, notes));
    Desc plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    setd(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[0]);
    CHECK(cudnnBackendFinalize(plan));
    CHECK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                   workspace));
    printf("%s: %lld engines, %lld configs, engine %lld, %lld notes, workspace %lld\n", name, (long long)engines,
           (long long)count, (long long)index, (long long)nnotes, (long long)*workspace);
    // the program may drop its descriptors once the plan is built
    for (auto &c : cfgs)
        cudnnBackendDestroyDescriptor(c);
    cudnnBackendDestroyDescriptor(engine);
    cudnnBackendDestroyDescriptor(heur);
    cudnnBackendDestroyDescriptor(graph);
    return plan;
}

static Desc pack(std::vector<int64_t> uids, std::vector<void *> ptrs, void *workspace)
{
    Desc p = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, (int64_t)uids.size(), uids.data());
    set(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, (int64_t)ptrs.size(), ptrs.data());
    set(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    CHECK(cudnnBackendFinalize(p));
    return p;
}

int main()
{
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    CHECK(cudnnCreate(&handle));
    CHECK(cudnnSetStream(handle, stream));
    void *mem[6], *ws;
    for (int i = 0; i < 6; i++)
        CHECK_CUDA(cudaMalloc(&mem[i], 64 << 20));
    CHECK_CUDA(cudaMalloc(&ws, 16 << 20));
    int64_t wsize = 0;

    // 1. convolution, NHWC: x [8, 64, 56, 56] * w [128, 64, 3, 3], pad 1 -> y [8, 128, 56, 56]
    {
        Desc x = tensor(1, { 8, 64, 56, 56 }, { 64 * 56 * 56, 1, 56 * 64, 64 });
        Desc w = tensor(2, { 128, 64, 3, 3 }, { 64 * 9, 1, 3 * 64, 64 });
        Desc y = tensor(3, { 8, 128, 56, 56 }, { 128 * 56 * 56, 1, 56 * 128, 128 });
        Desc conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
        int64_t nsp = 2, pad[2] = { 1, 1 }, one[2] = { 1, 1 };
        cudnnDataType_t ct = CUDNN_DATA_FLOAT;
        cudnnConvolutionMode_t cm = CUDNN_CROSS_CORRELATION;
        set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp);
        set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
        set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &cm);
        set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
        set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
        set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one);
        set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one);
        CHECK(cudnnBackendFinalize(conv));
        Desc op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
        float alpha = 1, beta = 0;
        setd(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
        setd(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
        setd(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
        setd(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
        set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
        CHECK(cudnnBackendFinalize(op));
        // the graph keeps copies: the program's descriptors may go
        cudnnBackendDestroyDescriptor(conv);
        cudnnBackendDestroyDescriptor(x);
        Desc plan = plan_for({ op }, "conv", &wsize);
        Desc vp = pack({ 1, 2, 3 }, { mem[0], mem[1], mem[2] }, ws);
        CHECK(cudnnBackendExecute(handle, plan, vp));
        // misuse: a variant pack without the output's pointer
        Desc short_vp = pack({ 1, 2 }, { mem[0], mem[1] }, ws);
        printf("status missing_pointer %d\n", cudnnBackendExecute(handle, plan, short_vp));
    }

    // 2. attention the frontend's way: b 2, h 8, s 512, d 64, causal, scale 1/8
    {
        const int64_t b = 2, h = 8, s = 512, d = 64;
        Desc q = tensor(10, { b, h, s, d }, packed({ b, h, s, d }));
        Desc kt = tensor(11, { b, h, d, s }, { h * s * d, s * d, 1, d }); // K [b,h,s,d] seen as K^T
        Desc v = tensor(12, { b, h, s, d }, packed({ b, h, s, d }));
        Desc o = tensor(13, { b, h, s, d }, packed({ b, h, s, d }));
        Desc scale = tensor(14, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, CUDNN_DATA_FLOAT, false, true);
        Desc neg_inf = tensor(15, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, CUDNN_DATA_FLOAT, false, true);
        std::vector<int64_t> sd = { b, h, s, s }, rd = { b, h, s, 1 };
        int64_t uid = 100;
        auto virt = [&](std::vector<int64_t> dims) {
            return tensor(uid++, dims, packed(dims), CUDNN_DATA_FLOAT, true);
        };
        Desc S = virt(sd), S2 = virt(sd), row = virt(sd), col = virt(sd), keep = virt(sd), S3 = virt(sd);
        Desc mx = virt(rd), S4 = virt(sd), E = virt(sd), sum = virt(rd), P = virt(sd);
        Desc Ph = tensor(uid++, sd, packed(sd), CUDNN_DATA_HALF, true);
        std::vector<Desc> ops = {
            matmul(q, kt, S),
            pointwise(CUDNN_POINTWISE_MUL, S, scale, S2),
            pointwise(CUDNN_POINTWISE_GEN_INDEX, S2, NULL, row, 2),
            pointwise(CUDNN_POINTWISE_GEN_INDEX, S2, NULL, col, 3),
            pointwise(CUDNN_POINTWISE_CMP_GE, row, col, keep),
            select_op(S2, neg_inf, keep, S3),
            reduction(CUDNN_REDUCE_TENSOR_MAX, S3, mx),
            pointwise(CUDNN_POINTWISE_SUB, S3, mx, S4),
            pointwise(CUDNN_POINTWISE_EXP, S4, NULL, E),
            reduction(CUDNN_REDUCE_TENSOR_ADD, E, sum),
            pointwise(CUDNN_POINTWISE_DIV, E, sum, P),
            pointwise(CUDNN_POINTWISE_IDENTITY, P, NULL, Ph),
            matmul(Ph, v, o),
        };
        Desc plan = plan_for(ops, "sdpa graph", &wsize);
        float sc = 0.125f, ninf = -INFINITY;
        Desc vp = pack({ 10, 11, 12, 13, 14, 15 }, { mem[0], mem[1], mem[2], mem[3], &sc, &ninf }, ws);
        CHECK(cudnnBackendExecute(handle, plan, vp));
    }

    // 2a. the same with the operations cuDNN 9.20 added (the frontend of PyTorch 2.15 uses them):
    // a diagonal band mask (causal) and a softmax operation; their numbers are cuDNN's API (the
    // toolkit's 9.19 headers lack them)
    {
        const cudnnBackendDescriptorType_t DIAGONAL_BAND_MASK = (cudnnBackendDescriptorType_t)44,
                                           SOFTMAX = (cudnnBackendDescriptorType_t)45;
        const cudnnBackendAttributeName_t MASK_X = (cudnnBackendAttributeName_t)3000,
                                          MASK_Y = (cudnnBackendAttributeName_t)3006,
                                          SOFTMAX_X = (cudnnBackendAttributeName_t)3100,
                                          SOFTMAX_Y = (cudnnBackendAttributeName_t)3101;
        const int64_t b = 4, h = 16, s = 256, d = 128;
        std::vector<int64_t> qd = { b, h, s, d }, sd = { b, h, s, s };
        Desc q = tensor(60, qd, packed(qd)), kt = tensor(61, { b, h, d, s }, { h * s * d, s * d, 1, d });
        Desc v = tensor(62, qd, packed(qd)), o = tensor(63, qd, packed(qd));
        Desc scale = tensor(64, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, CUDNN_DATA_FLOAT, false, true);
        Desc S = tensor(300, sd, packed(sd), CUDNN_DATA_FLOAT, true), S2 = tensor(301, sd, packed(sd), CUDNN_DATA_FLOAT, true);
        Desc S3 = tensor(302, sd, packed(sd), CUDNN_DATA_FLOAT, true), P = tensor(303, sd, packed(sd), CUDNN_DATA_HALF, true);
        Desc mask = make(DIAGONAL_BAND_MASK);
        setd(mask, MASK_X, S2);
        setd(mask, MASK_Y, S3);
        CHECK(cudnnBackendFinalize(mask));
        Desc softmax = make(SOFTMAX);
        setd(softmax, SOFTMAX_X, S3);
        setd(softmax, SOFTMAX_Y, P);
        CHECK(cudnnBackendFinalize(softmax));
        Desc plan = plan_for({ matmul(q, kt, S), pointwise(CUDNN_POINTWISE_MUL, S, scale, S2), mask, softmax,
                               matmul(P, v, o) }, "sdpa graph 9.20", &wsize);
        float sc = 0.0883883f;
        Desc vp = pack({ 60, 61, 62, 63, 64 }, { mem[0], mem[1], mem[2], mem[3], &sc }, ws);
        CHECK(cudnnBackendExecute(handle, plan, vp));
    }

    // 2b. its backward pass the frontend's way: S = Q.K^T recomputed, P = exp(S * scale - stats),
    // dV = P^T.dO, dP = dO.V^T, dS = P * (dP - sum(dO * O)), dQ = dS.K, dK = dS^T.Q
    {
        const int64_t b = 2, h = 8, s = 512, d = 64;
        std::vector<int64_t> qd = { b, h, s, d }, sd = { b, h, s, s }, rd = { b, h, s, 1 };
        std::vector<int64_t> tr = { h * s * d, s * d, 1, d }; // [b, h, d, s] view of a [b, h, s, d] tensor
        std::vector<int64_t> st = { h * s * s, s * s, 1, s }; // transposed [b, h, s, s]
        Desc q = tensor(40, qd, packed(qd)), kt = tensor(41, { b, h, d, s }, tr), k = tensor(42, qd, packed(qd));
        Desc vt = tensor(43, { b, h, d, s }, tr), o = tensor(44, qd, packed(qd)), dO = tensor(45, qd, packed(qd));
        Desc stats = tensor(46, rd, packed(rd), CUDNN_DATA_FLOAT);
        Desc dQ = tensor(47, qd, packed(qd)), dK = tensor(48, qd, packed(qd)), dV = tensor(49, qd, packed(qd));
        Desc scale = tensor(50, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, CUDNN_DATA_FLOAT, false, true);
        int64_t uid = 200;
        auto virt = [&](std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t t) {
            return tensor(uid++, dims, strides, t, true);
        };
        Desc S = virt(sd, packed(sd), CUDNN_DATA_FLOAT), S2 = virt(sd, packed(sd), CUDNN_DATA_FLOAT);
        Desc S3 = virt(sd, packed(sd), CUDNN_DATA_FLOAT), P = virt(sd, packed(sd), CUDNN_DATA_FLOAT);
        Desc Pt = virt(sd, st, CUDNN_DATA_HALF), dP = virt(sd, packed(sd), CUDNN_DATA_FLOAT);
        Desc dOO = virt(qd, packed(qd), CUDNN_DATA_FLOAT), D = virt(rd, packed(rd), CUDNN_DATA_FLOAT);
        Desc dS0 = virt(sd, packed(sd), CUDNN_DATA_FLOAT), dS = virt(sd, packed(sd), CUDNN_DATA_FLOAT);
        Desc dSh = virt(sd, packed(sd), CUDNN_DATA_HALF), dSt = virt(sd, st, CUDNN_DATA_HALF);
        std::vector<Desc> ops = {
            matmul(q, kt, S),
            pointwise(CUDNN_POINTWISE_MUL, S, scale, S2),
            pointwise(CUDNN_POINTWISE_SUB, S2, stats, S3),
            pointwise(CUDNN_POINTWISE_EXP, S3, NULL, P),
            pointwise(CUDNN_POINTWISE_IDENTITY, P, NULL, Pt),
            matmul(Pt, dO, dV),
            matmul(dO, vt, dP),
            pointwise(CUDNN_POINTWISE_MUL, dO, o, dOO),
            reduction(CUDNN_REDUCE_TENSOR_ADD, dOO, D),
            pointwise(CUDNN_POINTWISE_SUB, dP, D, dS0),
            pointwise(CUDNN_POINTWISE_MUL, P, dS0, dS),
            pointwise(CUDNN_POINTWISE_IDENTITY, dS, NULL, dSh),
            matmul(dSh, k, dQ),
            pointwise(CUDNN_POINTWISE_IDENTITY, dS, NULL, dSt),
            matmul(dSt, q, dK),
        };
        Desc plan = plan_for(ops, "sdpa backward graph", &wsize);
        float sc = 0.125f;
        Desc vp = pack({ 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50 },
                       { mem[0], mem[1], mem[1], mem[2], mem[3], mem[4], mem[5], mem[0], mem[1], mem[2], &sc }, ws);
        CHECK(cudnnBackendExecute(handle, plan, vp));
    }

    // 3. attention through cuDNN's SDPA operation: grouped K/V (8 query heads, 2 kv heads), seq 1024, d 128
    {
        Desc q = tensor(20, { 4, 8, 1024, 128 }, packed({ 4, 8, 1024, 128 }), CUDNN_DATA_BFLOAT16);
        Desc k = tensor(21, { 4, 2, 1024, 128 }, packed({ 4, 2, 1024, 128 }), CUDNN_DATA_BFLOAT16);
        Desc v = tensor(22, { 4, 2, 1024, 128 }, packed({ 4, 2, 1024, 128 }), CUDNN_DATA_BFLOAT16);
        Desc o = tensor(23, { 4, 8, 1024, 128 }, packed({ 4, 8, 1024, 128 }), CUDNN_DATA_BFLOAT16);
        Desc scale = tensor(24, { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, CUDNN_DATA_FLOAT, false, true);
        Desc op = make(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
        setd(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q);
        setd(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k);
        setd(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v);
        setd(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o);
        setd(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale);
        CHECK(cudnnBackendFinalize(op));
        Desc plan = plan_for({ op }, "sdpa op", &wsize);
        float sc = 0.088388f;
        Desc vp = pack({ 20, 21, 22, 23, 24 }, { mem[0], mem[1], mem[2], mem[3], &sc }, ws);
        CHECK(cudnnBackendExecute(handle, plan, vp));
    }

    // 4. a linear layer: [16, 256, 1024] x [16, 1024, 4096] + bias, bias fused
    {
        Desc a = tensor(30, { 16, 256, 1024 }, packed({ 16, 256, 1024 }));
        Desc w = tensor(31, { 16, 1024, 4096 }, packed({ 16, 1024, 4096 }));
        Desc c = tensor(32, { 16, 256, 4096 }, packed({ 16, 256, 4096 }), CUDNN_DATA_FLOAT, true);
        Desc bias = tensor(33, { 1, 1, 4096 }, packed({ 1, 1, 4096 }));
        Desc y = tensor(34, { 16, 256, 4096 }, packed({ 16, 256, 4096 }));
        Desc plan = plan_for({ matmul(a, w, c), pointwise(CUDNN_POINTWISE_ADD, c, bias, y) }, "matmul+bias", &wsize);
        Desc vp = pack({ 30, 31, 33, 34 }, { mem[0], mem[1], mem[2], mem[3] }, ws);
        CHECK(cudnnBackendExecute(handle, plan, vp));
    }

    // misuse the real library refuses
    {
        Desc t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        cudnnDataType_t dt = CUDNN_DATA_HALF;
        int64_t dims[2] = { 4, 4 }, uid = 1, n;
        printf("status wrong_type %d\n", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_INT64, 1, &dt));
        printf("status wrong_descriptor %d\n",
               cudnnBackendSetAttribute(t, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
        set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
        set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 2, dims);
        set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 2, dims);
        printf("status finalize_incomplete %d\n", cudnnBackendFinalize(t));
        printf("status get_before_finalize %d\n",
               cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 2, &n, dims));
        set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
        set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &uid);
        CHECK(cudnnBackendFinalize(t));
        printf("status set_after_finalize %d\n", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
        printf("status finalize_twice %d\n", cudnnBackendFinalize(t));
        Desc bogus;
        printf("status unknown_type %d\n", cudnnBackendCreateDescriptor((cudnnBackendDescriptorType_t)999, &bogus));
        printf("status null_descriptor %d\n", cudnnBackendDestroyDescriptor(NULL));
    }

    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK(cudnnDestroy(handle));
    printf("cudnn_graph: ok\n");
    return 0;
}
