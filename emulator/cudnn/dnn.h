/* cuDNN stand-in: what the files of emulator/cudnn share.
 *
 * One implementation serves libcudnn.so.9 and the sub-libraries that
 * export the same C functions (libcudnn_graph.so.9: handles and the
 * backend API; _ops, _cnn, _adv: the legacy API): their objects are linked
 * into each, and descriptors are plain heap structs checked by magic, so
 * one made through one library works through another.
 *
 * Legacy operations (convolutions, batch norm, softmax, ...) and the
 * operations of backend graphs are traced as MAYA_REC_DNN records with
 * their tensors (dims and strides in elements, as cuDNN gives them, NCHW
 * order), convolution geometry, algorithm, workspace and the handle's
 * stream. */
#ifndef MAYA_EMU_DNN_H
#define MAYA_EMU_DNN_H

#include <cudnn.h>
#include <stdarg.h>
#include <stdlib.h>

#include "be_trace.h" /* dnn_rec_init */
#include "emu_call.h"

#define DNN_HANDLE_MAGIC 0x646e6e68u
#define DNN_TENSOR_MAGIC 0x646e7474u
#define DNN_FILTER_MAGIC 0x646e6674u
#define DNN_CONV_MAGIC 0x646e6376u
#define DNN_ACT_MAGIC 0x646e6163u
#define DNN_POOL_MAGIC 0x646e706cu
#define DNN_OPT_MAGIC 0x646e6f70u
#define DNN_RED_MAGIC 0x646e7264u
#define DNN_DROP_MAGIC 0x646e6472u

#define DNN_ENTER() EMU_CALL_ENTER(CUDNN_STATUS_NOT_INITIALIZED)

struct cudnnContext {
    struct emu_lib_handle h;     /* h.stream: cudnnSetStream's stream (NULL: legacy default) */
    int device;
};

static inline int dnn_handle_ok(cudnnHandle_t h)
{
    return emu_lib_handle_ok(h, DNN_HANDLE_MAGIC);
}

/* Note why a call failed, for cudnnGetLastErrorString, and return st. */
cudnnStatus_t dnn_error(cudnnStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bytes of one element of a cudnnDataType_t, 0 if unknown (sub-byte types
 * count as 1). */
int dnn_dtype_bytes(int dtype);

struct cudnnTensorStruct {
    uint32_t magic;
    int set;                     /* a Set* call gave it a shape */
    int dtype;                   /* cudnnDataType_t */
    int format;                  /* cudnnTensorFormat_t it was described in (NCHW if strides given) */
    int nd;
    int dims[CUDNN_DIM_MAX];
    int strides[CUDNN_DIM_MAX];  /* elements */
};

struct cudnnFilterStruct {
    uint32_t magic;
    int set;
    int dtype;
    int format;                  /* NCHW: K, C, spatial packed; NHWC: C innermost */
    int nd;
    int dims[CUDNN_DIM_MAX];     /* K, C/groups, spatial... */
};

struct cudnnConvolutionStruct {
    uint32_t magic;
    int set;
    int nspatial;
    int pad[CUDNN_DIM_MAX], stride[CUDNN_DIM_MAX], dilation[CUDNN_DIM_MAX];
    int mode;                    /* cudnnConvolutionMode_t */
    int compute;                 /* cudnnDataType_t */
    int groups;
    int math;                    /* cudnnMathType_t */
    int reorder;                 /* cudnnReorderType_t */
};

static inline const struct cudnnTensorStruct *dnn_tensor(const void *d)
{
    const struct cudnnTensorStruct *t = d;
    return t && t->magic == DNN_TENSOR_MAGIC && t->set ? t : NULL;
}

static inline const struct cudnnFilterStruct *dnn_filter(const void *d)
{
    const struct cudnnFilterStruct *f = d;
    return f && f->magic == DNN_FILTER_MAGIC && f->set ? f : NULL;
}

static inline const struct cudnnConvolutionStruct *dnn_conv(const void *d)
{
    const struct cudnnConvolutionStruct *c = d;
    return c && c->magic == DNN_CONV_MAGIC && c->set ? c : NULL;
}

/* opdesc.c: pooled output dims of x (0, or -1 when the pooling does not
 * fit); whether d is an op-tensor descriptor; bytes of indices a reduction
 * writes into c (0, or -1 for a bad descriptor). */
int dnn_pool_out(const void *pool, const struct cudnnTensorStruct *x, int *out);
int dnn_optensor_ok(const void *d);
int dnn_reduce_indices(const void *d, const struct cudnnTensorStruct *c, size_t *bytes);

/* A legacy tensor / filter as a trace tensor (filters: packed strides of
 * their format). */
void dnn_tensor_to_trace(struct maya_tensor *t, const struct cudnnTensorStruct *d);
void dnn_filter_to_trace(struct maya_tensor *t, const struct cudnnFilterStruct *f);

/* End an operation: when it ran (st == SUCCESS) write r on h's stream (or
 * add it to the stream's capture: emu_trace_op); otherwise a CALL record
 * without a stream. Returns st. An unknown stream (destroyed) or an
 * invalidated capture fails the launch: CUDNN_STATUS_EXECUTION_FAILED_CUDART. */
cudnnStatus_t dnn_rec_finish(cudnnHandle_t h, uint32_t api, uint64_t t0, cudnnStatus_t st, struct maya_rec_dnn *r);

/* cudnnCreateX / cudnnDestroyX of a legacy descriptor: a zeroed struct
 * with its magic, then INIT (statements on d), checked by magic on
 * destruction. */
#define DNN_CREATE_DESTROY(TYPE, STRUCT, MAGIC, INIT, CREATE, DESTROY) \
    cudnnStatus_t CREATE(TYPE *desc) \
    { \
        DNN_ENTER(); \
        if (!desc) \
            DNN_RETURN(CUDNN_STATUS_BAD_PARAM_NULL_POINTER); \
        struct STRUCT *d = calloc(1, sizeof *d); \
        if (!d) \
            DNN_RETURN(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED); \
        d->magic = MAGIC; \
        INIT; \
        *desc = d; \
        DNN_RETURN(CUDNN_STATUS_SUCCESS); \
    } \
    cudnnStatus_t DESTROY(TYPE desc) \
    { \
        DNN_ENTER(); \
        if (desc && desc->magic != MAGIC) \
            DNN_RETURN(CUDNN_STATUS_BAD_PARAM); \
        if (desc) { \
            desc->magic = 0; \
            free(desc); \
        } \
        DNN_RETURN(CUDNN_STATUS_SUCCESS); \
    }

/* End a call that is not an operation: a CALL record (no stream). */
static inline cudnnStatus_t dnn_call_end(uint32_t api, uint64_t t0, cudnnStatus_t st)
{
    emu_trace_call(api, t0, st, 0, 0);
    return st;
}
#define DNN_RETURN(st) return dnn_call_end(EMU_API_ID(__func__), emu_call_t0_, (st))

#endif
