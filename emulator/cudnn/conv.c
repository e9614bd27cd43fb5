/* Legacy convolutions: the descriptor, output dimensions, algorithm
 * queries (Get*_v7 and Find*, which return every algorithm with its status,
 * workspace and a time), workspace sizes, and the forward, backward-data,
 * backward-filter, bias-gradient and fused bias+activation operations,
 * each traced as one MAYA_REC_DNN.
 *
 * Algorithms: cuDNN's constraints are kept (FFT needs unit stride and
 * dilation in 2-D, Winograd a 3x3 filter, ...). Workspace sizes follow what
 * each algorithm stores (GEMM an im2col buffer of one image, FFT the
 * transformed tensors, ...); "times" rank algorithms by their work over a
 * nominal 100 TFLOP/s and are not measurements: the estimator, not this
 * file, says how long an operation takes. */
#include <stdlib.h>
#include <string.h>

#include "dnn.h"

enum dir { FWD, BWD_DATA, BWD_FILTER };
static const int algo_count[] = { [FWD] = CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                  [BWD_DATA] = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                  [BWD_FILTER] = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT };

/* ---- the descriptor ---- */

/* groups default to 1 */
DNN_CREATE_DESTROY(cudnnConvolutionDescriptor_t, cudnnConvolutionStruct, DNN_CONV_MAGIC, d->groups = 1,
                   cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor)

static int conv_ok(cudnnConvolutionDescriptor_t c)
{
    return c && c->magic == DNN_CONV_MAGIC;
}

static cudnnStatus_t conv_set(cudnnConvolutionDescriptor_t c, int n, const int *pad, const int *stride,
                              const int *dil, int mode, int compute)
{
    if (!conv_ok(c) || !pad || !stride || !dil)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "convolution descriptor or arrays missing");
    if (n > CUDNN_DIM_MAX - 2)
        return dnn_error(CUDNN_STATUS_NOT_SUPPORTED, "%d spatial dimensions: at most %d", n, CUDNN_DIM_MAX - 2);
    if (n < 1 || (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) || !dnn_dtype_bytes(compute))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "bad spatial dimension count %d, mode %d or compute type %d", n,
                         mode, compute);
    for (int i = 0; i < n; i++)
        if (pad[i] < 0 || stride[i] <= 0 || dil[i] <= 0)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "dimension %d: padding %d, stride %d, dilation %d", i, pad[i],
                             stride[i], dil[i]);
    c->set = 1;
    c->nspatial = n;
    memcpy(c->pad, pad, (size_t)n * sizeof *pad);
    memcpy(c->stride, stride, (size_t)n * sizeof *stride);
    memcpy(c->dilation, dil, (size_t)n * sizeof *dil);
    c->mode = mode;
    c->compute = compute;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t desc, int pad_h, int pad_w, int u, int v,
                                              int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute)
{
    DNN_ENTER();
    int pad[2] = { pad_h, pad_w }, stride[2] = { u, v }, dil[2] = { dilation_h, dilation_w };
    DNN_RETURN(conv_set(desc, 2, pad, stride, dil, mode, compute));
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t desc, int n, const int pad[],
                                              const int stride[], const int dil[], cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute)
{
    DNN_ENTER();
    DNN_RETURN(conv_set(desc, n, pad, stride, dil, mode, compute));
}

