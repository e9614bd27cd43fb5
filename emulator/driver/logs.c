/* Driver logs (CUDA 12.9+; PyTorch registers a callback at start-up). The
 * emulated driver writes no log messages: callbacks are kept but never
 * called, and dumps are empty. */
#include "drv.h"

#include <stdlib.h>

#define LOG_HANDLE_MAGIC 0x6c6f6763u

struct CUlogsCallbackEntry_st {
    uint32_t magic;
    CUlogsCallback fn;
    void *data;
};

CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void *userData, CUlogsCallbackHandle *callback_out)
{
    DRV_ENTER_NOINIT();
    if (!callbackFunc || !callback_out)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    struct CUlogsCallbackEntry_st *h = malloc(sizeof *h);
    if (!h)
        DRV_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    *h = (struct CUlogsCallbackEntry_st){ LOG_HANDLE_MAGIC, callbackFunc, userData };
    *callback_out = h;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback)
{
    DRV_ENTER_NOINIT();
    if (!callback || callback->magic != LOG_HANDLE_MAGIC)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    /* The entry stays allocated (magic cleared) so that a second
     * unregistration is refused instead of reading freed memory. */
    callback->magic = 0;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuLogsCurrent(CUlogIterator *iterator_out, unsigned int flags)
{
    DRV_ENTER_NOINIT();
    if (!iterator_out || flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *iterator_out = 0;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuLogsDumpToFile(CUlogIterator *iterator, const char *pathToFile, unsigned int flags)
{
    DRV_ENTER_NOINIT();
    if (!pathToFile || flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(maya_write_file_atomic(pathToFile, "", 0) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult cuLogsDumpToMemory(CUlogIterator *iterator, char *buffer, size_t *size, unsigned int flags)
{
    DRV_ENTER_NOINIT();
    if (!buffer || !size || !*size || flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    buffer[0] = 0; /* no messages: an empty, terminated buffer */
    *size = 0;
    DRV_RETURN(CUDA_SUCCESS);
}
