/* cuDNN backend descriptors: the attribute store (be_store.h). */
#include <stdlib.h>
#include <string.h>

#include "be_store.h"

/* Bytes of one element of each cudnnBackendAttributeType_t. */
int be_type_bytes(int type)
{
    switch (type) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE: case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
        return 8;
    case CUDNN_TYPE_BOOLEAN: case CUDNN_TYPE_CHAR: return 1;
    case CUDNN_TYPE_FRACTION: return 16;
    default: return type >= 0 && type <= BE_TYPE_RESHAPE_MODE ? 4 : 0;
    }
}

struct be_desc *be_new(int type)
{
    struct be_desc *d = calloc(1, sizeof *d);
    if (d) {
        d->magic = BE_MAGIC;
        d->type = type;
    }
    return d;
}

static void attr_clear(struct be_attr *a)
{
    if (a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
        for (int64_t i = 0; i < a->count; i++)
            be_free(((struct be_desc **)a->data)[i]);
    free(a->data);
    a->data = NULL;
}

void be_clear(struct be_desc *d)
{
    for (int i = 0; i < d->nattrs; i++)
        attr_clear(&d->attrs[i]);
    free(d->attrs);
    d->attrs = NULL;
    d->nattrs = d->cap = 0;
    d->finalized = 0;
}

void be_free(struct be_desc *d)
{
    if (!d)
        return;
    be_clear(d);
    d->magic = 0;
    free(d);
}

/* A deep copy of d: its attributes, and the descriptors they hold. */
static struct be_desc *be_clone(const struct be_desc *d)
{
    struct be_desc *c = be_new(d->type);
    if (!c)
        return NULL;
    for (int i = 0; i < d->nattrs; i++)
        if (be_put(c, d->attrs[i].name, d->attrs[i].type, d->attrs[i].count, d->attrs[i].data)) {
            be_free(c);
            return NULL;
        }
    c->finalized = d->finalized;
    return c;
}

cudnnStatus_t be_assign(struct be_desc *dst, const struct be_desc *src)
{
    struct be_desc *c = be_clone(src);
    if (!c)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    be_clear(dst);
    *dst = *c;
    free(c); /* its contents now belong to dst */
    return CUDNN_STATUS_SUCCESS;
}

const struct be_attr *be_attr(const struct be_desc *d, int name)
{
    for (int i = 0; d && i < d->nattrs; i++)
        if (d->attrs[i].name == name)
            return &d->attrs[i];
    return NULL;
}

cudnnStatus_t be_put(struct be_desc *d, int name, int type, int64_t count, const void *data)
{
    size_t bytes = (size_t)count * (size_t)be_type_bytes(type);
    void *copy = bytes ? malloc(bytes) : NULL;
    if (bytes && !copy)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (int64_t i = 0; i < count; i++) {
            const struct be_desc *src = be_desc(((void *const *)data)[i]);
            struct be_desc *c = src ? be_clone(src) : NULL;
            if (!c) {
                while (i-- > 0)
                    be_free(((struct be_desc **)copy)[i]);
                free(copy);
                return src ? CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED : CUDNN_STATUS_BAD_PARAM;
            }
            ((struct be_desc **)copy)[i] = c;
        }
    } else if (bytes) {
        memcpy(copy, data, bytes);
    }
    struct be_attr *a = (struct be_attr *)be_attr(d, name);
    if (a) {
        attr_clear(a);
    } else {
        if (d->nattrs == d->cap) {
            int cap = d->cap ? d->cap * 2 : 8;
            struct be_attr *n = realloc(d->attrs, (size_t)cap * sizeof *n);
            if (!n) {
                struct be_attr tmp = { name, type, count, copy };
                attr_clear(&tmp);
                return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
            }
            d->attrs = n, d->cap = cap;
        }
        a = &d->attrs[d->nattrs++];
    }
    a->name = name, a->type = type, a->count = count, a->data = copy;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- readers ---- */

int be_int64(const struct be_desc *d, int name, int64_t *v)
{
    int n;
    return be_int64s(d, name, v, 1, &n) && n == 1;
}

int be_int64s(const struct be_desc *d, int name, int64_t *v, int max, int *n)
{
    const struct be_attr *a = be_attr(d, name);
    if (!a || a->type != CUDNN_TYPE_INT64)
        return 0;
    *n = (int)(a->count < max ? a->count : max);
    memcpy(v, a->data, (size_t)*n * sizeof *v);
    return 1;
}

int be_enum(const struct be_desc *d, int name, int *v)
{
    const struct be_attr *a = be_attr(d, name);
    if (!a || a->count < 1 || be_type_bytes(a->type) != 4 || a->type == CUDNN_TYPE_FLOAT)
        return 0;
    memcpy(v, a->data, 4);
    return 1;
}

int be_bool(const struct be_desc *d, int name, int *v)
{
    const struct be_attr *a = be_attr(d, name);
    if (!a || a->type != CUDNN_TYPE_BOOLEAN || a->count < 1)
        return 0;
    *v = *(const unsigned char *)a->data != 0;
    return 1;
}

int be_real(const struct be_desc *d, int name, double *v)
{
    const struct be_attr *a = be_attr(d, name);
    if (!a || a->count < 1)
        return 0;
    if (a->type == CUDNN_TYPE_DOUBLE) {
        memcpy(v, a->data, 8);
        return 1;
    }
    if (a->type == CUDNN_TYPE_FLOAT) {
        float f;
        memcpy(&f, a->data, 4);
        *v = f;
        return 1;
    }
    return 0;
}

struct be_desc *be_ref(const struct be_desc *d, int name, int64_t i)
{
    const struct be_attr *a = be_attr(d, name);
    if (!a || a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || i < 0 || i >= a->count)
        return NULL;
    return ((struct be_desc **)a->data)[i];
}