cudnnStatus_t cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t desc, int *pad_h, int *pad_w,
                                              int *u, int *v, int *dilation_h, int *dilation_w,
                                              cudnnConvolutionMode_t *mode, cudnnDataType_t *compute)
{
    DNN_ENTER();
    const struct cudnnConvolutionStruct *c = dnn_conv(desc);
    if (!c || c->nspatial != 2 || !pad_h || !pad_w || !u || !v || !dilation_h || !dilation_w || !mode || !compute)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *pad_h = c->pad[0], *pad_w = c->pad[1], *u = c->stride[0], *v = c->stride[1];
    *dilation_h = c->dilation[0], *dilation_w = c->dilation[1];
    *mode = c->mode, *compute = c->compute;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t desc, int requested, int *n,
                                              int pad[], int stride[], int dil[], cudnnConvolutionMode_t *mode,
                                              cudnnDataType_t *compute)
{
    DNN_ENTER();
    const struct cudnnConvolutionStruct *c = dnn_conv(desc);
    if (!c || !n || !mode || !compute || requested < 0 || (requested > 0 && (!pad || !stride || !dil)))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *n = c->nspatial;
    for (int i = 0; i < requested && i < c->nspatial; i++)
        pad[i] = c->pad[i], stride[i] = c->stride[i], dil[i] = c->dilation[i];
    *mode = c->mode, *compute = c->compute;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t desc, int groups)
{
    DNN_ENTER();
    if (!conv_ok(desc) || groups < 1)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "group count %d", groups));
    desc->groups = groups;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t desc, int *groups)
{
    DNN_ENTER();
    if (!conv_ok(desc) || !groups)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *groups = desc->groups;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t desc, cudnnMathType_t math)
{
    DNN_ENTER();
    if (!conv_ok(desc) || math < CUDNN_DEFAULT_MATH || math > CUDNN_FMA_MATH)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "math type %d", (int)math));
    desc->math = math;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t desc, cudnnMathType_t *math)
{
    DNN_ENTER();
    if (!conv_ok(desc) || !math)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *math = desc->math;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t desc, cudnnReorderType_t reorder)
{
    DNN_ENTER();
    if (!conv_ok(desc) || (reorder != CUDNN_DEFAULT_REORDER && reorder != CUDNN_NO_REORDER))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    desc->reorder = reorder;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t desc, cudnnReorderType_t *reorder)
{
    DNN_ENTER();
    if (!conv_ok(desc) || !reorder)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *reorder = desc->reorder;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* ---- geometry ---- */

/* Output dims of x convolved with w: N, K, then each spatial size. */
static cudnnStatus_t out_dims(const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *x,
                              const struct cudnnFilterStruct *w, int *out)
{
    if (!c || !x || !w)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "convolution, input or filter descriptor missing or not set");
    if (x->nd != c->nspatial + 2 || w->nd != x->nd)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "input has %d dimensions, filter %d, convolution %d spatial",
                         x->nd, w->nd, c->nspatial);
    if (x->dims[1] != w->dims[1] * c->groups || w->dims[0] % c->groups)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "input channels %d, filter %d x %d groups (output channels %d)",
                         x->dims[1], w->dims[1], c->groups, w->dims[0]);
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    for (int i = 0; i < c->nspatial; i++) {
        int span = c->dilation[i] * (w->dims[i + 2] - 1) + 1;
        int o = (x->dims[i + 2] + 2 * c->pad[i] - span) / c->stride[i] + 1;
        if (x->dims[i + 2] + 2 * c->pad[i] < span || o <= 0)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "spatial dimension %d: input %d padded by %d is smaller than the "
                             "dilated filter %d", i, x->dims[i + 2], c->pad[i], span);
        out[i + 2] = o;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t desc,
                                                    const cudnnTensorDescriptor_t xDesc,
                                                    const cudnnFilterDescriptor_t wDesc, int nd, int out[])
{
    DNN_ENTER();
    int dims[CUDNN_DIM_MAX];
    const struct cudnnTensorStruct *x = dnn_tensor(xDesc);
    cudnnStatus_t st = out_dims(dnn_conv(desc), x, dnn_filter(wDesc), dims);
    if (st == CUDNN_STATUS_SUCCESS && (!out || nd != x->nd))
        st = dnn_error(CUDNN_STATUS_BAD_PARAM, "%d output dimensions asked of a %d-dimensional input", nd, x->nd);
    if (st == CUDNN_STATUS_SUCCESS)
        memcpy(out, dims, (size_t)nd * sizeof *out);
    DNN_RETURN(st);
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t desc,
                                                    const cudnnTensorDescriptor_t xDesc,
                                                    const cudnnFilterDescriptor_t wDesc, int *n, int *c, int *h,
                                                    int *w)
{
    DNN_ENTER();
    int dims[CUDNN_DIM_MAX];
    const struct cudnnConvolutionStruct *cv = dnn_conv(desc);
    cudnnStatus_t st = cv && cv->nspatial != 2 ? CUDNN_STATUS_BAD_PARAM
                                               : out_dims(cv, dnn_tensor(xDesc), dnn_filter(wDesc), dims);
    if (st == CUDNN_STATUS_SUCCESS && (!n || !c || !h || !w))
        st = CUDNN_STATUS_BAD_PARAM;
    if (st == CUDNN_STATUS_SUCCESS)
        *n = dims[0], *c = dims[1], *h = dims[2], *w = dims[3];
    DNN_RETURN(st);
}

