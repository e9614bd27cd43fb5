/* Runtime copies and memsets: linear, 2D, 3D, peer, to and from symbols,
 * synchronous and on streams, with their _ptds / _ptsz twins. Copies and
 * memsets up to the copy threshold move bytes for real (core trace_ops.c);
 * every one is traced with its direction and size. */
#include "rt.h"

#include <string.h>

/* Does the copy kind the caller named agree with where the pointers are? */
static int kind_matches(enum cudaMemcpyKind kind, uint32_t actual)
{
    switch (kind) {
    case cudaMemcpyDefault: return 1;
    case cudaMemcpyHostToHost: return actual == MAYA_COPY_H2H;
    case cudaMemcpyHostToDevice: return actual == MAYA_COPY_H2D;
    case cudaMemcpyDeviceToHost: return actual == MAYA_COPY_D2H;
    case cudaMemcpyDeviceToDevice: return actual == MAYA_COPY_D2D || actual == MAYA_COPY_PEER;
    }
    return 0;
}

cudaError_t rt_copy_check(struct emu_copy *c, enum cudaMemcpyKind kind)
{
    uint64_t bytes = c->width * MAYA_MAX(c->height, 1) * MAYA_MAX(c->depth, 1);
    emu_copy_classify(c);
    if ((int)kind < 0 || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (bytes && (!c->dst || !c->src))
        return cudaErrorInvalidValue;
    if (bytes && !kind_matches(kind, c->kind))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t rt_copy(uint32_t api, uint64_t t0, struct emu_copy *c, enum cudaMemcpyKind kind)
{
    cudaError_t e = rt_copy_check(c, kind);
    if (e == cudaSuccess)
        e = rt_error(emu_copy_finish(api, t0, e, c));
    else
        emu_trace_call(api, t0, e, c->stream ? c->stream->id : 0, 0);
    return rt_note(e);
}

/* The stream of a synchronous call (legacy or per-thread default): it may
 * not be capturing, and using the legacy one must not break a capture. The
 * host then waits for the stream's earlier work (host functions). */
static cudaError_t sync_stream(int pt, struct emu_stream **out)
{
    struct emu_stream *s = rt_stream(NULL, pt);
    if (!s)
        return cudaErrorInvalidResourceHandle;
    *out = s;
    return rt_error(emu_stream_issue_sync(s));
}

/* One linear or 2D copy, synchronous (stream NULL and async 0: the default
 * stream) or on a stream. */
static cudaError_t copy2d(uint32_t api, uint64_t t0, void *dst, size_t dpitch, const void *src, size_t spitch,
                          size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream, int pt,
                          int async)
{
    struct emu_stream *s = NULL;
    cudaError_t e = async ? rt_issue_stream(stream, pt, &s) : sync_stream(pt, &s);
    if (e == cudaSuccess && height > 1 && (width > dpitch || width > spitch))
        e = cudaErrorInvalidPitchValue;
    if (e != cudaSuccess) {
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
        return rt_note(e);
    }
    struct emu_copy c = { .dst = dst, .src = src, .width = width, .height = height, .depth = 1,
                          .dpitch = dpitch, .spitch = spitch, .stream = s, .async = async };
    return rt_copy(api, t0, &c, kind);
}

#define COPY1D(pt, async, stream) \
    copy2d(RT_API(), rt_t0, dst, count, src, count, count, 1, kind, stream, pt, async)

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return COPY1D(0, 0, NULL);
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return COPY1D(1, 0, NULL);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    RT_ENTER();
    return COPY1D(0, 1, stream);
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream)
{
    RT_ENTER();
    return COPY1D(1, 1, stream);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return copy2d(RT_API(), rt_t0, dst, dpitch, src, spitch, width, height, kind, NULL, 0, 0);
}

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return copy2d(RT_API(), rt_t0, dst, dpitch, src, spitch, width, height, kind, NULL, 1, 0);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    return copy2d(RT_API(), rt_t0, dst, dpitch, src, spitch, width, height, kind, stream, 0, 1);
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    return copy2d(RT_API(), rt_t0, dst, dpitch, src, spitch, width, height, kind, stream, 1, 1);
}

/* ---- peer copies ---- */

static cudaError_t copy_peer(uint32_t api, uint64_t t0, void *dst, int dstDevice, const void *src, int srcDevice,
                             size_t count, cudaStream_t stream, int pt, int async)
{
    if (!emu_device(dstDevice) || !emu_device(srcDevice)) {
        emu_trace_call(api, t0, cudaErrorInvalidDevice, 0, 0);
        return rt_note(cudaErrorInvalidDevice);
    }
    return copy2d(api, t0, dst, count, src, count, count, 1, cudaMemcpyDefault, stream, pt, async);
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    RT_ENTER();
    return copy_peer(RT_API(), rt_t0, dst, dstDevice, src, srcDevice, count, NULL, 0, 0);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    RT_ENTER();
    return copy_peer(RT_API(), rt_t0, dst, dstDevice, src, srcDevice, count, stream, 0, 1);
}

