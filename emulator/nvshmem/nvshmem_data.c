/* NVSHMEM stand-in: the data objects libnvshmem_host.so.3 exports (PyTorch's
 * libtorch_nvshmem.so imports nvshmem_selected_device_transport). They must
 * be data, not the generated function stubs, so they are defined here with
 * the real sizes. Every NVSHMEM function is a "not supported" stub: PyTorch
 * uses NVSHMEM only for symmetric memory, which the workloads do not use. */
#include <pthread.h>
#include <stdint.h>

void *nvshmem_debug_file;
int nvshmem_debug_level;
uint64_t nvshmem_debug_mask;
pthread_mutex_t nvshmem_debug_output_lock = PTHREAD_MUTEX_INITIALIZER;
void *nvshmem_error;
int nvshmem_nvtx_options;
int nvshmem_options;
/* No device transport is selected: NVSHMEM is not initialised. */
int nvshmem_selected_device_transport = -1;