/* The tensors of a convolution in any direction, checked against one another. */
struct problem {
    const struct cudnnConvolutionStruct *c;
    const struct cudnnTensorStruct *x, *y;
    const struct cudnnFilterStruct *w;
};

static cudnnStatus_t problem_check(struct problem *p, const void *c, const void *x, const void *w, const void *y)
{
    p->c = dnn_conv(c), p->x = dnn_tensor(x), p->w = dnn_filter(w), p->y = dnn_tensor(y);
    int dims[CUDNN_DIM_MAX];
    cudnnStatus_t st = out_dims(p->c, p->x, p->w, dims);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (!p->y || p->y->nd != p->x->nd)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "output descriptor missing or of another rank");
    for (int i = 0; i < p->x->nd; i++)
        if (p->y->dims[i] != dims[i])
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "output dimension %d is %d, the convolution gives %d", i,
                             p->y->dims[i], dims[i]);
    if (p->x->dtype != p->y->dtype && !(p->x->dtype == CUDNN_DATA_INT8 && p->y->dtype == CUDNN_DATA_FLOAT))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "input type %d and output type %d differ", p->x->dtype,
                         p->y->dtype);
    if (p->w->dtype != p->x->dtype)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "filter type %d and input type %d differ", p->w->dtype,
                         p->x->dtype);
    return CUDNN_STATUS_SUCCESS;
}

static double prod(const int *v, int n)
{
    double r = 1;
    for (int i = 0; i < n; i++)
        r *= v[i];
    return r;
}

/* Whether cuDNN has algorithm a for this problem, and its workspace. */
static int algo_supported(enum dir d, int a, const struct problem *p)
{
    const struct cudnnConvolutionStruct *c = p->c;
    int unit = 1, is3x3 = c->nspatial == 2, small = c->nspatial == 2;
    for (int i = 0; i < c->nspatial; i++) {
        unit &= c->stride[i] == 1 && c->dilation[i] == 1;
        is3x3 &= p->w->dims[i + 2] == 3;
        small &= p->w->dims[i + 2] == 3 || p->w->dims[i + 2] == 5;
    }
    int fft = c->nspatial == 2 && unit && c->groups == 1 &&
              (p->x->dtype == CUDNN_DATA_FLOAT || p->x->dtype == CUDNN_DATA_HALF);
    int wino = unit && c->groups == 1 && is3x3;
    int wino_nf = unit && c->groups == 1 && small;
    if (p->x->dtype == CUDNN_DATA_INT8 || p->x->dtype == CUDNN_DATA_UINT8)
        return d == FWD && a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    switch (d) {
    case FWD:
        switch (a) {
        case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return 0;
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT: case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return fft;
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return wino;
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return wino_nf;
        default: return 1;
        }
    case BWD_DATA:
        switch (a) {
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return fft;
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return wino;
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return wino_nf;
        default: return 1;
        }
    case BWD_FILTER:
        switch (a) {
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return 0; /* not implemented in cuDNN */
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return fft;
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return wino_nf;
        default: return 1;
        }
    }
    return 0;
}

