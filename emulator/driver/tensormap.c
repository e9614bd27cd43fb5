/* Tensor maps (TMA descriptors). The arguments are checked against the
 * rules cuda.h documents, and the 128-byte map is filled deterministically
 * with what it describes (no GPU reads it here): the same arguments always
 * give the same bytes, so programs that hash or cache maps behave.
 *
 * Layout of the opaque words (ours, not the hardware's):
 *   [0] global address   [1] kind, type, rank, interleave, swizzle, L2, OOB
 *   [2..6] dims          [7..10] strides   [11] box dims   [12] element strides
 *   [13..14] im2col corners, channels, pixels   [15] magic "MAYATMAP" */
#include "drv.h"

#include <string.h>

#define MAP_MAGIC 0x50414d544159414dull /* "MAYATMAP" */
#define KIND_TILED 1
#define KIND_IM2COL 2
#define KIND_IM2COL_WIDE 3

/* Bytes per element; packed sub-byte types count per 16-value group. */
static int elem_bytes(CUtensorMapDataType t)
{
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B:
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B:
    case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: return 1; /* sub-byte: checked by their own rules */
    default: return 0;
    }
}

static int is_packed(CUtensorMapDataType t)
{
    return t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B || t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
           t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

struct map_args {
    int kind;
    CUtensorMapDataType type;
    cuuint32_t rank;
    void *address;
    const cuuint64_t *dims, *strides;
    const cuuint32_t *box;       /* tiled only */
    const cuuint32_t *estrides;
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion l2;
    CUtensorMapFloatOOBfill oob;
    uint64_t im2col[2];          /* corners, channels and pixels, packed */
};

static CUresult check_common(const struct map_args *a, CUtensorMap *map)
{
    int eb = elem_bytes(a->type);
    int wide_ok = a->kind == KIND_TILED ? a->rank >= 1 : a->rank >= 3;
    if (!map || !a->address || !a->dims || (a->rank > 1 && !a->strides) || !a->estrides || !eb || !wide_ok ||
        a->rank > 5)
        return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned)a->interleave > CU_TENSOR_MAP_INTERLEAVE_32B ||
        (unsigned)a->swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
        (unsigned)a->l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
        (unsigned)a->oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && a->rank < 3)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->interleave == CU_TENSOR_MAP_INTERLEAVE_32B && a->swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned align = a->interleave == CU_TENSOR_MAP_INTERLEAVE_32B ||
                             a->type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B ||
                             a->type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
                         ? 32 : 16;
    if ((uintptr_t)a->address % align)
        return CUDA_ERROR_INVALID_VALUE;
    for (cuuint32_t i = 0; i < a->rank; i++) {
        if (a->dims[i] == 0 || a->dims[i] > (1ull << 32) || a->estrides[i] == 0 || a->estrides[i] > 8)
            return CUDA_ERROR_INVALID_VALUE;
        if (i + 1 < a->rank && (a->strides[i] % align || a->strides[i] >= (1ull << 40)))
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (a->oob && (is_packed(a->type) || a->type <= CU_TENSOR_MAP_DATA_TYPE_INT64))
        return CUDA_ERROR_INVALID_VALUE; /* NaN fill is for floating-point types */
    return CUDA_SUCCESS;
}

