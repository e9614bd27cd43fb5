/* cuDNN backend descriptors: create, set, get, finalize, destroy, with the
 * rules the real library applies (measured on it): an attribute belongs to
 * one descriptor type (else BAD_PARAM), has one attribute type (else
 * BAD_PARAM_ATTRIBUTE_TYPE), is set before finalizing and read after (else
 * NOT_INITIALIZED); a read returns min(requested, stored) elements and
 * reports how many, or only how many when none are requested. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* The attribute numbers of each descriptor type (cudnn_graph.h groups them). */
static const struct {
    int type, lo, hi;
} ranges[] = {
    { CUDNN_BACKEND_POINTWISE_DESCRIPTOR, 0, 99 },
    { CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, 100, 199 },
    { CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, 200, 299 },
    { CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, 300, 399 },
    { CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, 400, 499 },
    { CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR, 500, 599 },
    { CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, 600, 699 },
    { CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, 700, 705 },
    { CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, 706, 711 },
    { CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, 712, 717 },
    { CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, 750, 769 },
    { CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, 770, 779 },
    { CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, 780, 799 },
    { CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 800, 899 },
    { CUDNN_BACKEND_TENSOR_DESCRIPTOR, 900, 999 },
    { CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, 1000, 1099 },
    { CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR, 1100, 1199 },
    { CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR, 1200, 1299 },
    { CUDNN_BACKEND_ENGINE_DESCRIPTOR, 1300, 1399 },
    { CUDNN_BACKEND_MATMUL_DESCRIPTOR, 1500, 1519 },
    { CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, 1520, 1599 },
    { CUDNN_BACKEND_REDUCTION_DESCRIPTOR, 1600, 1609 },
    { CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, 1610, 1619 },
    { CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, 1620, 1699 },
    { CUDNN_BACKEND_RESAMPLE_DESCRIPTOR, 1700, 1709 },
    { CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR, 1710, 1719 },
    { CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR, 1720, 1799 },
    { CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR, 1800, 1899 },
    { CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR, 1900, 1949 },
    { CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, 1950, 1999 },
    { CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, 2000, 2099 },
    { CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, 2100, 2199 },
    { CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, 2200, 2249 },
    { CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR, 2250, 2269 },
    { CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR, 2270, 2299 },
    { CUDNN_BACKEND_RNG_DESCRIPTOR, 2300, 2309 },
    { CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR, 2310, 2399 },
    { CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, 2400, 2499 },
    { CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR, 2500, 2599 },
    { CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR, 2600, 2699 },
    { CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, 2700, 2799 },
    { CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, 2800, 2850 },
    { CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, 2851, 2899 },
    { CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR, 2900, 2949 },
    { BE_OPERATION_MOE_GROUPED_MATMUL_BWD, 2950, 2999 },
    { BE_OPERATION_DIAGONAL_BAND_MASK, 3000, 3099 },
    { BE_OPERATION_SOFTMAX, 3100, 3199 },
    /* transpose and slice: attribute numbers not known here, any accepted */
    { BE_OPERATION_TRANSPOSE, 0, 1 << 30 },
    { BE_OPERATION_SLICE, 0, 1 << 30 },
};

static int type_known(int type)
{
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
        if (ranges[i].type == type)
            return 1;
    return 0;
}

static int attr_belongs(int type, int name)
{
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
        if (ranges[i].type == type && name >= ranges[i].lo && name <= ranges[i].hi)
            return 1;
    return 0;
}

/* Attribute types of the attributes maya reads or cuDNN programs commonly
 * set (others accept the type given). alt: a second accepted type (alpha
 * and beta are FLOAT or DOUBLE); count: the exact element count, 0 any. */
static const struct {
    int lo, hi, type, alt, count;
} attr_types[] = {
    { CUDNN_ATTR_POINTWISE_MODE, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, -1, 1 },
    { CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, -1, 1 },
    { CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_DOUBLE, CUDNN_TYPE_FLOAT, 1 },
    { CUDNN_ATTR_POINTWISE_AXIS, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, -1, 1 },
    { CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, -1, 1 },
    { CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, -1, 0 },
    { CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, -1, 1 },
    { CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 0 },
    { CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32, -1, 1 },
    { CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 0 },
    { CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED, CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED, CUDNN_TYPE_INT32, -1, 1 },
    { CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, -1, 1 },
    { CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS, CUDNN_TYPE_INT64, -1, 0 },
    { CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, -1, 0 },
    { CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, -1, 1 },
    { CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, CUDNN_TYPE_DOUBLE, 1 },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, CUDNN_TYPE_DOUBLE, 1 },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, CUDNN_TYPE_DOUBLE, 1 },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, CUDNN_TYPE_DOUBLE, 1 },
    { CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, -1, 1 },
    { CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 0 },
    { CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, -1, 1 },
    { CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, -1, 0 },
    { CUDNN_ATTR_TENSOR_VECTOR_COUNT, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, -1, 1 },
    { CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, -1, 0 },
    { CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, -1, 0 },
    { CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, -1, 1 },
    { CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, -1, 0 },
    { CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, -1, 0 },
    { CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, -1, 1 },
    { CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, -1, 1 },
    { CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, -1, 1 },
    { CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
    { CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, -1, 1 },
};

