/* cuDNN backend (graph) API: descriptors and what graph.c needs of them.
 *
 * A descriptor is {type, finalized, attribute -> (type, count, bytes)}.
 * cudnnBackendSetAttribute deep-copies the elements; a descriptor-valued
 * attribute holds clones of the descriptors given (recursively), so a
 * program may destroy what it passed. Values cuDNN computes (engine counts,
 * heuristic results, workspace sizes) are stored as attributes when the
 * descriptor is finalized, and cudnnBackendGetAttribute reads any attribute
 * the same way; a descriptor-valued one is copied into the descriptors the
 * caller made (as for engine configs from heuristics). */
#ifndef MAYA_EMU_DNN_BACKEND_H
#define MAYA_EMU_DNN_BACKEND_H

#include "dnn.h"

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

struct be_desc *be_new(int type);
void be_free(struct be_desc *d);
const struct be_attr *be_attr(const struct be_desc *d, int name);
/* Store an attribute (replacing one of the same name); descriptor values
 * are cloned. 0, or a cudnnStatus_t. */
cudnnStatus_t be_put(struct be_desc *d, int name, int type, int64_t count, const void *data);

/* Readers for graph.c: 1 found (and of a type they can read), 0 not. */
int be_int64(const struct be_desc *d, int name, int64_t *v);
int be_int64s(const struct be_desc *d, int name, int64_t *v, int max, int *n);
int be_enum(const struct be_desc *d, int name, int *v); /* any 4-byte enum / INT32 / DATA_TYPE */
int be_bool(const struct be_desc *d, int name, int *v);
int be_real(const struct be_desc *d, int name, double *v); /* FLOAT or DOUBLE */
/* The i-th descriptor of a descriptor-valued attribute, or NULL. */
struct be_desc *be_ref(const struct be_desc *d, int name, int64_t i);

/* graph.c: what finalizing each type checks and computes; and execution. */
cudnnStatus_t be_finalize(struct be_desc *d);
cudnnStatus_t be_execute(cudnnHandle_t h, uint32_t api, uint64_t t0, struct be_desc *plan, struct be_desc *pack);

#endif
