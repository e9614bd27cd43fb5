/* cuBLASLt stand-in: what the files of emulator/cublasLt share.
 *
 * Descriptors (matmul, matrix layout, preference, transform, emulation)
 * are plain structs, each with a magic number and a table of its
 * attributes (id, offset, size): setting and getting attributes is one
 * generic routine with cuBLASLt's rules (measured on the real library:
 * the size must be the attribute's exactly; size 0 asks for the size).
 * Each struct fits in the caller-provided storage of the *Init_internal
 * functions (cublasLtMatmulDescOpaque_t and friends). cublasLtMatmul is
 * traced as one MAYA_REC_GEMM. */
#ifndef MAYA_EMU_LT_H
#define MAYA_EMU_LT_H

#include <cublasLt.h>

#include "emu_call.h"

#define LT_HANDLE_MAGIC 0x6c74686eu
#define LT_MATMUL_MAGIC 0x6c746d6du
#define LT_LAYOUT_MAGIC 0x6c746c79u
#define LT_PREF_MAGIC 0x6c747072u
#define LT_TRANSFORM_MAGIC 0x6c747466u
#define LT_EMULATION_MAGIC 0x6c74656du
#define LT_ALGO_MAGIC 0x6c74616cu

#define LT_ENTER() EMU_CALL_ENTER(CUBLAS_STATUS_NOT_INITIALIZED)

struct cublasLtContext {
    struct emu_lib_handle h;     /* magic LT_HANDLE_MAGIC; h.stream unused (matmuls name theirs) */
    int device;
};

/* A cublasHandle_t is also a cublasLtHandle_t, as with the real libraries:
 * PyTorch passes its cuBLAS handle to cuBLASLt (getCurrentCUDABlasLtHandle).
 * cuBLAS's context starts like this one: { struct emu_lib_handle; int device; }. */
#define LT_CUBLAS_HANDLE_MAGIC 0x626c6173u /* emulator/cublas/blas.h BLAS_MAGIC */

static inline int lt_handle_ok(cublasLtHandle_t h)
{
    return emu_lib_handle_ok(h, LT_HANDLE_MAGIC) || emu_lib_handle_ok(h, LT_CUBLAS_HANDLE_MAGIC);
}

/* One attribute of a descriptor: where it lives in the struct and its size. */
struct lt_attr {
    int id;
    uint16_t offset, size;
};

/* Set / get attribute id of obj (a descriptor struct) by its table. */
cublasStatus_t lt_attr_set(void *obj, const struct lt_attr *tab, size_t n, int id, const void *buf, size_t size);
cublasStatus_t lt_attr_get(const void *obj, const struct lt_attr *tab, size_t n, int id, void *buf, size_t size,
                           size_t *written);

struct lt_matmul {               /* cublasLtMatmulDesc_t, at most 256 bytes */
    uint32_t magic;
    int heap;                    /* made by Create (freed by Destroy), not Init */
    int32_t compute, scale, pointer_mode, transa, transb, transc, fill;
    uint32_t epilogue;
    int32_t sm_count, aux_dtype, bias_dtype;
    int32_t scale_mode[5];       /* A, B, C, D, epilogue aux (attributes 31..35) */
    int32_t d_out_scale_mode;
    int8_t fast_accum;
    const void *bias, *aux, *a_scale, *b_scale, *c_scale, *d_scale, *amax_d, *aux_scale, *aux_amax, *d_out_scale;
    const void *emulation;
    int64_t bias_stride, aux_ld, aux_stride, alpha_stride;
};

struct lt_layout {               /* cublasLtMatrixLayout_t, at most 64 bytes */
    uint32_t magic;
    uint32_t type;               /* cudaDataType_t */
    int32_t order;               /* cublasLtOrder_t */
    int32_t batch_count;
    uint64_t rows, cols;
    int64_t ld;
    int64_t stride;              /* strided batch offset, elements */
    int64_t plane_offset;
    uint32_t batch_mode;         /* cublasLtBatchMode_t */
    uint16_t heap;
};

struct lt_pref {                 /* cublasLtMatmulPreference_t, at most 64 bytes */
    uint32_t magic;
    uint32_t search_mode;
    uint64_t max_workspace;
    uint32_t reduction_mask;
    uint32_t align[4];           /* minimum alignment of A, B, C, D in bytes */
    float max_waves;
    uint64_t impl_mask;
    int heap;
};

/* cublasLtMatmulAlgo_t (64 bytes): what AlgoInit / heuristics put there. */
struct lt_algo {
    uint32_t magic;
    int32_t id;
    uint32_t tile, splitk, reduction, swizzle, custom, stages;
    uint16_t inner_shape, cluster_shape;
    uint32_t reserved[7];        /* the rest of cublasLtMatmulAlgo_t */
};

_Static_assert(sizeof(struct lt_matmul) <= sizeof(cublasLtMatmulDescOpaque_t), "matmul desc fits");
_Static_assert(sizeof(struct lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout fits");
_Static_assert(sizeof(struct lt_pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "preference fits");
_Static_assert(sizeof(struct lt_algo) == sizeof(cublasLtMatmulAlgo_t), "algo is the opaque struct");

static inline struct lt_matmul *lt_matmul(const void *d)
{
    struct lt_matmul *m = (struct lt_matmul *)d;
    return m && m->magic == LT_MATMUL_MAGIC ? m : NULL;
}

static inline struct lt_layout *lt_layout(const void *d)
{
    struct lt_layout *l = (struct lt_layout *)d;
    return l && l->magic == LT_LAYOUT_MAGIC ? l : NULL;
}

static inline struct lt_pref *lt_pref(const void *d)
{
    struct lt_pref *p = (struct lt_pref *)d;
    return p && p->magic == LT_PREF_MAGIC ? p : NULL;
}

static inline const struct lt_algo *lt_algo(const cublasLtMatmulAlgo_t *a)
{
    const struct lt_algo *x = (const struct lt_algo *)a;
    return x && x->magic == LT_ALGO_MAGIC ? x : NULL;
}

#endif
