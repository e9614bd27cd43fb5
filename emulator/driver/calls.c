/* What driver-API calls ask for (calls.h). */
#define __CUDA_API_VERSION_INTERNAL 1
#include "calls.h"

#include <stdio.h>
#include <string.h>

uint32_t drv_api_id(const char *func)
{
    char name[128];
    snprintf(name, sizeof name, "%s", func);
    size_t n = strlen(name);
    if (n > 5 && (strcmp(name + n - 5, "_ptsz") == 0 || strcmp(name + n - 5, "_ptds") == 0))
        name[n -= 5] = 0;
    size_t v = n;
    while (v > 0 && name[v - 1] >= '0' && name[v - 1] <= '9')
        v--;
    if (v < n && v >= 2 && name[v - 1] == 'v' && name[v - 2] == '_')
        name[v - 2] = 0;
    return emu_string(name);
}

CUresult drv_launch_extra(void **extra, const void **buf, size_t *bytes)
{
    return emu_launch_extra(extra, buf, bytes) == EMU_OK ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult drv_launch_config(const CUlaunchConfig *c, struct drv_launch_req *r)
{
    if (!c || (c->numAttrs && !c->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    r->grid[0] = c->gridDimX, r->grid[1] = c->gridDimY, r->grid[2] = c->gridDimZ;
    r->block[0] = c->blockDimX, r->block[1] = c->blockDimY, r->block[2] = c->blockDimZ;
    r->smem = c->sharedMemBytes;
    r->stream = c->hStream;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *a = &c->attrs[i];
        switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            r->cluster[0] = a->value.clusterDim.x;
            r->cluster[1] = a->value.clusterDim.y;
            r->cluster[2] = a->value.clusterDim.z;
            break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            if (a->value.cooperative)
                r->flags |= MAYA_LAUNCH_COOPERATIVE;
            break;
        default:
            if ((unsigned)a->id > CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING)
                return CUDA_ERROR_INVALID_VALUE;
            break;
        }
    }
    return CUDA_SUCCESS;
}

void drv_launch_describe(const struct drv_launch_req *r, struct emu_kernel *k, struct emu_stream *s,
                         struct emu_launch *l)
{
    memset(l, 0, sizeof *l);
    l->kernel = k;
    memcpy(l->grid, r->grid, sizeof l->grid);
    memcpy(l->block, r->block, sizeof l->block);
    memcpy(l->cluster, r->cluster, sizeof l->cluster);
    l->smem_bytes = r->smem;
    l->stream = s;
    l->flags = r->flags | MAYA_LAUNCH_DRIVER;
}

/* The end's first byte, or NULL if it cannot be addressed. */
static char *end_address(const struct drv_copy_end *e, size_t width, size_t rows, size_t depth)
{
    const char *base;
    switch (e->type) {
    case CU_MEMORYTYPE_HOST: base = e->host; break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = (const char *)(uintptr_t)e->device; break;
    default: return NULL;
    }
    if (!base || (rows > 1 && e->pitch < width + e->x) || (depth > 1 && e->height < rows + e->y))
        return NULL;
    return (char *)base + e->z * e->pitch * e->height + e->y * e->pitch + e->x;
}

void drv_copy_layout(struct emu_copy *c, const struct drv_copy_end *d, const struct drv_copy_end *s, size_t width,
                     size_t height, size_t depth)
{
    height = height ? height : 1;
    depth = depth ? depth : 1;
    c->dst = end_address(d, width, height, depth);
    c->src = end_address(s, width, height, depth);
    c->width = width;
    c->height = height;
    c->depth = depth;
    c->dpitch = d->pitch ? d->pitch : width;
    c->spitch = s->pitch ? s->pitch : width;
    c->dslice = c->dpitch * d->height;
    c->sslice = c->spitch * s->height;
}