static size_t algo_workspace(enum dir d, int a, const struct problem *p)
{
    int ns = p->c->nspatial;
    double n = p->x->dims[0], cin = p->x->dims[1] / p->c->groups, k = p->w->dims[0];
    double ys = prod(p->y->dims + 2, ns), rs = prod(p->w->dims + 2, ns);
    double elem = dnn_dtype_bytes(p->x->dtype);
    /* FFT: every operand transformed to complex fp32 over the padded input
     * (whole, or 32x32 tiles); Winograd non-fused: 6x6 tiles of 4x4 outputs. */
    double padded = 1;
    for (int i = 0; i < ns; i++)
        padded *= p->x->dims[i + 2] + 2 * p->c->pad[i];
    double fft = (n * cin + k * cin + n * k) * padded * 8;
    double fft_tiled = (n * cin + k * cin + n * k) * 32 * 17 * 8;
    double wino = (n * cin + k * cin + n * k) * (ys / 16 + 1) * 36 * 4;
    int fft_a = d == FWD ? CUDNN_CONVOLUTION_FWD_ALGO_FFT : d == BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT
                                                                          : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT;
    int tiling_a = d == FWD ? CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING
                 : d == BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING
                                 : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING;
    int wino_nf_a = d == FWD ? CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED
                  : d == BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED
                                  : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
    double ws = 0;
    if (a == fft_a)
        ws = fft;
    else if (a == tiling_a)
        ws = fft_tiled;
    else if (a == wino_nf_a)
        ws = wino;
    else if (d == FWD && a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
        ws = cin * rs * ys * elem; /* im2col of one image */
    else if (d == FWD && a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        ws = cin * rs * 8; /* precomputed offsets */
    else if (d == BWD_DATA && a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1)
        ws = cin * rs * 8;
    else if (d == BWD_FILTER &&
             (a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3))
        ws = k * cin * rs * 4; /* fp32 partial filter gradients */
    return (size_t)ws;
}

/* Work of the convolution relative to the fastest algorithm's (see the
 * file's comment: a ranking, not a measurement). */
static float algo_time_ms(enum dir d, int a, const struct problem *p)
{
    static const float factor[3][8] = {
        [FWD] = { 1.3f, 1.0f, 1.6f, 9.0f, 1.5f, 1.4f, 0.9f, 1.1f },
        [BWD_DATA] = { 1.1f, 1.0f, 1.5f, 1.4f, 0.9f, 1.1f },
        [BWD_FILTER] = { 1.1f, 1.0f, 1.5f, 1.2f, 9.0f, 1.1f, 1.4f },
    };
    int ns = p->c->nspatial;
    double flops = 2.0 * p->y->dims[0] * p->w->dims[0] * prod(p->y->dims + 2, ns) * p->w->dims[1] *
                   prod(p->w->dims + 2, ns);
    return (float)(flops / 100e12 * 1e3 * factor[d][a]) + 0.005f;
}

static int deterministic(enum dir d, int a)
{
    return !((d == BWD_DATA && a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) ||
             (d == BWD_FILTER && (a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3)));
}

/* The three perf structs share one layout: fill any of them. */
struct perf {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
    int reserved[3];
};
_Static_assert(sizeof(struct perf) == sizeof(cudnnConvolutionFwdAlgoPerf_t), "perf layout");
_Static_assert(sizeof(struct perf) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t), "perf layout");
_Static_assert(sizeof(struct perf) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t), "perf layout");

static int perf_cmp(const void *a, const void *b)
{
    const struct perf *x = a, *y = b;
    if ((x->status == CUDNN_STATUS_SUCCESS) != (y->status == CUDNN_STATUS_SUCCESS))
        return x->status == CUDNN_STATUS_SUCCESS ? -1 : 1;
    return x->time < y->time ? -1 : x->time > y->time ? 1 : x->algo - y->algo;
}

/* Every algorithm of direction d, best first; ws_limit: a workspace the
 * caller gave (Find*Ex), SIZE_MAX when none. */
static cudnnStatus_t rank_algos(cudnnHandle_t h, enum dir d, struct problem *p, const void *c, const void *x,
                                const void *w, const void *y, int requested, int *returned, void *results,
                                size_t ws_limit)
{
    if (!dnn_handle_ok(h))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "not a cuDNN handle");
    if (requested <= 0 || !returned || !results)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "requested %d results into %p", requested, results);
    cudnnStatus_t st = problem_check(p, c, x, w, y);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    struct perf all[8];
    int n = algo_count[d];
    for (int a = 0; a < n; a++) {
        struct perf *r = &all[a];
        memset(r, 0, sizeof *r);
        r->algo = a;
        r->memory = algo_workspace(d, a, p);
        r->status = algo_supported(d, a, p) && r->memory <= ws_limit ? CUDNN_STATUS_SUCCESS
                                                                     : CUDNN_STATUS_NOT_SUPPORTED;
        r->time = r->status == CUDNN_STATUS_SUCCESS ? algo_time_ms(d, a, p) : -1.0f;
        r->determinism = deterministic(d, a) ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
        r->math = p->c->math;
    }
    qsort(all, (size_t)n, sizeof *all, perf_cmp);
    *returned = requested < n ? requested : n;
    memcpy(results, all, (size_t)*returned * sizeof *all);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !count)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !count)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !count)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *count = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Get*_v7 (heuristics) and Find* (benchmarks on a GPU) give the same
 * ranking here; Find*Ex drops algorithms that need more workspace than given. */
