/* cuDNN backend descriptors as maya keeps them: {type, finalized,
 * attribute -> (type, count, bytes)}, the elements deep-copied when set; a
 * descriptor-valued attribute holds clones of the descriptors given
 * (recursively), so a program may destroy what it passed.
 *
 * Shared by the emulated cuDNN (whose descriptors are these) and the
 * passthrough profiler (emulator/profile/dnn_graph.c), which keeps one of
 * these beside each real descriptor, following the program's calls, so
 * that be_trace.c can recognise what a real cudnnBackendExecute runs.
 * Nothing here traces or validates: the callers do. */
#ifndef MAYA_EMU_DNN_BE_STORE_H
#define MAYA_EMU_DNN_BE_STORE_H

#include <cudnn.h>
#include <stdint.h>

#define BE_MAGIC 0x646e6265u

/* Descriptor types and attributes of cuDNN 9.20 and later, which the
 * toolkit's 9.19 headers lack; programs built against a newer cuDNN
 * (PyTorch 2.15's frontend) use them. Values from cuDNN's API. */
enum {
    BE_OPERATION_DIAGONAL_BAND_MASK = 44,   /* 9.20 */
    BE_OPERATION_SOFTMAX = 45,              /* 9.20 */
    BE_OPERATION_TRANSPOSE = 46,            /* 9.22 */
    BE_OPERATION_SLICE = 47,                /* 9.22 */
    BE_OPERATION_MOE_GROUPED_MATMUL_BWD = 48, /* 9.22 */
    BE_LAST_TYPE = 48,
    BE_ATTR_DIAGONAL_BAND_MASK_XDESC = 3000,
    BE_ATTR_DIAGONAL_BAND_MASK_YDESC = 3006,
    BE_ATTR_SOFTMAX_XDESC = 3100,
    BE_ATTR_SOFTMAX_YDESC = 3101,
    BE_TYPE_RESHAPE_MODE = 31,              /* 9.22: the last attribute type */
};

struct be_attr {
    int name;                    /* cudnnBackendAttributeName_t */
    int type;                    /* cudnnBackendAttributeType_t */
    int64_t count;
    void *data;                  /* count elements; BACKEND_DESCRIPTOR: struct be_desc * clones */
};

struct be_desc {
    uint32_t magic;
    int type;                    /* cudnnBackendDescriptorType_t */
    int finalized;
    int nattrs, cap;
    struct be_attr *attrs;
};

static inline struct be_desc *be_desc(const void *d)
{
    struct be_desc *b = (struct be_desc *)d;
    return b && b->magic == BE_MAGIC ? b : NULL;
}

/* Bytes of one element of a cudnnBackendAttributeType_t, 0 if unknown. */
int be_type_bytes(int type);

struct be_desc *be_new(int type);
void be_free(struct be_desc *d);
/* Back to the state after creation: no attributes, not finalized. */
void be_clear(struct be_desc *d);
const struct be_attr *be_attr(const struct be_desc *d, int name);
/* Store an attribute (replacing one of the same name); descriptor values
 * (struct be_desc pointers) are cloned. 0, or a cudnnStatus_t. */
cudnnStatus_t be_put(struct be_desc *d, int name, int type, int64_t count, const void *data);
/* Make dst a deep copy of src (dst stays the same object): what reading a
 * descriptor-valued attribute into a caller's descriptor does. */
cudnnStatus_t be_assign(struct be_desc *dst, const struct be_desc *src);

/* Readers: 1 found (and of a type they can read), 0 not. */
int be_int64(const struct be_desc *d, int name, int64_t *v);
int be_int64s(const struct be_desc *d, int name, int64_t *v, int max, int *n);
int be_enum(const struct be_desc *d, int name, int *v); /* any 4-byte enum / INT32 / DATA_TYPE */
int be_bool(const struct be_desc *d, int name, int *v);
int be_real(const struct be_desc *d, int name, double *v); /* FLOAT or DOUBLE */
/* The i-th descriptor of a descriptor-valued attribute, or NULL. */
struct be_desc *be_ref(const struct be_desc *d, int name, int64_t i);

#endif
