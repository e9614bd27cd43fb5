/* Entry and exit of a call in a stand-in library whose calls need nothing
 * more in the trace than the common CALL record (cuFFT, cuSPARSE, cuSOLVER,
 * NVRTC, CUPTI, ...): start the emulator, time the call, trace it.
 *
 *   nvrtcResult nvrtcVersion(int *major, int *minor)
 *   {
 *       EMU_CALL_ENTER(NVRTC_ERROR_INTERNAL_ERROR);
 *       ...
 *       EMU_CALL_RETURN(NVRTC_SUCCESS);
 *   }
 */
#ifndef MAYA_EMU_CALL_H
#define MAYA_EMU_CALL_H

#include <stdlib.h>

#include "emu.h"
#include "maya/common.h"

/* init_failed: the library's code for "the emulator could not start". */
#define EMU_CALL_ENTER(init_failed) \
    if (emu_enter() != EMU_OK) \
        return (init_failed); \
    uint64_t emu_call_t0_ = emu_now()

#define EMU_CALL_RETURN_STREAM(result, stream_id) \
    do { \
        __typeof__(result) emu_call_r_ = (result); \
        emu_trace_call(EMU_API_ID(__func__), emu_call_t0_, (int)emu_call_r_, (stream_id), 0); \
        return emu_call_r_; \
    } while (0)

#define EMU_CALL_RETURN(result) EMU_CALL_RETURN_STREAM(result, 0)

/* The trace id of a stream handle (cudaStream_t / CUstream), 0 when it is
 * not one the emulator knows. */
static inline uint64_t emu_stream_id(const void *handle)
{
    struct emu_stream *s = emu_stream_resolve(handle, 0);
    return s ? s->id : 0;
}

/* libraryPropertyType queries (MAJOR_VERSION = 0, MINOR_VERSION = 1,
 * PATCH_LEVEL = 2): 0 and *value set, or -1 for another type or no value. */
static inline int emu_library_property(int type, int major, int minor, int patch, int *value)
{
    if (!value || type < 0 || type > 2)
        return -1;
    *value = type == 0 ? major : type == 1 ? minor : patch;
    return 0;
}

/* An opaque library handle (cusparseHandle_t, cusolverDnHandle_t, ...):
 * its magic tells handles of this library from anything else. A library
 * declares its context struct as { struct emu_lib_handle h; }. */
struct emu_lib_handle {
    uint32_t magic;
    const void *stream;          /* the stream work is issued to (NULL: legacy default) */
};

static inline void *emu_lib_handle_new(size_t bytes, uint32_t magic)
{
    struct emu_lib_handle *h = calloc(1, bytes);
    if (h)
        h->magic = magic;
    return h;
}

static inline int emu_lib_handle_ok(const void *h, uint32_t magic)
{
    return h && ((const struct emu_lib_handle *)h)->magic == magic;
}

static inline void emu_lib_handle_free(void *h)
{
    ((struct emu_lib_handle *)h)->magic = 0;
    free(h);
}

/* What a library's Create / Destroy / SetStream / GetStream do with such a
 * handle, as an emu_err the library maps onto its status codes:
 * EMU_ERR_INVALID_HANDLE when h is not one of this library's handles,
 * EMU_ERR_INVALID_VALUE for a missing argument or an unknown stream. */
static inline enum emu_err emu_lib_create(void **out, size_t bytes, uint32_t magic)
{
    if (!out)
        return EMU_ERR_INVALID_VALUE;
    *out = emu_lib_handle_new(bytes, magic);
    return *out ? EMU_OK : EMU_ERR_OUT_OF_MEMORY;
}

static inline enum emu_err emu_lib_destroy(void *h, uint32_t magic)
{
    if (!emu_lib_handle_ok(h, magic))
        return EMU_ERR_INVALID_HANDLE;
    emu_lib_handle_free(h);
    return EMU_OK;
}

static inline enum emu_err emu_lib_set_stream(void *h, uint32_t magic, const void *stream)
{
    if (!emu_lib_handle_ok(h, magic))
        return EMU_ERR_INVALID_HANDLE;
    if (!emu_stream_resolve(stream, 0))
        return EMU_ERR_INVALID_VALUE;
    ((struct emu_lib_handle *)h)->stream = stream;
    return EMU_OK;
}

static inline enum emu_err emu_lib_get_stream(const void *h, uint32_t magic, void **stream)
{
    if (!emu_lib_handle_ok(h, magic))
        return EMU_ERR_INVALID_HANDLE;
    if (!stream)
        return EMU_ERR_INVALID_VALUE;
    *stream = (void *)((const struct emu_lib_handle *)h)->stream;
    return EMU_OK;
}

#endif