static cudnnStatus_t rank_fwd(cudnnHandle_t h, const void *c, const void *x, const void *w, const void *y,
                              int requested, int *returned, void *results, size_t ws_limit)
{
    struct problem p;
    return rank_algos(h, FWD, &p, c, x, w, y, requested, returned, results, ws_limit);
}

/* Backward data: dx is the convolution's input, dy its output. */
static cudnnStatus_t rank_bwd_data(cudnnHandle_t h, const void *c, const void *w, const void *dy, const void *dx,
                                   int requested, int *returned, void *results, size_t ws_limit)
{
    struct problem p;
    return rank_algos(h, BWD_DATA, &p, c, dx, w, dy, requested, returned, results, ws_limit);
}

static cudnnStatus_t rank_bwd_filter(cudnnHandle_t h, const void *c, const void *x, const void *dy, const void *dw,
                                     int requested, int *returned, void *results, size_t ws_limit)
{
    struct problem p;
    return rank_algos(h, BWD_FILTER, &p, c, x, dw, dy, requested, returned, results, ws_limit);
}

/* Get*_v7 and Find* of one direction share a signature: d1, d2, d3 are its
 * descriptors in the API's order (forward: x, w, y; backward data: w, dy,
 * dx; backward filter: x, dy, dw), as rank_* take them. */
#define RANK_PAIR(GET, FIND, RANK, T1, T2, T3, PERF) \
    cudnnStatus_t GET(cudnnHandle_t handle, const T1 d1, const T2 d2, const cudnnConvolutionDescriptor_t convDesc, \
                      const T3 d3, const int requested, int *returned, PERF *results) \
    { \
        DNN_ENTER(); \
        DNN_RETURN(RANK(handle, convDesc, d1, d2, d3, requested, returned, results, SIZE_MAX)); \
    } \
    cudnnStatus_t FIND(cudnnHandle_t handle, const T1 d1, const T2 d2, const cudnnConvolutionDescriptor_t convDesc, \
                       const T3 d3, const int requested, int *returned, PERF *results) \
    { \
        DNN_ENTER(); \
        DNN_RETURN(RANK(handle, convDesc, d1, d2, d3, requested, returned, results, SIZE_MAX)); \
    }

RANK_PAIR(cudnnGetConvolutionForwardAlgorithm_v7, cudnnFindConvolutionForwardAlgorithm, rank_fwd,
          cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgoPerf_t)
RANK_PAIR(cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnFindConvolutionBackwardDataAlgorithm, rank_bwd_data,
          cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
          cudnnConvolutionBwdDataAlgoPerf_t)
RANK_PAIR(cudnnGetConvolutionBackwardFilterAlgorithm_v7, cudnnFindConvolutionBackwardFilterAlgorithm,
          rank_bwd_filter, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
          cudnnConvolutionBwdFilterAlgoPerf_t)