static CUresult check_box(const struct map_args *a)
{
    int eb = elem_bytes(a->type);
    for (cuuint32_t i = 0; i < a->rank; i++)
        if (a->box[i] == 0 || a->box[i] > 256)
            return CUDA_ERROR_INVALID_VALUE;
    uint64_t inner = (uint64_t)a->box[0] * (uint64_t)eb;
    if (a->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && !is_packed(a->type) && inner % 16)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && !is_packed(a->type)) {
        uint64_t span = a->swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32
                        : a->swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64
                        : a->swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? UINT64_MAX : 128;
        if (inner > span)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static void fill(CUtensorMap *map, const struct map_args *a)
{
    uint64_t *q = map->opaque;
    memset(map, 0, sizeof *map);
    q[0] = (uint64_t)(uintptr_t)a->address;
    q[1] = (uint64_t)a->kind | (uint64_t)a->type << 4 | (uint64_t)a->rank << 12 | (uint64_t)a->interleave << 16 |
           (uint64_t)a->swizzle << 20 | (uint64_t)a->l2 << 24 | (uint64_t)a->oob << 28;
    for (cuuint32_t i = 0; i < a->rank; i++) {
        q[2 + i] = a->dims[i];
        if (i + 1 < a->rank)
            q[7 + i] = a->strides[i];
        if (a->box)
            q[11] |= (uint64_t)(a->box[i] - 1) << (8 * i);
        q[12] |= (uint64_t)(a->estrides[i] - 1) << (4 * i);
    }
    q[13] = a->im2col[0];
    q[14] = a->im2col[1];
    q[15] = MAP_MAGIC;
}

static CUresult encode(const struct map_args *a, CUtensorMap *map)
{
    CUresult e = check_common(a, map);
    if (e == CUDA_SUCCESS && a->kind == KIND_TILED)
        e = !a->box ? CUDA_ERROR_INVALID_VALUE : check_box(a);
    if (e == CUDA_SUCCESS)
        fill(map, a);
    return e;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    DRV_ENTER();
    struct map_args a = { KIND_TILED, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                          boxDim, elementStrides, interleave, swizzle, l2Promotion, oobFill, { 0, 0 } };
    DRV_RETURN(encode(&a, tensorMap));
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                 void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                 const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner,
                                 cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                 const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                 CUtensorMapFloatOOBfill oobFill)
{
    DRV_ENTER();
    struct map_args a = { KIND_IM2COL, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                          NULL, elementStrides, interleave, swizzle, l2Promotion, oobFill, { 0, 0 } };
    /* The corners bound the spatial dimensions (rank - 2 of them), each in
     * a range that shrinks as there are more of them. */
    int spatial = (int)tensorRank - 2, range = spatial == 1 ? 1 << 15 : spatial == 2 ? 1 << 7 : 1 << 3;
    if (!pixelBoxLowerCorner || !pixelBoxUpperCorner || channelsPerPixel == 0 || channelsPerPixel > 256 ||
        pixelsPerColumn == 0 || pixelsPerColumn > 1024 || tensorRank < 3)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    for (int i = 0; i < spatial; i++) {
        if (pixelBoxLowerCorner[i] < -range || pixelBoxLowerCorner[i] >= range ||
            pixelBoxUpperCorner[i] < -range || pixelBoxUpperCorner[i] >= range)
            DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
        a.im2col[0] |= (uint64_t)(uint16_t)pixelBoxLowerCorner[i] << (16 * i);
        a.im2col[1] |= (uint64_t)(uint16_t)pixelBoxUpperCorner[i] << (16 * i);
    }
    a.im2col[1] |= (uint64_t)channelsPerPixel << 48 | (uint64_t)(pixelsPerColumn & 0xfff) << 36;
    DRV_RETURN(encode(&a, tensorMap));
}

CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                     cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                     const cuuint64_t *globalStrides, int pixelBoxLowerCornerWidth,
                                     int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
                                     cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
                                     CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                     CUtensorMapFloatOOBfill oobFill)
{
    DRV_ENTER();
    struct map_args a = { KIND_IM2COL_WIDE, tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                          NULL, elementStrides, interleave, swizzle, l2Promotion, oobFill, { 0, 0 } };
    if (emu_device(drv_ctx_device() < 0 ? 0 : drv_ctx_device())->prop.major < 10)
        DRV_RETURN(CUDA_ERROR_NOT_SUPPORTED); /* Blackwell and later */
    if (channelsPerPixel == 0 || channelsPerPixel > 256 || pixelsPerColumn == 0 || pixelsPerColumn > 1024 ||
        pixelBoxLowerCornerWidth < -(1 << 15) || pixelBoxLowerCornerWidth >= (1 << 15) ||
        pixelBoxUpperCornerWidth < -(1 << 15) || pixelBoxUpperCornerWidth >= (1 << 15) || (unsigned)mode > 1)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    a.im2col[0] = (uint64_t)(uint16_t)pixelBoxLowerCornerWidth | (uint64_t)(uint16_t)pixelBoxUpperCornerWidth << 16 |
                  (uint64_t)mode << 32;
    a.im2col[1] = (uint64_t)channelsPerPixel << 48 | (uint64_t)(pixelsPerColumn & 0xfff) << 36;
    DRV_RETURN(encode(&a, tensorMap));
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap, void *globalAddress)
{
    DRV_ENTER();
    if (!tensorMap || tensorMap->opaque[15] != MAP_MAGIC || !globalAddress)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    unsigned type = (unsigned)(tensorMap->opaque[1] >> 4) & 0xff, interleave = (tensorMap->opaque[1] >> 16) & 0xf;
    unsigned align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B || type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B ||
                             type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
                         ? 32 : 16;
    if ((uintptr_t)globalAddress % align)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    tensorMap->opaque[0] = (uint64_t)(uintptr_t)globalAddress;
    DRV_RETURN(CUDA_SUCCESS);
}