/* ---- 3D copies (pitched memory; CUDA arrays are not emulated) ---- */

static char *pitched_at(const struct cudaPitchedPtr *p, const struct cudaPos *pos)
{
    return (char *)p->ptr + pos->z * p->pitch * p->ysize + pos->y * p->pitch + pos->x;
}

cudaError_t rt_copy_from_parms(const struct cudaMemcpy3DParms *p, struct emu_copy *c)
{
    if (!p)
        return cudaErrorInvalidValue;
    if (p->srcArray || p->dstArray)
        return cudaErrorNotSupported; /* CUDA arrays (textures) are not emulated */
    if (p->extent.height > 1 && (p->extent.width > p->srcPtr.pitch || p->extent.width > p->dstPtr.pitch))
        return cudaErrorInvalidPitchValue;
    *c = (struct emu_copy){
        .dst = pitched_at(&p->dstPtr, &p->dstPos), .src = pitched_at(&p->srcPtr, &p->srcPos),
        .width = p->extent.width, .height = p->extent.height, .depth = p->extent.depth,
        .dpitch = p->dstPtr.pitch, .spitch = p->srcPtr.pitch,
        .dslice = p->dstPtr.pitch * p->dstPtr.ysize, .sslice = p->srcPtr.pitch * p->srcPtr.ysize,
    };
    return cudaSuccess;
}

static cudaError_t copy3d(uint32_t api, uint64_t t0, const struct cudaMemcpy3DParms *p, int peer_src, int peer_dst,
                          cudaStream_t stream, int pt, int async)
{
    struct emu_stream *s = NULL;
    struct emu_copy c;
    cudaError_t e = rt_copy_from_parms(p, &c);
    if (e == cudaSuccess && peer_src >= 0 && (!emu_device(peer_src) || !emu_device(peer_dst)))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        e = async ? rt_issue_stream(stream, pt, &s) : sync_stream(pt, &s);
    if (e != cudaSuccess) {
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
        return rt_note(e);
    }
    c.stream = s;
    c.async = async;
    return rt_copy(api, t0, &c, peer_src >= 0 ? cudaMemcpyDefault : p->kind);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    RT_ENTER();
    return copy3d(RT_API(), rt_t0, p, -1, -1, NULL, 0, 0);
}

cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    RT_ENTER();
    return copy3d(RT_API(), rt_t0, p, -1, -1, NULL, 1, 0);
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    RT_ENTER();
    return copy3d(RT_API(), rt_t0, p, -1, -1, stream, 0, 1);
}

cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    RT_ENTER();
    return copy3d(RT_API(), rt_t0, p, -1, -1, stream, 1, 1);
}

static void peer_parms(const struct cudaMemcpy3DPeerParms *pp, struct cudaMemcpy3DParms *p)
{
    memset(p, 0, sizeof *p);
    p->srcArray = pp->srcArray;
    p->srcPos = pp->srcPos;
    p->srcPtr = pp->srcPtr;
    p->dstArray = pp->dstArray;
    p->dstPos = pp->dstPos;
    p->dstPtr = pp->dstPtr;
    p->extent = pp->extent;
    p->kind = cudaMemcpyDefault;
}

static cudaError_t copy3d_peer(uint32_t api, uint64_t t0, const struct cudaMemcpy3DPeerParms *pp,
                               cudaStream_t stream, int pt, int async)
{
    struct cudaMemcpy3DParms p;
    if (!pp) {
        emu_trace_call(api, t0, cudaErrorInvalidValue, 0, 0);
        return rt_note(cudaErrorInvalidValue);
    }
    peer_parms(pp, &p);
    return copy3d(api, t0, &p, pp->srcDevice, pp->dstDevice, stream, pt, async);
}

cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    RT_ENTER();
    return copy3d_peer(RT_API(), rt_t0, p, NULL, 0, 0);
}

cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
    RT_ENTER();
    return copy3d_peer(RT_API(), rt_t0, p, NULL, 1, 0);
}

cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    RT_ENTER();
    return copy3d_peer(RT_API(), rt_t0, p, stream, 0, 1);
}

cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    RT_ENTER();
    return copy3d_peer(RT_API(), rt_t0, p, stream, 1, 1);
}

/* ---- copies to and from __device__ / __constant__ variables ---- */