/* Find*Ex: the same with the caller's buffers; algorithms needing more
 * workspace than given are marked unsupported. */
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                     const void *x, const cudnnFilterDescriptor_t wDesc,
                                                     const void *w, const cudnnConvolutionDescriptor_t convDesc,
                                                     const cudnnTensorDescriptor_t yDesc, void *y,
                                                     const int requested, int *returned,
                                                     cudnnConvolutionFwdAlgoPerf_t *results, void *ws,
                                                     size_t ws_bytes)
{
    DNN_ENTER();
    DNN_RETURN(rank_fwd(handle, convDesc, xDesc, wDesc, yDesc, requested, returned, results, ws ? ws_bytes : 0));
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                          const void *w, const cudnnTensorDescriptor_t dyDesc,
                                                          const void *dy, const cudnnConvolutionDescriptor_t convDesc,
                                                          const cudnnTensorDescriptor_t dxDesc, void *dx,
                                                          const int requested, int *returned,
                                                          cudnnConvolutionBwdDataAlgoPerf_t *results, void *ws,
                                                          size_t ws_bytes)
{
    DNN_ENTER();
    DNN_RETURN(rank_bwd_data(handle, convDesc, wDesc, dyDesc, dxDesc, requested, returned, results,
                             ws ? ws_bytes : 0));
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                            const void *x, const cudnnTensorDescriptor_t dyDesc,
                                                            const void *dy, const cudnnConvolutionDescriptor_t convDesc,
                                                            const cudnnFilterDescriptor_t dwDesc, void *dw,
                                                            const int requested, int *returned,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t *results, void *ws,
                                                            size_t ws_bytes)
{
    DNN_ENTER();
    DNN_RETURN(rank_bwd_filter(handle, convDesc, xDesc, dyDesc, dwDesc, requested, returned, results,
                               ws ? ws_bytes : 0));
}

/* Workspace of one algorithm; an algorithm cuDNN lacks for the problem is
 * CUDNN_STATUS_NOT_SUPPORTED, an unknown one CUDNN_STATUS_BAD_PARAM. */