/* 0 if type / count are acceptable for attribute name, else the status. */
static cudnnStatus_t attr_type_check(int name, int type, int64_t count)
{
    for (size_t i = 0; i < sizeof attr_types / sizeof *attr_types; i++) {
        if (name < attr_types[i].lo || name > attr_types[i].hi)
            continue;
        if (type != attr_types[i].type && type != attr_types[i].alt)
            return CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE;
        if (attr_types[i].count && count != attr_types[i].count)
            return CUDNN_STATUS_BAD_PARAM;
        return CUDNN_STATUS_SUCCESS;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the API ---- */

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *desc)
{
    DNN_ENTER();
    if (!desc)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnBackendCreateDescriptor: NULL result pointer"));
    /* The real library fails an unknown type as an allocation failure. */
    if (!type_known(type))
        DNN_RETURN(dnn_error(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED,
                             "cudnnBackendCreateDescriptor: unknown descriptor type %d", (int)type));
    struct be_desc *d = be_new(type);
    if (!d)
        DNN_RETURN(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
    *desc = d;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t desc)
{
    DNN_ENTER();
    struct be_desc *d = be_desc(desc);
    if (!d)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnBackendDestroyDescriptor: not a descriptor"));
    be_free(d);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Back to the state after creation: no attributes, not finalized. */
cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t desc)
{
    DNN_ENTER();
    struct be_desc *d = be_desc(desc);
    if (!d)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    be_clear(d);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void *elements)
{
    DNN_ENTER();
    struct be_desc *d = be_desc(desc);
    if (!d)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnBackendSetAttribute: not a descriptor"));
    if (d->finalized)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "attribute %d set on a finalized descriptor", (int)name));
    if (!attr_belongs(d->type, name))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "attribute %d does not belong to descriptor type %d", (int)name,
                             d->type));
    if (count < 0 || (count > 0 && !elements) || !be_type_bytes(type))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "attribute %d: %lld elements at %p of type %d", (int)name,
                             (long long)count, elements, (int)type));
    cudnnStatus_t st = attr_type_check(name, type, count);
    if (st != CUDNN_STATUS_SUCCESS)
        DNN_RETURN(dnn_error(st, "attribute %d: type %d or count %lld is not the attribute's", (int)name, (int)type,
                             (long long)count));
    st = be_put(d, name, type, count, elements);
    if (st != CUDNN_STATUS_SUCCESS)
        dnn_error(st, "attribute %d: a descriptor given is not one", (int)name);
    DNN_RETURN(st);
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const desc, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                                       void *elements)
{
    DNN_ENTER();
    const struct be_desc *d = be_desc(desc);
    if (!d)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnBackendGetAttribute: not a descriptor"));
    if (!d->finalized)
        DNN_RETURN(dnn_error(CUDNN_STATUS_NOT_INITIALIZED, "attribute %d read before the descriptor was finalized",
                             (int)name));
    if (!attr_belongs(d->type, name))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "attribute %d does not belong to descriptor type %d", (int)name,
                             d->type));
    const struct be_attr *a = be_attr(d, name);
    if (!a)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "attribute %d was never set", (int)name));
    if (a->type != (int)type)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE, "attribute %d has type %d, not %d", (int)name,
                             a->type, (int)type));
    if (requested < 0)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "attribute %d: %lld elements requested", (int)name,
                             (long long)requested));
    /* no array: only the count is asked for */
    if (!elements)
        requested = 0;
    int64_t n = requested < a->count ? requested : a->count;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        /* into the caller's descriptors, which must be of the stored type */
        for (int64_t i = 0; i < n; i++) {
            struct be_desc *dst = be_desc(((void **)elements)[i]);
            const struct be_desc *src = ((struct be_desc **)a->data)[i];
            if (!dst || dst->type != src->type)
                DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE,
                                     "element %lld: a descriptor of type %d is needed", (long long)i, src->type));
            if (be_assign(dst, src) != CUDNN_STATUS_SUCCESS)
                DNN_RETURN(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
        }
    } else if (n > 0) {
        memcpy(elements, a->data, (size_t)n * (size_t)be_type_bytes(a->type));
    }
    if (count)
        *count = requested > 0 ? n : a->count;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t desc)
{
    DNN_ENTER();
    struct be_desc *d = be_desc(desc);
    if (!d)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnBackendFinalize: not a descriptor"));
    if (d->finalized)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "descriptor of type %d is already finalized", d->type));
    cudnnStatus_t st = be_finalize(d);
    if (st == CUDNN_STATUS_SUCCESS)
        d->finalized = 1;
    DNN_RETURN(st);
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack)
{
    DNN_ENTER();
    return be_execute(handle, EMU_API_ID(__func__), emu_call_t0_, be_desc(plan), be_desc(pack));
}