static cudaError_t copy_symbol(uint32_t api, uint64_t t0, int to_symbol, void *host, const void *symbol,
                               size_t count, size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream, int pt,
                               int async)
{
    void *dev = NULL;
    size_t bytes = 0;
    cudaError_t e = rt_symbol(symbol, &dev, &bytes);
    if (e == cudaSuccess && (offset > bytes || count > bytes - offset))
        e = cudaErrorInvalidValue;
    else if (e == cudaSuccess && kind != cudaMemcpyDefault &&
             kind != (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) &&
             kind != cudaMemcpyDeviceToDevice)
        e = cudaErrorInvalidMemcpyDirection;
    if (e != cudaSuccess) {
        emu_trace_call(api, t0, e, 0, 0);
        return rt_note(e);
    }
    char *d = (char *)dev + offset;
    return to_symbol ? copy2d(api, t0, d, count, host, count, count, 1, kind, stream, pt, async)
                     : copy2d(api, t0, host, count, d, count, count, 1, kind, stream, pt, async);
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 1, (void *)src, symbol, count, offset, kind, NULL, 0, 0);
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 1, (void *)src, symbol, count, offset, kind, NULL, 1, 0);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 0, dst, symbol, count, offset, kind, NULL, 0, 0);
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 0, dst, symbol, count, offset, kind, NULL, 1, 0);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 1, (void *)src, symbol, count, offset, kind, stream, 0, 1);
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count, size_t offset,
                                         enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 1, (void *)src, symbol, count, offset, kind, stream, 1, 1);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 0, dst, symbol, count, offset, kind, stream, 0, 1);
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    return copy_symbol(RT_API(), rt_t0, 0, dst, symbol, count, offset, kind, stream, 1, 1);
}

/* ---- memsets ---- */

cudaError_t rt_memset(uint32_t api, uint64_t t0, void *dst, int value, size_t width, size_t height,
                      size_t pitch, struct emu_stream *stream, int async)
{
    size_t bytes = width * MAYA_MAX(height, 1);
    int dev = emu_ptr_device((uint64_t)(uintptr_t)dst, NULL);
    cudaError_t e = cudaSuccess;
    if (bytes && (!dst || dev < 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = rt_error(emu_memset_finish(api, t0, e, dst, (uint32_t)value, 1, width, height, pitch, stream, async));
    else
        emu_trace_call(api, t0, e, stream ? stream->id : 0, 0);
    return rt_note(e);
}

/* cudaMemset is asynchronous with respect to the host for device memory:
 * it goes to the default stream like cudaMemsetAsync(..., 0). */
static cudaError_t memset2d(uint32_t api, uint64_t t0, void *dst, size_t pitch, int value, size_t width,
                            size_t height, cudaStream_t stream, int pt, int async)
{
    struct emu_stream *s = NULL;
    cudaError_t e = rt_issue_stream(stream, pt, &s);
    if (e == cudaSuccess && height > 1 && width > pitch)
        e = cudaErrorInvalidPitchValue;
    if (e != cudaSuccess) {
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
        return rt_note(e);
    }
    return rt_memset(api, t0, dst, value, width, height, pitch, s, async);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, count, value, count, 1, NULL, 0, 0);
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, count, value, count, 1, NULL, 1, 0);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, count, value, count, 1, stream, 0, 1);
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, count, value, count, 1, stream, 1, 1);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, pitch, value, width, height, NULL, 0, 0);
}

cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, pitch, value, width, height, NULL, 1, 0);
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, pitch, value, width, height, stream, 0, 1);
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream)
{
    RT_ENTER();
    return memset2d(RT_API(), rt_t0, devPtr, pitch, value, width, height, stream, 1, 1);
}

/* A 3D memset is one 2D memset when slices follow each other without a gap,
 * else one per slice. */
static cudaError_t memset3d(uint32_t api, uint64_t t0, struct cudaPitchedPtr p, int value, struct cudaExtent ext,
                            cudaStream_t stream, int pt, int async)
{
    if (ext.depth <= 1 || p.ysize == ext.height)
        return memset2d(api, t0, p.ptr, p.pitch, value, ext.width, ext.height * MAYA_MAX(ext.depth, 1), stream,
                        pt, async);
    cudaError_t e = cudaSuccess;
    for (size_t z = 0; z < ext.depth && e == cudaSuccess; z++)
        e = memset2d(api, t0, (char *)p.ptr + z * p.pitch * p.ysize, p.pitch, value, ext.width, ext.height, stream,
                     pt, async);
    return e;
}

cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent ext)
{
    RT_ENTER();
    return memset3d(RT_API(), rt_t0, p, value, ext, NULL, 0, 0);
}

cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr p, int value, struct cudaExtent ext)
{
    RT_ENTER();
    return memset3d(RT_API(), rt_t0, p, value, ext, NULL, 1, 0);
}

cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent ext, cudaStream_t stream)
{
    RT_ENTER();
    return memset3d(RT_API(), rt_t0, p, value, ext, stream, 0, 1);
}

cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr p, int value, struct cudaExtent ext,
                                   cudaStream_t stream)
{
    RT_ENTER();
    return memset3d(RT_API(), rt_t0, p, value, ext, stream, 1, 1);
}
