// cuBLASLt matmuls as a transformer's training step issues them: fp16 with
// a bias epilogue, bf16 with GELU+bias (aux output), TF32, a strided batch
// of attention products, row-major layouts, an FP8 GEMM with scales; the
// algorithm from the heuristic or chosen by id and configured. Then
// arguments cuBLASLt must refuse, each printed with the status it got.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECK_LT(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "line %d: %s: %s\n", __LINE__, #x, cublasLtGetStatusName(s_)); exit(1); } } while (0)

static cublasLtHandle_t lt;
static void *workspace;
static const size_t workspace_bytes = 32 << 20;
static cudaStream_t stream;

struct Gemm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c, d;
};

// A column-major [rows x cols] layout (ld = rows), batch as given.
static cublasLtMatrixLayout_t layout(cudaDataType t, int rows, int cols, int batch, long long stride,
                                     cublasLtOrder_t order = CUBLASLT_ORDER_COL)
{
    cublasLtMatrixLayout_t l;
    long long ld = order == CUBLASLT_ORDER_ROW ? cols : rows;
    CHECK_LT(cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld));
    CHECK_LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order));
    if (batch > 1) {
        CHECK_LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
        CHECK_LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                  sizeof stride));
    }
    return l;
}

static Gemm make(cublasComputeType_t compute, cublasOperation_t ta, cublasOperation_t tb, cudaDataType ab,
                 cudaDataType cd, int m, int n, int k, int batch = 1,
                 cublasLtOrder_t order = CUBLASLT_ORDER_COL)
{
    Gemm g;
    CHECK_LT(cublasLtMatmulDescCreate(&g.desc, compute, CUDA_R_32F));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    g.a = ta == CUBLAS_OP_N ? layout(ab, m, k, batch, (long long)m * k, order)
                            : layout(ab, k, m, batch, (long long)m * k, order);
    g.b = tb == CUBLAS_OP_N ? layout(ab, k, n, batch, (long long)k * n, order)
                            : layout(ab, n, k, batch, (long long)k * n, order);
    g.c = layout(cd, m, n, batch, (long long)m * n, order);
    g.d = g.c;
    return g;
}

// The heuristic's first algorithm within our workspace, then the matmul.
static cublasStatus_t run(Gemm &g, void *A, void *B, void *C, bool print = false)
{
    cublasLtMatmulPreference_t pref;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t res[4];
    int n = 0;
    CHECK_LT(cublasLtMatmulAlgoGetHeuristic(lt, g.desc, g.a, g.b, g.c, g.d, pref, 4, res, &n));
    if (n < 1 || res[0].workspaceSize > workspace_bytes) {
        fprintf(stderr, "no usable algorithm\n");
        exit(1);
    }
    if (print)
        printf("heuristic %d algos, first workspace %zu waves %.2f\n", n, res[0].workspaceSize, res[0].wavesCount);
    const float one = 1, zero = 0;
    cublasStatus_t s = cublasLtMatmul(lt, g.desc, &one, A, g.a, B, g.b, &zero, C, g.c, C, g.d, &res[0].algo,
                                      workspace, workspace_bytes, stream);
    cublasLtMatmulPreferenceDestroy(pref);
    return s;
}

