/* cuFFT stand-in: version queries. PyTorch loads cuFFT for torch.fft; FFT
 * plans and execution are not emulated (the generated stubs return
 * CUFFT_NOT_SUPPORTED and are counted). */
#include <cufft.h>

#include "emu_call.h"

cufftResult cufftGetVersion(int *version)
{
    EMU_CALL_ENTER(CUFFT_INTERNAL_ERROR);
    if (!version)
        EMU_CALL_RETURN(CUFFT_INVALID_VALUE);
    *version = CUFFT_VERSION;
    EMU_CALL_RETURN(CUFFT_SUCCESS);
}

cufftResult cufftGetProperty(libraryPropertyType type, int *value)
{
    EMU_CALL_ENTER(CUFFT_INTERNAL_ERROR);
    if (emu_library_property(type, CUFFT_VER_MAJOR, CUFFT_VER_MINOR, CUFFT_VER_PATCH, value))
        EMU_CALL_RETURN(CUFFT_INVALID_TYPE);
    EMU_CALL_RETURN(CUFFT_SUCCESS);
}