static cudnnStatus_t workspace(cudnnHandle_t h, enum dir d, const void *c, const void *x, const void *w,
                               const void *y, int algo, size_t *bytes)
{
    struct problem p;
    if (!dnn_handle_ok(h) || !bytes)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "bad handle or NULL size pointer");
    cudnnStatus_t st = problem_check(&p, c, x, w, y);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (algo < 0 || algo >= algo_count[d])
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "algorithm %d does not exist", algo);
    if (!algo_supported(d, algo, &p))
        return dnn_error(CUDNN_STATUS_NOT_SUPPORTED, "algorithm %d does not support this convolution", algo);
    *bytes = algo_workspace(d, algo, &p);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                      const cudnnFilterDescriptor_t wDesc,
                                                      const cudnnConvolutionDescriptor_t convDesc,
                                                      const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo,
                                                      size_t *bytes)
{
    DNN_ENTER();
    DNN_RETURN(workspace(handle, FWD, convDesc, xDesc, wDesc, yDesc, algo, bytes));
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                           const cudnnTensorDescriptor_t dyDesc,
                                                           const cudnnConvolutionDescriptor_t convDesc,
                                                           const cudnnTensorDescriptor_t dxDesc,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
{
    DNN_ENTER();
    DNN_RETURN(workspace(handle, BWD_DATA, convDesc, dxDesc, wDesc, dyDesc, algo, bytes));
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                             const cudnnTensorDescriptor_t dyDesc,
                                                             const cudnnConvolutionDescriptor_t convDesc,
                                                             const cudnnFilterDescriptor_t dwDesc,
                                                             cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
{
    DNN_ENTER();
    DNN_RETURN(workspace(handle, BWD_FILTER, convDesc, xDesc, dwDesc, dyDesc, algo, bytes));
}

/* ---- the operations ---- */

static cudnnStatus_t conv_run(cudnnHandle_t h, uint32_t api, uint64_t t0, enum dir d, const void *c,
                              const void *x, const void *w, const void *y, int algo, const void *ws,
                              size_t ws_bytes, const void *alpha, const void *beta)
{
    static const uint32_t ops[] = { [FWD] = MAYA_DNN_CONV_FWD, [BWD_DATA] = MAYA_DNN_CONV_BWD_DATA,
                                    [BWD_FILTER] = MAYA_DNN_CONV_BWD_FILTER };
    struct maya_rec_dnn r;
    dnn_rec_init(&r, ops[d]);
    size_t need = 0;
    cudnnStatus_t st = dnn_handle_ok(h) ? workspace(h, d, c, x, w, y, algo, &need)
                                        : dnn_error(CUDNN_STATUS_BAD_PARAM, "not a cuDNN handle");
    if (st == CUDNN_STATUS_SUCCESS && (!alpha || !beta))
        st = dnn_error(CUDNN_STATUS_BAD_PARAM, "alpha or beta is NULL");
    if (st == CUDNN_STATUS_SUCCESS && (need > ws_bytes || (ws_bytes && !ws)))
        st = dnn_error(CUDNN_STATUS_NOT_SUPPORTED, "algorithm %d needs %zu bytes of workspace, %zu given", algo,
                       need, ws ? ws_bytes : 0);
    if (st != CUDNN_STATUS_SUCCESS)
        return dnn_rec_finish(h, api, t0, st, &r);
    const struct cudnnConvolutionStruct *cv = dnn_conv(c);
    r.ntensors = 3;
    dnn_tensor_to_trace(&r.t[0], dnn_tensor(x));
    dnn_filter_to_trace(&r.t[1], dnn_filter(w));
    dnn_tensor_to_trace(&r.t[2], dnn_tensor(y));
    r.conv_nspatial = cv->nspatial;
    r.conv_mode = cv->mode;
    r.groups = cv->groups;
    r.compute_type = cv->compute;
    for (int i = 0; i < cv->nspatial && i < 3; i++) {
        r.pad_pre[i] = r.pad_post[i] = cv->pad[i];
        r.stride[i] = cv->stride[i];
        r.dilation[i] = cv->dilation[i];
    }
    r.algo = algo;
    r.workspace_bytes = ws_bytes;
    return dnn_rec_finish(h, api, t0, st, &r);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                      const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                      const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                      void *ws, size_t ws_bytes, const void *beta,
                                      const cudnnTensorDescriptor_t yDesc, void *y)
{
    DNN_ENTER();
    return conv_run(handle, EMU_API_ID(__func__), emu_call_t0_, FWD, convDesc, xDesc, wDesc, yDesc, algo, ws,
                    ws_bytes, alpha, beta);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc,
                                           const void *w, const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_bytes,
                                           const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    DNN_ENTER();
    return conv_run(handle, EMU_API_ID(__func__), emu_call_t0_, BWD_DATA, convDesc, dxDesc, wDesc, dyDesc, algo,
                    ws, ws_bytes, alpha, beta);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_bytes,
                                             const void *beta, const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    DNN_ENTER();
    return conv_run(handle, EMU_API_ID(__func__), emu_call_t0_, BWD_FILTER, convDesc, xDesc, dwDesc, dyDesc, algo,
                    ws, ws_bytes, alpha, beta);
}

/* conv(x, w) * alpha1 + z * alpha2 + bias, then the activation: one fused
 * kernel, traced as the convolution. */
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes, const void *alpha2, const cudnnTensorDescriptor_t zDesc,
    const void *z, const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    DNN_ENTER();
    if (dnn_handle_ok(handle) && (!dnn_tensor(biasDesc) || !dnn_tensor(zDesc) || !activationDesc))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "bias, z or activation descriptor missing"));
    return conv_run(handle, EMU_API_ID(__func__), emu_call_t0_, FWD, convDesc, xDesc, wDesc, yDesc, algo, ws,
                    ws_bytes, alpha1, alpha2);
}

/* db = sum of dy over all but the channel dimension: a reduction. */
cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha,
                                           const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *beta,
                                           const cudnnTensorDescriptor_t dbDesc, void *db)
{
    DNN_ENTER();
    struct maya_rec_dnn r;
    dnn_rec_init(&r, MAYA_DNN_REDUCTION);
    const struct cudnnTensorStruct *g = dnn_tensor(dyDesc), *b = dnn_tensor(dbDesc);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!dnn_handle_ok(handle) || !g || !b || !alpha || !beta)
        st = dnn_error(CUDNN_STATUS_BAD_PARAM, "bad handle, descriptor or scaling factor");
    else if (b->nd != g->nd || b->dims[1] != g->dims[1])
        st = dnn_error(CUDNN_STATUS_BAD_PARAM, "bias gradient of %d channels for a gradient of %d", b->dims[1],
                       g->dims[1]);
    if (st == CUDNN_STATUS_SUCCESS) {
        r.ntensors = 2;
        dnn_tensor_to_trace(&r.t[0], g);
        dnn_tensor_to_trace(&r.t[1], b);
    }
    return dnn_rec_finish(handle, EMU_API_ID(__func__), emu_call_t0_, st, &r);
}