int main()
{
    CHECK_CUDA(cudaStreamCreate(&stream));
    CHECK_LT(cublasLtCreate(&lt));
    printf("cublasLt version %zu\n", cublasLtGetVersion());
    CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
    void *a, *b, *c, *bias, *aux;
    CHECK_CUDA(cudaMalloc(&a, 64 << 20));
    CHECK_CUDA(cudaMalloc(&b, 64 << 20));
    CHECK_CUDA(cudaMalloc(&c, 64 << 20));
    CHECK_CUDA(cudaMalloc(&bias, 1 << 20));
    CHECK_CUDA(cudaMalloc(&aux, 16 << 20));

    // fp16 linear layer with bias: out[768 x 256] = W^T[768 x 512] x in[512 x 256] + bias
    Gemm g1 = make(CUBLAS_COMPUTE_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_16F, CUDA_R_16F, 768, 256, 512);
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    CHECK_LT(cublasLtMatmulDescSetAttribute(g1.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g1.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    CHECK_LT(run(g1, a, b, c, true));

    // bf16 MLP up-projection with GELU, keeping the pre-activation (aux) for backward
    Gemm g2 = make(CUBLAS_COMPUTE_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_16BF, CUDA_R_16BF, 3072, 512, 768);
    epi = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    long long aux_ld = 3072;
    CHECK_LT(cublasLtMatmulDescSetAttribute(g2.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g2.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g2.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g2.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld));
    CHECK_LT(run(g2, a, b, c));

    // fp32 on TF32 tensor cores
    Gemm g3 = make(CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_32F, CUDA_R_32F, 1024, 1024, 1024);
    CHECK_LT(run(g3, a, b, c));

    // attention scores, 12 heads x 4 sequences: [128 x 128] = Q [128 x 64] x K^T, strided batch
    Gemm g4 = make(CUBLAS_COMPUTE_32F, CUBLAS_OP_N, CUBLAS_OP_T, CUDA_R_16F, CUDA_R_16F, 128, 128, 64, 48);
    CHECK_LT(run(g4, a, b, c));

    // row-major layouts (as a C++ program keeps its matrices)
    Gemm g5 = make(CUBLAS_COMPUTE_32F, CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_16BF, CUDA_R_16BF, 256, 384, 128, 1,
                   CUBLASLT_ORDER_ROW);
    CHECK_LT(run(g5, a, b, c));

    // FP8 (E4M3) inputs with per-tensor scales, bf16 output: Hopper's FP8 GEMM (A transposed, "TN")
    Gemm g6;
    CHECK_LT(cublasLtMatmulDescCreate(&g6.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t t = CUBLAS_OP_T;
    CHECK_LT(cublasLtMatmulDescSetAttribute(g6.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    void *scale = bias;
    CHECK_LT(cublasLtMatmulDescSetAttribute(g6.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale));
    CHECK_LT(cublasLtMatmulDescSetAttribute(g6.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof scale));
    g6.a = layout(CUDA_R_8F_E4M3, 4096, 2048, 1, 0);
    g6.b = layout(CUDA_R_8F_E4M3, 4096, 1024, 1, 0);
    g6.c = g6.d = layout(CUDA_R_16BF, 2048, 1024, 1, 0);
    CHECK_LT(run(g6, a, b, c));

    // an algorithm chosen by id and configured: split-K in 4
    int ids[16], nids = 0;
    CHECK_LT(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
                                      CUDA_R_16F, 16, ids, &nids));
    cublasLtMatmulAlgo_t algo;
    CHECK_LT(cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
                                    CUDA_R_16F, ids[nids - 1], &algo));
    int splitk = 4;
    CHECK_LT(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk));
    cublasLtMatmulHeuristicResult_t check;
    CHECK_LT(cublasLtMatmulAlgoCheck(lt, g4.desc, g4.a, g4.b, g4.c, g4.d, &algo, &check));
    int got = 0;
    CHECK_LT(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &got, sizeof got, NULL));
    printf("algo ids %d, chose %d, check workspace %zu\n", nids, got, check.workspaceSize);
    const float one = 1, zero = 0;
    CHECK_LT(cublasLtMatmul(lt, g4.desc, &one, a, g4.a, b, g4.b, &zero, c, g4.c, c, g4.d, &algo, workspace,
                            workspace_bytes, stream));

    // a cuBLAS handle used as a cuBLASLt handle (PyTorch does this)
    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS)
        exit(1);
    cublasLtHandle_t saved = lt;
    lt = (cublasLtHandle_t)blas;
    CHECK_LT(run(g3, a, b, c));
    lt = saved;
    cublasDestroy(blas);

    // what a program reads back
    size_t need = 0;
    CHECK_LT(cublasLtMatmulDescGetAttribute(g1.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, NULL, 0, &need));
    cublasLtEpilogue_t back;
    CHECK_LT(cublasLtMatmulDescGetAttribute(g1.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &back, sizeof back, NULL));
    printf("epilogue size %zu value %d\n", need, (int)back);

    // arguments cuBLASLt refuses
    Gemm bad = make(CUBLAS_COMPUTE_32F, CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_16F, CUDA_R_16F, 64, 64, 64);
    cublasLtMatrixLayout_t wrong_k = layout(CUDA_R_16F, 32, 64, 1, 0);
    printf("status shape_mismatch %d\n", cublasLtMatmul(lt, bad.desc, &one, a, bad.a, b, wrong_k, &zero, c, bad.c, c,
                                                        bad.d, NULL, workspace, workspace_bytes, stream));
    cublasLtMatrixLayout_t short_ld;
    CHECK_LT(cublasLtMatrixLayoutCreate(&short_ld, CUDA_R_16F, 64, 64, 32));
    printf("status ld_too_small %d\n", cublasLtMatmul(lt, bad.desc, &one, a, short_ld, b, bad.b, &zero, c, bad.c, c,
                                                      bad.d, NULL, workspace, workspace_bytes, stream));
    printf("status null_handle %d\n", cublasLtMatmul(NULL, bad.desc, &one, a, bad.a, b, bad.b, &zero, c, bad.c, c,
                                                     bad.d, NULL, workspace, workspace_bytes, stream));
    printf("status workspace_null %d\n", cublasLtMatmul(lt, bad.desc, &one, a, bad.a, b, bad.b, &zero, c, bad.c, c,
                                                        bad.d, NULL, NULL, 1024, stream));
    cublasLtMatmulPreference_t pref;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t res;
    int n = 0;
    printf("status heuristic_zero %d\n",
           cublasLtMatmulAlgoGetHeuristic(lt, bad.desc, bad.a, bad.b, bad.c, bad.d, pref, 0, &res, &n));
    cublasLtMatmulAlgo_t raw;
    memset(&raw, 0, sizeof raw);
    printf("status config_uninitialised %d\n",
           cublasLtMatmulAlgoConfigSetAttribute(&raw, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk));
    long long wide = 1;
    printf("status attribute_size %d\n",
           cublasLtMatmulDescSetAttribute(bad.desc, CUBLASLT_MATMUL_DESC_TRANSA, &wide, sizeof wide));
    printf("status unknown_attribute %d\n",
           cublasLtMatmulDescSetAttribute(bad.desc, (cublasLtMatmulDescAttributes_t)9, &splitk, sizeof splitk));

    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_LT(cublasLtDestroy(lt));
    printf("gemm_lt: ok\n");
    return 0;
}
