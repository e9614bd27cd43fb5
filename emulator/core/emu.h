/* The emulator core: what every stand-in library (cudart, driver, cuBLAS,
 * cuDNN, NCCL) shares. It lives in libmaya-core.so so that there is one copy
 * of the state in a process however many stand-ins are loaded.
 *
 * The core knows devices, contexts, memory, streams, events, kernels and the
 * trace; it speaks in enum emu_err, which each library maps onto its own
 * error codes (cudaError_t, CUresult, ...).
 *
 * Threading: every function here may be called from any thread. Shared state
 * is guarded by small mutexes; the launch path takes one (the trace writer's).
 */
#ifndef MAYA_EMU_H
#define MAYA_EMU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "maya/hwspec.h"
#include "maya/trace_format.h"

#define EMU_API __attribute__((visibility("default")))

enum emu_err {
    EMU_OK = 0,
    EMU_ERR_INVALID_VALUE,
    EMU_ERR_OUT_OF_MEMORY,
    EMU_ERR_INVALID_DEVICE,
    EMU_ERR_NO_DEVICE,
    EMU_ERR_INVALID_HANDLE,      /* stream, event, graph, module ... */
    EMU_ERR_INVALID_CONTEXT,
    EMU_ERR_NOT_READY,
    EMU_ERR_NOT_SUPPORTED,
    EMU_ERR_INIT,                /* the emulator could not start (config error) */
    EMU_ERR_NOT_INITIALIZED,     /* forked child: CUDA cannot be used */
    EMU_ERR_INVALID_DEVICE_PTR,
    EMU_ERR_NOT_FOUND,           /* symbol / function not found */
    EMU_ERR_CAPTURE_UNSUPPORTED, /* operation not permitted while capturing */
    EMU_ERR_CAPTURE_INVALIDATED,
    EMU_ERR_ILLEGAL_STATE,
    EMU_ERR_ALREADY_MAPPED,
    EMU_ERR_NOT_MAPPED,
    EMU_ERR_INVALID_CONFIG,      /* launch configuration out of the device's limits */
    EMU_ERR_INVALID_IMAGE,       /* module data is not a cubin/fatbin/PTX */
    EMU_ERR_PEER_ACCESS_ALREADY_ENABLED,
    EMU_ERR_PEER_ACCESS_NOT_ENABLED,
    EMU_ERR_CAPTURE_UNJOINED,    /* capture ended with a forked stream not joined back */
    EMU_ERR_CAPTURE_IMPLICIT,    /* the legacy stream was used while a blocking stream captured */
    EMU_ERR_CAPTURE_ISOLATION,   /* a dependency between two different captures */
    EMU_ERR_CAPTURE_UNMATCHED,   /* end capture on a stream that did not begin it */
    EMU_ERR_CAPTURE_WRONG_THREAD,/* thread-local capture ended by another thread */
    EMU_ERR_GRAPH_UPDATE,        /* cudaGraphExecUpdate: the graphs differ (see result) */
};

/* ---- start-up and configuration ---- */

/* Environment the emulator reads (documented in man/maya.1, "ENVIRONMENT"):
 *   MAYA_GPU            hwspec key or alias of the emulated GPU (default H100-SXM)
 *   MAYA_GPUS_PER_NODE  GPUs on the emulated node (default 8); CUDA_VISIBLE_DEVICES
 *                       then selects among them as on a real node
 *   MAYA_NODE           index of the emulated node (default 0)
 *   MAYA_TRACE_DIR      directory for the trace (made if missing); none is written when unset
 *   MAYA_RANK / RANK    names the trace file rank-<N>.mtrace (else pid-<pid>)
 *   MAYA_COPY_THRESHOLD copies/memsets up to this many bytes are performed (64K)
 *   MAYA_HWSPEC_DIR     where GPU descriptions are (default: the install's)
 *   MAYA_QUIET          1: no notes on stderr (unsupported calls are still counted)
 *   MAYA_INJECT_FAULT   N: the N-th kernel launch of the process faults (an
 *                       illegal address, a sticky error), to try a program's
 *                       error handling; 0 or unset: kernels never fault
 *   MAYA_INTRA_NODE     how the node's GPUs are linked: nvswitch, pairwise or pcie
 *                       (maya run sets the cluster's; default: the GPU's default
 *                       cluster, maya_default_cluster); NVML reports NVLinks from it
 */
enum emu_host_clock {
    EMU_HOST_CLOCK_WALL,         /* CLOCK_MONOTONIC */
    EMU_HOST_CLOCK_CPU,          /* the CPU time of the threads that call CUDA (host_clock.c) */
    EMU_HOST_CLOCK_ACTIVE,       /* wall less the CUDA-calling threads' run-queue delay (host_clock.c) */
};

struct emu_config {
    const struct maya_gpu_spec *gpu;
    int gpus_per_node;
    int node;
    int rank, world_size, local_rank;
    uint64_t copy_threshold;
    int quiet;
    enum maya_intra_link intra;
    char trace_dir[4096];
    uint64_t fault_launch;       /* MAYA_INJECT_FAULT, 0 = none */
    int passthrough;             /* emu_init_passthrough: real GPUs, the core only traces */
    enum emu_host_clock host_clock; /* MAYA_HOST_CLOCK, auto resolved */
    int no_kernel_work;          /* MAYA_KERNEL_WORK=0: kernels' code is not read for their work */
};

/* Start the emulator if it has not started (idempotent, thread-safe, cheap
 * after the first call). Returns EMU_OK, EMU_ERR_INIT (message printed) or
 * EMU_ERR_NOT_INITIALIZED in a forked child. */
EMU_API enum emu_err emu_init(void);
extern EMU_API volatile int emu_started;
static inline enum emu_err emu_enter(void)
{
    return __builtin_expect(emu_started == 1, 1) ? EMU_OK : emu_init();
}

/* Read the configuration and lay out the devices without starting the
 * emulator (no trace, and a child forked afterwards may still start it):
 * for NVML, which a real program may call without initialising CUDA.
 * Idempotent; EMU_OK or EMU_ERR_INIT (message printed). */
EMU_API enum emu_err emu_configure(void);

EMU_API const struct emu_config *emu_config(void);
/* Is reading kernels' work from their code switched off (MAYA_KERNEL_WORK=0)? */
static inline int emu_kwork_disabled(void)
{
    return emu_config()->no_kernel_work;
}

/* Passthrough (maya profile, emulator/profile): the program runs on real
 * GPUs through the real CUDA libraries, and a private copy of the core only
 * writes the trace. Instead of emu_init, before anything else starts the
 * core: trace_dir is where rank-N.mtrace goes (NULL or "": none; not
 * MAYA_TRACE_DIR, which the emulator reads), gpu_key the hwspec key of the
 * real GPU (NULL or "": MAYA_GPU as emu_init reads it). Identity and the
 * node's devices are read as emu_init reads them; devices have no capacity
 * limit (the real allocator decides), nothing is copied (copy threshold 0),
 * the trace header carries MAYA_TRACE_F_PASSTHROUGH and the PROCESS record
 * mode 2. EMU_ERR_INIT if the core had already started in emulation. */
EMU_API enum emu_err emu_init_passthrough(const char *trace_dir, const char *gpu_key);

/* Passthrough: every call record emu_trace_emit receives is handed to fn
 * instead of being written (the profiler holds each until its device time is
 * measured); emu_trace_commit writes one, giving it its seq then. NULL: write
 * as usual. Set once, before tracing starts. */
typedef void (*emu_trace_divert_fn)(void *rec);
EMU_API void emu_trace_divert(emu_trace_divert_fn fn);
EMU_API void emu_trace_commit(void *rec);

/* The driver API has been initialised: by cuInit, or by the runtime (which
 * initialises the driver before it makes a context or hands out driver
 * entry points, so driver calls then work without the program's cuInit). */
extern EMU_API volatile int emu_driver_initialized;

/* ---- devices and contexts ---- */

struct emu_stream;

struct emu_device {
    int ordinal;                 /* as this process numbers it */
    int index_on_node;           /* before CUDA_VISIBLE_DEVICES */
    int global_index;            /* node * gpus_per_node + index_on_node */
    struct cudaDeviceProp prop;  /* from the hwspec, with this device's uuid and bus id */
    const struct maya_gpu_spec *spec;
    /* memory, guarded by mem_lock in memory.c */
    uint64_t capacity;           /* bytes the program may allocate */
    uint64_t used, peak;
    /* primary context */
    int primary_refs;
    unsigned primary_flags;
    int primary_active;
    unsigned device_flags;       /* cudaSetDeviceFlags */
    int defined;                 /* DEVICE record written */
    struct emu_stream *legacy;   /* the legacy default stream */
    uint64_t limits[16];         /* cudaLimit values */
    int peer_enabled[64];
};

EMU_API int emu_device_count(void);
/* NULL when ordinal is out of range. */
EMU_API struct emu_device *emu_device(int ordinal);
/* The properties of GPU index_on_node of the emulated node, visible to this
 * process or not (NVML lists every GPU of the node): the hwspec's, with that
 * GPU's uuid and PCI bus id. -1 when index_on_node is not below
 * gpus_per_node or the emulator has not started. */
EMU_API int emu_node_gpu_prop(int index_on_node, struct cudaDeviceProp *out);

#define EMU_CTX_MAGIC 0x6374786du

struct emu_ctx {
    uint32_t magic;
    int device;
    unsigned flags;
    int primary;                 /* the device's primary context */
    int refs;
    uint64_t id;
};

/* Per-thread state. */
struct emu_thread {
    uint32_t tid;                /* small index, 0 = first thread */
    struct emu_ctx *ctx[32];     /* driver context stack; top is current */
    int nctx;
    int runtime_error;           /* cudart's last (non-sticky) error */
    struct emu_stream *per_thread[64]; /* per-thread default stream per device */
    /* launch configurations pushed by <<< >>> and popped by the stub */
    struct {
        unsigned grid[3], block[3];
        size_t smem;
        void *stream;
    } launch_cfg[8];
    int nlaunch_cfg;
};

EMU_API struct emu_thread *emu_thread(void);

/* The thread's current device: the top context's device, else 0 (and the
 * runtime's implicit primary context). */
EMU_API int emu_current_device(void);
EMU_API enum emu_err emu_set_device(int ordinal);

/* The primary context of a device (created on first use). */
EMU_API struct emu_ctx *emu_primary_ctx(int ordinal);
EMU_API struct emu_ctx *emu_ctx_create(int ordinal, unsigned flags);
EMU_API enum emu_err emu_ctx_destroy(struct emu_ctx *ctx);
EMU_API int emu_ctx_valid(const struct emu_ctx *ctx);

/* cudaDeviceAttr / CUdevice_attribute value (they share numbers). */
EMU_API enum emu_err emu_device_attribute(int ordinal, int attr, int *value);

/* Limits (cudaLimit / CUlimit values): EMU_ERR_NOT_SUPPORTED for a limit
 * that does not exist or cannot be set. */
EMU_API enum emu_err emu_limit_get(int device, int limit, uint64_t *value);
EMU_API enum emu_err emu_limit_set(int device, int limit, uint64_t value);

/* "0000:1B:00.0"-style PCI bus id of a device, and the ordinal of one
 * (-1 when no device has it). */
EMU_API void emu_pci_bus_id(const struct emu_device *d, char *buf, size_t len);
EMU_API int emu_device_by_pci_bus_id(const char *id);

/* Write the DEVICE record the first time a device is used. */
EMU_API void emu_device_touch(struct emu_device *d);

/* ---- host time ---- */

/* Host time on the trace clock: ns since the trace began, not counting time
 * the emulator spent waiting (emu_wait_begin .. emu_wait_end). The clock is
 * wall time, wall time less the CUDA-calling threads' time waiting for a CPU,
 * or their CPU time (MAYA_HOST_CLOCK, host_clock.c); each is monotonic per
 * process. A thread that runs the
 * program's code for it (host functions) calls emu_now after each piece, so
 * that the cpu clock counts that work. */
EMU_API uint64_t emu_now(void);
EMU_API void emu_wait_begin(void);
EMU_API void emu_wait_end(void);
/* 1: emu_now is the cpu clock. */
EMU_API int emu_host_clock_cpu(void);

/* ---- trace ---- */

/* Id of a string in this trace; the STRING record is written on first use. */
EMU_API uint32_t emu_string(const char *s);

/* The API name id for a call site, interned once: EMU_API_ID("cudaMalloc"). */
#define EMU_API_ID(name) \
    ({ static uint32_t emu_api_id_; \
       if (__builtin_expect(!emu_api_id_, 0)) emu_api_id_ = emu_string(name); \
       emu_api_id_; })

/* The text of a string id (NULL if unknown); valid for the process's life. */
EMU_API const char *emu_string_text(uint32_t id);

/* The emulated GPU's clock (device_clock.c): emu_trace_emit hands it every
 * record; emu_clock_event_time gives the device time of an event's record
 * (0, or -1 when unknown: no trace, or another version). */
EMU_API void emu_clock_record(const void *rec);
EMU_API int emu_clock_event_time(uint64_t event, uint32_t version, uint64_t *t_ns);
/* Does the work before an event's record (version) still run on the
 * emulated GPU when the host asks (cudaEventQuery)? 1 when its device time
 * is past the ideal host's clock and this thread (any id) has not been told
 * so for this version yet, else 0: a thread that asks again is answered
 * done, as a host that polls is once the GPU gets there (the emulation has
 * no GPU to wait for). So a program that checks an event before waiting on
 * it (PyTorch's work.wait() after a collective) takes the path it takes on
 * a GPU, where the work it just enqueued is still running. */
EMU_API int emu_clock_event_pending(uint64_t event, uint32_t version, uint64_t thread);

/* Fill the common call part of a record (t_exit taken now). */
EMU_API void emu_call_fill(struct maya_call *c, uint32_t api, uint64_t t_enter, int result,
                           uint64_t stream);

/* Append a record (starting with struct maya_rec_hdr; rec->bytes must be set
 * and a multiple of 8). Call records get their seq here. Records are dropped
 * when no trace is being written. */
EMU_API void emu_trace_emit(void *rec);

/* A record of type MAYA_REC_CALL for a call with nothing more to say. */
EMU_API void emu_trace_call(uint32_t api, uint64_t t_enter, int result, uint64_t stream,
                            uint16_t flags);

EMU_API int emu_tracing(void);

/* Traced calls so far that made the host wait for the device's results:
 * synchronisations (SYNC records) and device-to-host copies the host waits
 * for (a loss read). Duplicate-rank elimination looks for iterations that
 * end with one. */
EMU_API uint64_t emu_host_syncs(void);

/* An exported function the emulator does not implement: note it once on
 * stderr, count it, and trace it. The caller returns its library's
 * not-supported code. */
EMU_API void emu_unsupported(const char *name, int result);

/* Note an OOM, so the trace's end record says so. */
EMU_API void emu_note_oom(void);

/* Finish the trace now (END record, rename into place). Also run at exit. */
EMU_API void emu_trace_finish(void);

/* While the process waits for its peers in a collective (the emulated
 * NCCL's exchanges): what it waits in, published in its tail file for a
 * launcher's watchdog (trace_format.h, struct maya_trace_status).
 * awaits_pid: the process it waits for, 0 if any. */
EMU_API void emu_trace_waiting(uint32_t op, uint64_t comm, uint64_t seq, int awaits_pid);
EMU_API void emu_trace_waiting_done(void);

/* ---- memory ---- */

struct emu_alloc {
    uint64_t base;
    uint64_t bytes;              /* as requested */
    uint64_t charged;            /* as counted against capacity (rounded) */
    int device;                  /* -1 for host memory */
    int kind;                    /* enum maya_alloc_kind */
    unsigned flags;              /* API flags (cudaHostAlloc flags, ...) */
    uint64_t pool;               /* memory pool id for async allocations */
};

/* Allocate device memory (DEVICE, ASYNC, MANAGED): reserved address space,
 * no RAM until touched. EMU_ERR_OUT_OF_MEMORY past capacity. */
EMU_API enum emu_err emu_mem_alloc(int device, uint64_t bytes, int kind, unsigned flags,
                                   uint64_t *ptr);
/* Page-locked host memory (HOST) or registration of existing memory. */
EMU_API enum emu_err emu_mem_host_alloc(uint64_t bytes, unsigned flags, void **ptr);
EMU_API enum emu_err emu_mem_host_register(void *ptr, uint64_t bytes, unsigned flags);
/* Free by base address; out (if not NULL) receives what was freed. */
EMU_API enum emu_err emu_mem_free(uint64_t ptr, int kind_mask, struct emu_alloc *out);
/* The allocation containing ptr: 1 found, 0 not. */
EMU_API int emu_mem_lookup(uint64_t ptr, struct emu_alloc *out);
/* Charge / release capacity without an address (VMM physical handles). */
EMU_API enum emu_err emu_mem_charge(int device, uint64_t bytes);
EMU_API void emu_mem_release(int device, uint64_t bytes);
/* Reserve / release address space (VMM): no capacity charged. */
EMU_API enum emu_err emu_va_reserve(uint64_t bytes, uint64_t align, uint64_t hint, uint64_t *ptr);
EMU_API enum emu_err emu_va_release(uint64_t ptr, uint64_t bytes);
/* Add an entry to the allocation table (VMM mappings made by the driver). */
EMU_API enum emu_err emu_mem_table_add(const struct emu_alloc *a);
/* Drop the table's entry that starts at ptr, if any (nothing is released). */
EMU_API void emu_mem_table_forget(uint64_t ptr);
EMU_API void emu_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes);
/* Fill an ALLOC/FREE record's device usage fields. */
EMU_API void emu_mem_usage(int device, uint64_t *used, uint64_t *peak);

/* Free every device, async and managed allocation of a device
 * (cudaDeviceReset); returns the bytes freed. */
EMU_API uint64_t emu_mem_reset_device(int device);
/* Place an allocation whose capacity is already charged (pools): address
 * space and a table entry only. */
EMU_API enum emu_err emu_mem_place(int device, uint64_t bytes, uint64_t charged, int kind, uint64_t pool,
                                   uint64_t *ptr);

/* ---- memory pools (pool.c) ----
 * cudaMemPool_t / CUmemoryPool: the struct itself. A pool's reserve counts
 * against its device's capacity; freed allocations go back to the reserve,
 * which shrinks to the release threshold when the program synchronises. */
struct emu_pool {
    uint32_t magic;
    uint64_t id;                 /* emu_alloc.pool of its allocations */
    int device;
    int is_default, destroyed;
    uint64_t max_bytes;          /* 0 = the device's memory */
    uint64_t release_threshold;
    uint64_t reserved, used;     /* bytes; guarded by the pool lock */
    uint64_t reserved_high, used_high;
    int reuse_follow_events, reuse_opportunistic, reuse_internal;
    unsigned char access[64];    /* cudaMemAccessFlags per device */
    struct emu_pool *next;
};

EMU_API struct emu_pool *emu_pool_resolve(const void *handle);
EMU_API struct emu_pool *emu_pool_default(int device);
/* The pool cudaMallocAsync uses on a device (cudaDeviceSetMemPool). */
EMU_API struct emu_pool *emu_pool_current(int device);
EMU_API enum emu_err emu_pool_set_current(int device, struct emu_pool *p);
EMU_API enum emu_err emu_pool_create(int device, uint64_t max_bytes, struct emu_pool **out);
EMU_API enum emu_err emu_pool_destroy(struct emu_pool *p);
EMU_API enum emu_err emu_pool_alloc(struct emu_pool *p, uint64_t bytes, uint64_t *ptr);
/* At a synchronisation: every pool of device (-1: all) gives back its idle
 * reserve above its threshold; traced as a FREE with no address (api != 0).
 * Returns the bytes given back. */
EMU_API uint64_t emu_pool_release_idle(int device, uint32_t api, uint64_t t0);
EMU_API enum emu_err emu_pool_trim(struct emu_pool *p, uint64_t keep, uint32_t api, uint64_t t0);
/* cudaMemPoolAttr / CUmemPool_attribute (the same numbers) get (set = 0)
 * or set; value points to an int for the reuse flags (1..3), to a uint64_t
 * for byte counts, as in the APIs. */
EMU_API enum emu_err emu_pool_attr(struct emu_pool *p, int attr, int set, void *value);
/* The device a pool location names (cudaMemLocation / CUmemLocation, and
 * cudaMemAllocationType / CUmemAllocationType: the same numbers):
 * EMU_ERR_INVALID_VALUE unless pinned, EMU_ERR_NOT_SUPPORTED for a location
 * that is not a device, EMU_ERR_INVALID_DEVICE for a device that is not. */
EMU_API enum emu_err emu_pool_location(int loc_type, int id, int alloc_type, int *device);
/* cudaMemAccessFlags of device on the pool's memory, get or set. */
EMU_API enum emu_err emu_pool_access(struct emu_pool *p, int device, int set, int *flags);
/* cudaMemPoolSetAccess / cuMemPoolSetAccess: descs, count cudaMemAccessDesc
 * or CUmemAccessDesc (the same layout: location type and id, flags; 12
 * bytes), device locations only. */
EMU_API enum emu_err emu_pool_set_access(struct emu_pool *p, const void *descs, size_t count);
/* memory.c -> pool.c: an allocation from pool id was freed. */
void emu_pool_freed(uint64_t id, uint64_t charged);

/* Where a pointer lives, for copies: device ordinal, or -1 for host (pinned
 * says whether it is page-locked memory the emulator knows). */
EMU_API int emu_ptr_device(uint64_t ptr, int *pinned);

/* Perform a copy or memset if it is small enough (bytes <= copy_threshold)
 * and both ends are addressable; returns 1 if bytes moved. */
EMU_API int emu_copy_bytes(void *dst, const void *src, uint64_t bytes);
EMU_API int emu_set_bytes(void *dst, int value, uint64_t bytes);
/* Fill count elements of elem_bytes (1, 2 or 4) with *pattern, likewise. */
EMU_API int emu_fill_bytes(void *dst, const void *pattern, unsigned elem_bytes, uint64_t count);

/* The address range holding all device memory (lowest, highest + 1), read
 * without a lock: words outside it are not device pointers. */
void emu_mem_device_va(uint64_t *lo, uint64_t *hi);

struct emu_kernel;
struct emu_launch;

/* A copy of the PTX text holding kernel k's .entry (the caller frees it):
 * 0, or -1 when its module carries no PTX for it (kernel_layout.c). */
EMU_API int emu_fatbin_kernel_ptx(struct emu_kernel *k, char **text, size_t *bytes);
/* The nvdisasm text of a kernel's SASS (its cubin for the emulated GPU,
 * kernel_layout.c's choice), where its parameters sit in constant bank 0
 * (*param_base), the cubin's SM, and its constant bank 2 if it has one (the
 * jump tables of switches; NULL, 0 if none): 0, or -1 (no cubin, no
 * nvdisasm). *text and *bank2 are malloc'd. */
EMU_API int emu_fatbin_kernel_sass(struct emu_kernel *k, char **text, size_t *bytes, unsigned *param_base, int *sm,
                                   void **bank2, size_t *bank2_bytes);

/* ---- small kernels computed (kernel_exec.c) ---- */

/* Run launch l of kernel k (packed parameters) on the CPU if it is small
 * and its code is covered (docs/kernel-exec.md): 1 if it ran, its outputs
 * then real bytes; 0 if it was not run (nothing changed, or what it wrote
 * is spoilt again). */
int emu_kernel_exec(struct emu_kernel *k, const struct emu_launch *l, const void *params, uint32_t bytes);

/* ---- declared values (declared_values.c) ---- */

/* Read MAYA_VALUES: 0, or -1 with the message printed (init.c). */
int emu_values_configure(void);
/* A small read by the host of bytes not real, last written by writer (a
 * kernel's or an API's name): if a declaration matches it, its value is
 * written over the bytes bytes at dst and the declaration's string id is
 * returned; otherwise 0 and nothing changes. */
EMU_API uint32_t emu_values_declare(const char *writer, void *dst, uint64_t bytes);
/* The demangled name of the kernel traced with id, or NULL (kernels.c). */
EMU_API const char *emu_kernel_name_by_id(uint32_t id);

/* ---- real bytes (real_bytes.c) ---- */

/* Is value tracking on? (not in passthrough, not with MAYA_REAL_BYTES=0) */
int emu_real_enabled(void);
/* [p, p+bytes) now holds real values (a performed copy, memset, collective). */
EMU_API void emu_real_mark(uint64_t p, uint64_t bytes);
/* [p, p+bytes) was written by something not computed: kind is an enum
 * maya_writer_kind, writer its kernel id (KERNEL) or API string id. */
EMU_API void emu_real_spoil(uint64_t p, uint64_t bytes, uint32_t kind, uint32_t writer);
/* The memory was freed: nothing is known of it any more. */
EMU_API void emu_real_forget(uint64_t p, uint64_t bytes);
/* A launch of kernel_id (not computed) with these packed parameters: every
 * device pointer among its 8-byte words may have been written, except the
 * words readonly (bit i: word i) says are pointers to const. */
void emu_real_launch(uint32_t kernel_id, const void *params, uint32_t bytes, uint64_t readonly);
/* Does some 8-byte word of a launch's parameters point at a real byte?
 * (Without any real byte in the process: no lock, one load.) */
int emu_real_any_word(const void *params, uint32_t bytes);
/* The parameter words of k a launch only reads through: those its demangled
 * signature declares pointers to const ("float const*"), and those no global
 * store or atomic of its code goes through (its work summary,
 * emu_kwork_unstored_words); bit i for word i (first 64). */
uint64_t emu_real_readonly_words(const struct emu_kernel *k);
/* An op not computed (a library call: kind LIBRARY, writer its API string
 * id) wrote at p: as one pointer of a launch. */
EMU_API void emu_real_written(uint64_t p, uint32_t kind, uint32_t writer);
/* How many bytes of [p, p+bytes) are not real; kind and writer say what
 * last wrote the first of them (MAYA_WRITER_NONE: nothing did). */
EMU_API uint64_t emu_real_check(uint64_t p, uint64_t bytes, uint32_t *kind, uint32_t *writer);
/* A performed device-to-device copy: dst is real where src was. */
EMU_API void emu_real_copy(uint64_t dst, uint64_t src, uint64_t bytes);

/* ---- streams and events ---- */

#define EMU_STREAM_MAGIC 0x7374726du
#define EMU_EVENT_MAGIC 0x6576746du

struct emu_graph;
struct emu_graph_node;
struct emu_capture;

struct emu_stream {
    uint32_t magic;
    uint64_t id;
    int device;
    unsigned flags;              /* MAYA_STREAM_* plus cudaStreamNonBlocking */
    int priority;
    /* Stream capture (graph.c), guarded by its lock: the capture the stream
     * takes part in (NULL: none) and the nodes its next op depends on. */
    struct emu_capture *capture;
    int capture_mode;            /* 0 = not capturing, else cudaStreamCaptureMode + 1 */
    struct emu_graph_node **cap_deps;
    size_t ncap_deps, cap_deps_cap;
    /* host functions run in stream order on a worker thread */
    struct emu_hostfn_queue *hostfns;
    void *rt_attrs;              /* the runtime's stream attributes (made on first set) */
};

struct emu_event {
    uint32_t magic;
    uint64_t id;
    uint32_t version;            /* bumped by each record */
    unsigned flags;              /* cudaEventDefault, DisableTiming, BlockingSync, Interprocess */
    int device;
    uint64_t stream;             /* stream of the last record */
    uint64_t t_ns;               /* real time (maya_mono_ns) of the last record: elapsed time without a device clock */
    uint64_t hostfn_mark;        /* host functions queued before the last record */
    /* recorded on a capturing stream: the capture and the nodes a wait on
     * this event depends on (graph.c) */
    struct emu_capture *capture;
    struct emu_graph_node **cap_deps;
    size_t ncap_deps;
};

/* Create / destroy. */
EMU_API enum emu_err emu_stream_create(int device, unsigned flags, int priority, struct emu_stream **out);
EMU_API enum emu_err emu_stream_destroy(struct emu_stream *s);

/* Resolve a cudaStream_t / CUstream handle: NULL (legacy default stream, or
 * per-thread when per_thread_default is set), 0x1 legacy, 0x2 per-thread,
 * or a stream this emulator made. NULL on a bad handle. */
EMU_API struct emu_stream *emu_stream_resolve(const void *handle, int per_thread_default);

EMU_API enum emu_err emu_event_create(unsigned flags, struct emu_event **out);
EMU_API enum emu_err emu_event_destroy(struct emu_event *e);
EMU_API struct emu_event *emu_event_resolve(const void *handle);

/* Host functions (cudaLaunchHostFunc, cudaStreamAddCallback) run on a worker
 * thread in the order they were enqueued per stream; stream and device
 * synchronisation wait for them. */
EMU_API enum emu_err emu_hostfn_enqueue(struct emu_stream *s, void (*fn)(void *), void *arg);
/* Wait for a stream's (or, with s NULL, every stream's) host functions;
 * synchronising the legacy stream waits for those of every blocking
 * stream of its device too. */
EMU_API void emu_hostfn_drain(struct emu_stream *s);
/* Has s (NULL: any stream) host functions queued or running? */
EMU_API int emu_hostfn_pending(struct emu_stream *s);
/* Host functions are numbered as queued: the number queued so far; and
 * whether / waiting until the first mark of them have run. */
EMU_API uint64_t emu_hostfn_mark(void);
EMU_API int emu_hostfn_done(uint64_t mark);
EMU_API void emu_hostfn_wait(uint64_t mark);

/* ---- tracing operations (trace_ops.c), shared by the runtime and driver ----
 * Each library checks its arguments and maps errors; these write the record
 * (nothing when no trace is written) with result = the library's own code. */

/* NCCL groups: mark the sends and receives of communicators on which the
 * group has this rank both sending and receiving (MAYA_COLL_BOTH_WAYS; NCCL
 * runs a round's send and receive on the same channels, each with half of
 * a channel's warps, where a send alone has them all). The n records lie
 * stride bytes apart from first, as in an array of the caller's structs.
 * Cost: O(records x communicators with sends or receives in the group). */
EMU_API void emu_coll_mark_both_ways(struct maya_rec_coll *first, size_t n, size_t stride);

/* MAYA_REC_ALLOC / MAYA_REC_FREE, with the device's usage after the call. */
EMU_API void emu_trace_alloc(uint16_t type, uint32_t api, uint64_t t0, int result, uint64_t ptr,
                             uint64_t bytes, int kind, int device, uint64_t stream, uint16_t flags);
/* MAYA_REC_SYNC (kind: enum maya_sync_kind). */
EMU_API void emu_trace_sync(uint32_t api, uint64_t t0, int result, uint32_t kind, uint64_t target,
                            uint32_t version, uint64_t stream);
/* MAYA_REC_EVENT_RECORD / MAYA_REC_STREAM_WAIT. */
EMU_API void emu_trace_event(uint16_t type, uint32_t api, uint64_t t0, int result,
                             const struct emu_event *e, uint32_t version, uint64_t stream);
/* Record an event on a stream: a new version, its stream and host time. */
EMU_API void emu_event_record(struct emu_event *e, const struct emu_stream *s);
/* Milliseconds between two records of events (cudaEventElapsedTime):
 * EMU_ERR_INVALID_HANDLE if either was never recorded or cannot time. */
EMU_API enum emu_err emu_event_elapsed(const struct emu_event *start, const struct emu_event *end, float *ms);
/* A library operation's record (MAYA_REC_GEMM, MAYA_REC_DNN: a call record
 * whose own fields are set) issued to s: its call part filled (api, t0,
 * result, s) and emitted; while s is capturing, it becomes an EMU_NODE_OP
 * node of the capture instead (emitted at each launch of the graph) and the
 * call is traced as a CALL flagged MAYA_F_CAPTURING. Returns the capture's
 * error, else EMU_OK. */
EMU_API enum emu_err emu_trace_op(uint32_t api, uint64_t t0, int result, struct emu_stream *s, void *rec);
/* MAYA_REC_HOST_FUNC. */
EMU_API void emu_trace_host_func(uint32_t api, uint64_t t0, int result, uint64_t fn, uint64_t user_data,
                                 uint64_t stream);
/* The same for a host function issued to s: captured when s is capturing
 * (see emu_copy_finish). */
EMU_API enum emu_err emu_trace_host_func_on(uint32_t api, uint64_t t0, int result, void (*fn)(void *),
                                            void *user_data, struct emu_stream *s);

/* A copy of width bytes x height rows x depth slices (height, depth 0 = 1). */
struct emu_copy {
    void *dst;
    const void *src;
    uint64_t width, height, depth;
    uint64_t dpitch, spitch;     /* bytes between rows */
    uint64_t dslice, sslice;     /* bytes between slices */
    struct emu_stream *stream;
    int async;
    /* set by emu_copy_classify, from where the pointers live */
    uint32_t kind;               /* enum maya_copy_kind */
    int src_device, dst_device;  /* ordinals, -1 host */
    int pinned;                  /* the host side is page-locked */
};
EMU_API void emu_copy_classify(struct emu_copy *c);
/* Move the bytes when result == 0 and the copy is small, then write the
 * MAYA_REC_MEMCPY record (call emu_copy_classify first). */
EMU_API enum emu_err emu_copy_finish(uint32_t api, uint64_t t0, int result, const struct emu_copy *c);
/* Likewise for a memset of width_elems elements of elem_bytes (1, 2, 4) per
 * row, height rows pitch bytes apart (height 0 = 1). */
EMU_API enum emu_err emu_memset_finish(uint32_t api, uint64_t t0, int result, void *dst, uint32_t value,
                                       unsigned elem_bytes, uint64_t width_elems, uint64_t height,
                                       uint64_t pitch, struct emu_stream *stream, int async);
/* Copies, memsets, launches and host functions issued (result 0) to a
 * capturing stream are not performed: they become graph nodes and the call
 * is traced as a CALL record flagged MAYA_F_CAPTURING; the return value is
 * then the capture's (EMU_OK unless out of memory). Event records and waits
 * on a capturing stream go through emu_event_record_on / emu_stream_wait_on
 * and are traced by the library with emu_trace_call(..., MAYA_F_CAPTURING). */

/* ---- driver entry points (procaddr.c) ----
 * The driver's cuGetProcAddress table, for cudaGetDriverEntryPoint[ByVersion]:
 * the emulator's libcuda.so.1 is loaded (from the directory libmaya-core.so
 * is in) if the program has not loaded it. version: CUDA version the caller
 * was built for (e.g. 12030); flags: CU_GET_PROC_ADDRESS_* (the same values
 * as cudaEnable*). Returns EMU_OK with *fn set, or EMU_ERR_NOT_FOUND with
 * *status = 1 (no such symbol) or 2 (version too old for it); status 0 on
 * success. EMU_ERR_INVALID_VALUE for NULL name/fn. */
EMU_API enum emu_err emu_proc_address(const char *name, int version, uint64_t flags, void **fn,
                                      int *status);
typedef enum emu_err (*emu_proc_resolver)(const char *name, int version, uint64_t flags, void **fn,
                                          int *status);
/* libcuda.so.1 registers its resolver when it is loaded. */
EMU_API void emu_proc_address_register(emu_proc_resolver r);

/* ---- kernels ---- */

struct emu_module;
struct emu_image_index;

#define EMU_KERNEL_MAGIC 0x6b726e6cu

/* Pointer parameters whose allocation's extent a launch records, at most. */
#define EMU_MAX_EXTENTS 16

struct emu_kernel {
    uint32_t magic;              /* EMU_KERNEL_MAGIC: handles given out are checked */
    uint32_t trace_id;           /* 0 until its KERNEL record is written */
    const void *host_fun;        /* nvcc stub address, or NULL */
    struct emu_module *module;
    char *mangled;
    char *name;                  /* demangled */
    int source;                  /* enum maya_kernel_source */
    int layout_known;            /* params below are valid */
    int sass_unread;             /* SASS only, and no nvdisasm to read it (MAYA_F_SASS_UNREAD) */
    uint32_t nparams;
    uint32_t param_bytes;
    struct maya_kparam *params;
    uint32_t nfeatures;
    struct maya_kfeature *features;
    /* function attributes (cudaFuncGetAttributes / cuFuncGetAttribute) */
    int num_regs;
    int static_smem;
    int max_threads_per_block;
    int max_dynamic_smem;        /* cudaFuncAttributeMaxDynamicSharedMemorySize */
    int preferred_carveout;
    int const_bytes;
    int local_bytes;
    int binary_sm;               /* SM version of the code it runs from (90), 0 unknown */
    int cluster_dims[3];         /* required cluster dimensions, 0 0 0 if none */
    int non_portable_cluster;    /* cluster sizes past 8 allowed */
    int cluster_policy;          /* CUclusterSchedulingPolicy preference */
    void *exec;                  /* struct emu_ptx_prog decoded for the executor, once */
    int exec_state;              /* 0 not tried, 1 runnable from PTX, 2 from SASS, -1 not (kernel_exec.c) */
    int exec_loads;              /* a run of it loaded global memory (kernel_exec.c) */
    uint64_t readonly_words;     /* bit i: parameter word i (bytes 8i..8i+7) is a pointer a
                                  * launch only reads through (real_bytes.c) */
    /* the work summary read from its code (kernel_work.c), NULL if none,
     * and the pointer parameters whose extents each launch records */
    void *work;
    uint32_t work_bytes;
    uint32_t nextent_params;
    uint16_t extent_params[EMU_MAX_EXTENTS];
    struct emu_kernel *next;     /* in its module */
};

/* A fat binary or module image: the bytes stay owned by the caller (nvcc's
 * fatbin data is static), copies are made for cuModuleLoadData. */
struct emu_module {
    uint32_t magic;
    const void *image;           /* fatbin wrapper data, fatbin, cubin or PTX */
    size_t image_bytes;          /* 0 = unknown (read the header) */
    int owns_image;
    int source;                  /* enum maya_kernel_source */
    struct emu_kernel *kernels;
    struct emu_module *next;
    /* __device__ / __constant__ variables: name -> device address */
    struct emu_var *vars;
    struct emu_image_index *index; /* fatbin.c: the image's entries, parsed on first use */
};

#define EMU_MODULE_MAGIC 0x6d6f646du

EMU_API struct emu_module *emu_module_new(const void *image, size_t bytes, int copy, int source);
EMU_API void emu_module_free(struct emu_module *m);

/* Register a kernel of a module by mangled name (host_fun for nvcc stubs). */
EMU_API struct emu_kernel *emu_kernel_add(struct emu_module *m, const char *mangled, const void *host_fun);
/* Find by nvcc host stub address. */
EMU_API struct emu_kernel *emu_kernel_by_host_fun(const void *host_fun);
/* A cudaKernel_t / cudaFunction_t / CUfunction / CUkernel handle, or NULL. */
static inline struct emu_kernel *emu_kernel_resolve(const void *handle)
{
    struct emu_kernel *k = (struct emu_kernel *)handle;
    return k && k->magic == EMU_KERNEL_MAGIC ? k : NULL;
}
/* Find by name within a module. */
EMU_API struct emu_kernel *emu_kernel_by_name(struct emu_module *m, const char *mangled);

/* Decode the kernel's parameter layout from its module image (once), and
 * write its KERNEL record (once). */
EMU_API void emu_kernel_prepare(struct emu_kernel *k);

struct emu_launch {
    struct emu_kernel *kernel;
    unsigned grid[3], block[3], cluster[3];
    uint32_t smem_bytes;
    struct emu_stream *stream;
    uint32_t flags;              /* MAYA_LAUNCH_* */
};

/* Function attributes by CUfunction_attribute number (cudaFuncAttribute
 * shares the numbers of the settable ones, 8..15): the kernel's layout is
 * read first (emu_kernel_prepare). Setting validates against the device
 * (e.g. dynamic shared memory up to the opt-in maximum). */
EMU_API enum emu_err emu_kernel_attribute(struct emu_kernel *k, int device, int attr, int *value);
EMU_API enum emu_err emu_kernel_set_attribute(struct emu_kernel *k, int device, int attr, int value);

/* Resident blocks per SM of a kernel (k may be NULL) with this block size
 * and dynamic shared memory, by the occupancy calculator's rules. */
EMU_API int emu_occupancy_blocks(const struct emu_kernel *k, int device, int block_threads, uint64_t dyn_smem);

/* Check a launch against the device's limits; EMU_ERR_INVALID_CONFIG if it
 * exceeds them (as the real launch would). */
EMU_API enum emu_err emu_launch_check(const struct emu_launch *l);

/* Trace a launch. args: the runtime's array of pointers to each argument
 * (void **), or extra_buf: one packed parameter buffer (driver's
 * CU_LAUNCH_PARAM_BUFFER_POINTER). */
EMU_API void emu_trace_launch(uint32_t api, uint64_t t_enter, int result, const struct emu_launch *l,
                              void **args, const void *extra_buf, size_t extra_bytes, uint16_t flags);

/* The parameter values of a launch: args (a pointer to each value) or extra
 * (the driver's { CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
 * CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END } list), not
 * both. A kernel whose layout says it takes parameters needs one of them,
 * and a buffer must hold them all. *buf, *bytes: extra's buffer (NULL, 0
 * without). EMU_ERR_INVALID_VALUE otherwise. */
EMU_API enum emu_err emu_launch_args(struct emu_kernel *k, void **args, void **extra, const void **buf,
                                     size_t *bytes);
/* The packed buffer of an `extra` list alone: *buf and *bytes, or
 * EMU_ERR_INVALID_VALUE if it is not such a list. */
EMU_API enum emu_err emu_launch_extra(void **extra, const void **buf, size_t *bytes);

/* ---- module images (fatbin.c reads them; kernel_layout.c and
 * module_symbols.c say what they hold) ----
 * Fat binaries (LZ4, Zstd or uncompressed entries), bare cubins and PTX
 * text; everything is bounds-checked: a damaged image reads as unknown. */

enum emu_image_kind { EMU_IMAGE_UNKNOWN = 0, EMU_IMAGE_FATBIN, EMU_IMAGE_CUBIN, EMU_IMAGE_PTX };

/* What an image is and how many bytes it spans. bytes = 0 when the caller
 * does not know (nvcc's registered fatbins, cuModuleLoadData): then the
 * fatbin or ELF header, or the PTX text's NUL, says. */
EMU_API int emu_image_probe(const void *image, size_t bytes, size_t *size_out);

/* SASS-only kernels (sass_work.c): the work summary of kernel `mangled`
 * (symbol index sym in its cubin) from nvdisasm's text, cached on disk by
 * cubin_hash. cubin NULL: only the cache is asked (waiting while another
 * rank reads the same kernel), and 1 means "not cached, and ours to read:
 * call again with the cubin's bytes" (or emu_sass_unlock). 0 with *out
 * (malloc'd), or -1 (no nvdisasm, nothing read). */
EMU_API int emu_sass_work(const void *cubin, size_t bytes, uint64_t cubin_hash, const char *mangled, unsigned sym,
                          int sm, unsigned param_base, unsigned param_bytes, const struct maya_kparam *params,
                          unsigned nparams, void **out, size_t *out_bytes);
/* After emu_sass_work answered 1 and the caller will not call it again
 * with the cubin: let other ranks read the kernel. */
EMU_API void emu_sass_unlock(uint64_t cubin_hash, const char *mangled, unsigned sym);
/* nvdisasm's text of function sym of a cubin (for the executor), cached on
 * disk beside the work summaries: 0 with *text (malloc'd, NUL-ended), or -1. */
EMU_API int emu_sass_text(const void *cubin, size_t bytes, uint64_t cubin_hash, const char *mangled, unsigned sym,
                          char **text, size_t *len);
/* The nvdisasm found (MAYA_NVDISASM, PATH, CUDA, the Python environment), or NULL. */
EMU_API const char *emu_nvdisasm(void);
/* Warn once per process that kernel has SASS only and no nvdisasm to read it. */
EMU_API void emu_warn_sass_unread(const char *kernel);
/* FNV-1a over bytes, continuing from h (0: start). */
uint64_t emu_hash_bytes(const void *p, size_t n, uint64_t h);

/* Find the parameter layout of a kernel in an image (by k->mangled); returns
 * 0 and fills k's params, param_bytes, features and function attributes
 * (registers, static shared memory, local memory, launch bounds), or -1 if
 * unknown. Uses k->module's cached index when image is the module's. */
EMU_API int emu_fatbin_kernel_layout(const void *image, size_t image_bytes, struct emu_kernel *k);
/* The kernels a module's image defines (entry symbols of the cubin it would
 * run, else PTX .entry names): fn (may be NULL) is called for each; returns
 * how many, or -1 if the image is unreadable. */
EMU_API int emu_image_kernels(struct emu_module *m, void (*fn)(const char *name, void *arg), void *arg);
/* Size of a __device__ / __constant__ variable of the image: 0, or -1 if
 * it has none by that name. */
EMU_API int emu_image_global(struct emu_module *m, const char *name, uint64_t *bytes);
/* Its initial value, from the cubin the module would run (up to bytes into
 * buf): 0 copied, 1 zero-initialised (buf zeroed), -1 not found. */
EMU_API int emu_image_global_init(struct emu_module *m, const char *name, void *buf, uint64_t bytes);
/* Can the image run on a GPU of this SM version (e.g. 90): a cubin of the
 * same major and not newer minor, or PTX not newer? 1 yes, 0 no (only code
 * for other GPUs), -1 no readable code at all. */
EMU_API int emu_image_runnable(struct emu_module *m, int sm);
EMU_API void emu_image_index_free(struct emu_image_index *x);
/* Decompressed code is kept up to this many bytes in all (128 MiB), least
 * recently used dropped first and decompressed again when needed. */
EMU_API void emu_image_cache_budget(uint64_t bytes);
/* Demangle an Itanium C++ name (malloc'd), or a copy of it if not mangled. */
char *emu_demangle(const char *mangled);


/* ---- CUDA graphs and stream capture (graph.c) ----
 * One implementation under cudaGraph* / cudaStream*Capture* and the
 * driver's cuGraph* / cuStream*Capture*. Handles given to programs are the
 * structs themselves (checked by magic). Graph objects follow CUDA's
 * threading rule: one graph is not used from two threads at once.
 *
 * A graph launch is traced as the ops it contains, between MAYA_REC_GRAPH
 * begin and end records, each op flagged MAYA_F_FROM_GRAPH. Branches that
 * may run concurrently go to internal streams of the executable graph
 * (STREAM records flagged MAYA_STREAM_GRAPH), ordered by event records and
 * waits on internal events, so the trace says what may overlap in the
 * terms the simulator already knows.
 *
 * Work issued to a capturing stream is not executed and not traced as an
 * op: it becomes a node of the capture's graph, and the call is traced as a
 * MAYA_REC_CALL record flagged MAYA_F_CAPTURING. */

/* Node types, numbered as cudaGraphNodeType and CUgraphNodeType. */
enum emu_node_type {
    EMU_NODE_KERNEL = 0, EMU_NODE_MEMCPY = 1, EMU_NODE_MEMSET = 2, EMU_NODE_HOST = 3,
    EMU_NODE_GRAPH = 4, EMU_NODE_EMPTY = 5, EMU_NODE_WAIT_EVENT = 6, EMU_NODE_EVENT_RECORD = 7,
    EMU_NODE_MEM_ALLOC = 10, EMU_NODE_MEM_FREE = 11,
    /* maya's own: a library operation (a cuBLAS GEMM, a cuDNN operation,
     * an NCCL collective) captured as its trace record, emitted again at
     * every launch */
    EMU_NODE_OP = 256,
};

/* Called on an OP node's record at each launch of its graph, after its
 * call part is filled and before it is emitted, for what only the library
 * knows: NCCL gives each replay of a captured collective the next sequence
 * number of its communicator (real NCCL counts every launch as a new
 * operation). rec is the launch's own copy; ctx is the node's op_ctx;
 * launch names this launch of the top-level graph (the same for all its
 * nodes, child graphs included, and different for every launch in the
 * process). */
typedef void (*emu_op_replay_fn)(void *rec, void *ctx, uint64_t launch);

/* What a node does. Adding a node copies this (the kernel parameter buffer
 * and a child graph are deep-copied). */
struct emu_node_params {
    int type;                    /* enum emu_node_type */
    uint32_t api;                /* string id of the call that made it: its ops carry this api */
    struct emu_launch launch;    /* KERNEL (launch.stream unused) */
    const void *kparams;         /* KERNEL: packed parameter buffer (layout of the kernel) */
    uint32_t kparam_bytes;
    void **kargs;                /* KERNEL, in a node: a pointer into kparams per parameter
                                    (for cudaGraphKernelNodeGetParams); NULL when unknown */
    struct emu_copy copy;        /* MEMCPY (copy.stream unused; kind etc. classified on add) */
    struct {
        void *dst;
        uint32_t value;
        unsigned elem_bytes;     /* 1, 2 or 4 */
        uint64_t width, height, pitch; /* width in elements */
    } memset;
    struct {
        void (*fn)(void *);
        void *arg;
    } host;
    struct emu_graph *child;     /* GRAPH */
    struct emu_event *event;     /* WAIT_EVENT, EVENT_RECORD */
    struct {
        int device;
        uint64_t bytes;
        uint64_t ptr;            /* MEM_ALLOC: set by emu_graph_add_node; MEM_FREE: what is freed */
    } mem;
    const void *op_rec;          /* OP: a call record (MAYA_REC_GEMM, MAYA_REC_DNN, MAYA_REC_COLL),
                                    copied; its struct maya_call is filled at each launch */
    emu_op_replay_fn op_replay;  /* OP: NULL, or what the library does at each launch */
    void *op_ctx;                /* OP: handed to op_replay (not owned by the node) */
};

struct emu_graph_exec;

/* Update results, numbered as cudaGraphExecUpdateResult / CUgraphExecUpdateResult. */
enum emu_update_result {
    EMU_UPDATE_SUCCESS = 0, EMU_UPDATE_ERROR = 1, EMU_UPDATE_TOPOLOGY_CHANGED = 2,
    EMU_UPDATE_NODE_TYPE_CHANGED = 3, EMU_UPDATE_FUNCTION_CHANGED = 4,
    EMU_UPDATE_PARAMETERS_CHANGED = 5, EMU_UPDATE_NOT_SUPPORTED = 6,
};

EMU_API enum emu_err emu_graph_create(struct emu_graph **out);
EMU_API enum emu_err emu_graph_destroy(struct emu_graph *g);
EMU_API struct emu_graph *emu_graph_resolve(const void *handle);
EMU_API struct emu_graph_node *emu_graph_node_resolve(const void *handle);
EMU_API struct emu_graph_exec *emu_graph_exec_resolve(const void *handle);
/* A deep copy; emu_graph_node_in_clone maps a node of g to its copy. */
EMU_API enum emu_err emu_graph_clone(struct emu_graph *g, struct emu_graph **out);
EMU_API struct emu_graph_node *emu_graph_node_in_clone(struct emu_graph *clone,
                                                       const struct emu_graph_node *orig);

/* Add a node depending on deps (nodes of g). Kernel parameters, child
 * graphs are copied; a MEM_ALLOC node allocates its memory now. */
EMU_API enum emu_err emu_graph_add_node(struct emu_graph *g, const struct emu_node_params *p,
                                        struct emu_graph_node *const *deps, size_t ndeps,
                                        struct emu_graph_node **out);
EMU_API enum emu_err emu_graph_node_destroy(struct emu_graph_node *n);
/* The node's parameters (valid while the node lives and is not changed). */
EMU_API const struct emu_node_params *emu_graph_node_params(const struct emu_graph_node *n);
/* Those of a node handle if it is a node of that type, else NULL. */
EMU_API const struct emu_node_params *emu_graph_node_params_of(const void *node, int type);
/* What a node of that type refers to, as the APIs' getters give it: its
 * child graph (GRAPH: the node's own copy), its event (EVENT_RECORD,
 * WAIT_EVENT), the address it frees (MEM_FREE, 64 bits). */
EMU_API enum emu_err emu_graph_node_ref(const void *node, int type, void *out);
EMU_API enum emu_err emu_graph_node_set_params(struct emu_graph_node *n, const struct emu_node_params *p);
EMU_API struct emu_graph *emu_graph_node_graph(const struct emu_graph_node *n);
/* Edges from[i] -> to[i]. */
EMU_API enum emu_err emu_graph_add_deps(struct emu_graph *g, struct emu_graph_node *const *from,
                                        struct emu_graph_node *const *to, size_t n);
EMU_API enum emu_err emu_graph_remove_deps(struct emu_graph *g, struct emu_graph_node *const *from,
                                           struct emu_graph_node *const *to, size_t n);
/* Listing, as cudaGraphGetNodes and cuGraphGetNodes list: up to *count
 * entries into out (out NULL: none, only the count), *count = how many
 * exist; EMU_ERR_INVALID_VALUE for a bad handle or no count (edges: from
 * and to both given or both NULL). Every edge is a plain (default) edge:
 * edge_data (cudaGraphEdgeData / CUgraphEdgeData, 8 bytes an edge; may be
 * NULL) comes back zeroed for those listed. */
EMU_API enum emu_err emu_graph_nodes(struct emu_graph *g, struct emu_graph_node **out, size_t *count);
EMU_API enum emu_err emu_graph_roots(struct emu_graph *g, struct emu_graph_node **out, size_t *count);
EMU_API enum emu_err emu_graph_edges(struct emu_graph *g, struct emu_graph_node **from, struct emu_graph_node **to,
                                     void *edge_data, size_t *count);
EMU_API enum emu_err emu_graph_node_deps(struct emu_graph_node *n, struct emu_graph_node **out, void *edge_data,
                                         size_t *count);
EMU_API enum emu_err emu_graph_node_dependents(struct emu_graph_node *n, struct emu_graph_node **out,
                                               void *edge_data, size_t *count);

/* Executable graphs. */
EMU_API enum emu_err emu_graph_instantiate(struct emu_graph *g, uint64_t flags, struct emu_graph_exec **out);
EMU_API enum emu_err emu_graph_exec_destroy(struct emu_graph_exec *x);
EMU_API uint64_t emu_graph_exec_flags(const struct emu_graph_exec *x);
/* Launch on a stream: trace its ops (begin/end records, api and t0 of the
 * launching call), run its host nodes, move small copies. A capturing
 * stream gets a child-graph node instead. */
EMU_API enum emu_err emu_graph_launch(struct emu_graph_exec *x, struct emu_stream *s, uint32_t api, uint64_t t0);
/* cudaGraphExecUpdate: g must have x's topology; *result says why not
 * (EMU_ERR_GRAPH_UPDATE), *err_node the node of g that differs. */
EMU_API enum emu_err emu_graph_exec_update(struct emu_graph_exec *x, struct emu_graph *g,
                                           enum emu_update_result *result, struct emu_graph_node **err_node);
/* Change one node of x (n: the node of the graph x was made from; for a
 * GRAPH node, p->child is the new child graph of the same topology). */
EMU_API enum emu_err emu_graph_exec_set_params(struct emu_graph_exec *x, struct emu_graph_node *n,
                                               const struct emu_node_params *p);
EMU_API enum emu_err emu_graph_exec_node_enable(struct emu_graph_exec *x, struct emu_graph_node *n,
                                                int enable, int *was_enabled);

/* Graph memory attributes of a device (cudaGraphMemAttributeType /
 * CUgraphMem_attribute: 0 used, 1 used high, 2 reserved, 3 reserved high):
 * graph memory is ordinary device memory here, allocated when its node is
 * made, so nothing is set apart for graphs and every value is 0; only the
 * high-water marks may be set, and only to 0. */
EMU_API enum emu_err emu_graph_mem_attr(int device, int attr, int set, uint64_t *value);

/* Write g as a Graphviz DOT file (graph_dot.c): 0, or -1 with errno set
 * (EINVAL: not a graph or no path; else the file could not be written). */
EMU_API int emu_graph_dot_print(struct emu_graph *g, const char *path);

/* Stream capture. mode: cudaStreamCaptureMode (0 global, 1 thread-local, 2 relaxed).
 * into: capture into this existing graph (NULL: a new graph), after deps. */
EMU_API enum emu_err emu_capture_begin(struct emu_stream *s, int mode, struct emu_graph *into,
                                       struct emu_graph_node *const *deps, size_t ndeps);
/* End the capture begun on s: *out is its graph (NULL if it was invalidated:
 * EMU_ERR_CAPTURE_INVALIDATED). */
EMU_API enum emu_err emu_capture_end(struct emu_stream *s, struct emu_graph **out);
/* cudaStreamCaptureStatus: 0 none, 1 active, 2 invalidated. */
EMU_API int emu_capture_status(const struct emu_stream *s, uint64_t *id, struct emu_graph **graph,
                               struct emu_graph_node *const **deps, size_t *ndeps);
/* cudaStreamUpdateCaptureDependencies: flags 0 add, 1 set. */
EMU_API enum emu_err emu_capture_update_deps(struct emu_stream *s, struct emu_graph_node *const *deps,
                                             size_t n, unsigned flags);
/* Add a node to s's capture after its capture dependencies (which become
 * the new node). Ops traced through this core are captured by it already;
 * libraries use it for what only they know (memory nodes). */
EMU_API enum emu_err emu_capture_add(struct emu_stream *s, const struct emu_node_params *p,
                                     struct emu_graph_node **out);
/* The thread's capture interaction mode (cudaThreadExchangeStreamCaptureMode). */
EMU_API int emu_capture_exchange_mode(int mode);

/* User objects (cudaUserObject_t / CUuserObject): a pointer and a
 * destructor, reference counted by the program and by the graphs that
 * retain them (a graph's clones and executable graphs retain them too). The
 * destructor runs on the host-function worker when the count reaches 0. */
struct emu_user_object;
EMU_API enum emu_err emu_user_object_create(void *ptr, void (*destroy)(void *), unsigned refs,
                                            struct emu_user_object **out);
EMU_API struct emu_user_object *emu_user_object_resolve(const void *handle);
EMU_API enum emu_err emu_user_object_retain(struct emu_user_object *o, unsigned count);
EMU_API enum emu_err emu_user_object_release(struct emu_user_object *o, unsigned count);
/* move: the caller's references pass to the graph (cudaGraphUserObjectMove). */
EMU_API enum emu_err emu_graph_retain_user_object(struct emu_graph *g, struct emu_user_object *o, unsigned count,
                                                  int move);
EMU_API enum emu_err emu_graph_release_user_object(struct emu_graph *g, struct emu_user_object *o, unsigned count);

static inline int emu_stream_capturing(const struct emu_stream *s)
{
    return s && __builtin_expect(s->capture != NULL, 0);
}

/* Before issuing work to s: EMU_OK, or why it may not be issued
 * (capture invalidated; the legacy stream used while a blocking stream of
 * its device captures, which invalidates that capture). */
EMU_API enum emu_err emu_stream_issue_check(struct emu_stream *s);
/* Before a call CUDA calls "potentially unsafe" during capture (cudaMalloc,
 * synchronisation, queries): EMU_OK, or EMU_ERR_CAPTURE_UNSUPPORTED when
 * the thread's capture mode forbids it (the offending captures are
 * invalidated). s: the stream a synchronising call targets (a capturing
 * stream may not be synchronised in any mode), or NULL. */
EMU_API enum emu_err emu_capture_unsafe_call(struct emu_stream *s);

/* Events and capture: record e on s (external: cudaEventRecordExternal, an
 * event-record node while capturing). Outside capture a new version. */
EMU_API enum emu_err emu_event_record_on(struct emu_event *e, struct emu_stream *s, int external,
                                         uint32_t api);
/* Make s wait for e: while capturing, s joins e's capture (or a wait node
 * is added for an event recorded outside it). api: the calling function's
 * name id, for nodes made. */
EMU_API enum emu_err emu_stream_wait_on(struct emu_stream *s, struct emu_event *e, uint32_t api);

/* ---- ordering work on streams (stream_ops.c), shared by the runtime and driver ----
 * Each traces what it did when it succeeds; on failure it traces nothing and
 * the library traces the call with its own error code. */

/* Before a synchronous call's work on s (cudaMemcpy, cuMemcpyHtoD: the
 * legacy or per-thread default stream): s may not be capturing
 * (emu_capture_unsafe_call), nor the legacy stream be used while a blocking
 * stream captures (emu_stream_issue_check); then the host waits for s's
 * host functions. Traces nothing. */
EMU_API enum emu_err emu_stream_issue_sync(struct emu_stream *s);
/* cudaEventRecord[WithFlags] / cuEventRecord[WithFlags]: emu_event_record_on,
 * traced as EVENT_RECORD, or as a CALL flagged CAPTURING on a capturing stream. */
EMU_API enum emu_err emu_event_record_issue(uint32_t api, uint64_t t0, struct emu_event *e, struct emu_stream *s,
                                            int external);
/* cudaStreamWaitEvent / cuStreamWaitEvent: emu_stream_wait_on, traced as
 * STREAM_WAIT, or flagged CAPTURING when s captures (or joined a capture). */
EMU_API enum emu_err emu_stream_wait_issue(uint32_t api, uint64_t t0, struct emu_stream *s, struct emu_event *e);
/* Synchronise with a stream, a device or an event: the capture rules
 * (emu_capture_unsafe_call; a capturing stream cannot be synchronised),
 * host functions queued before have run, pools give back idle memory, and
 * the SYNC record. */
EMU_API enum emu_err emu_stream_sync(struct emu_stream *s, uint32_t api, uint64_t t0);
EMU_API enum emu_err emu_device_sync(int device, uint32_t api, uint64_t t0);
EMU_API enum emu_err emu_event_sync(struct emu_event *e, uint32_t api, uint64_t t0);
/* Stream-ordered allocation of bytes from pool (NULL: the current pool of
 * s's device) on s, traced as ALLOC (kind async; bytes 0: *ptr = 0). While
 * s captures, a MEM_ALLOC node of the capture instead, whose memory is made
 * now and belongs to the graph; the call is traced flagged CAPTURING.
 * EMU_ERR_INVALID_VALUE for a destroyed pool. */
EMU_API enum emu_err emu_mem_alloc_async(uint32_t api, uint64_t t0, struct emu_pool *pool, uint64_t bytes,
                                         struct emu_stream *s, uint64_t *ptr);
/* Stream-ordered free of device memory (0: nothing), traced as FREE; while s
 * captures, a MEM_FREE node. EMU_ERR_INVALID_VALUE if ptr is not the start
 * of a device allocation. */
EMU_API enum emu_err emu_mem_free_async(uint32_t api, uint64_t t0, uint64_t ptr, struct emu_stream *s);

/* A kernel node's parameters (cudaGraphAddKernelNode, cuGraphAddKernelNode,
 * ...): the launch l (stream unused), checked as a launch is
 * (emu_launch_args, emu_launch_check), and its parameter values packed from
 * args or taken from extra's buffer. p->kparams points into a buffer of the
 * calling thread that its next launch or node reuses: add the node first. */
EMU_API enum emu_err emu_node_kernel(struct emu_node_params *p, uint32_t api, const struct emu_launch *l, void **args,
                                     void **extra);

/* Pack a launch's parameter values (args: pointers to each value) into buf
 * by the kernel's layout: the bytes written (0 when the layout is unknown). */
EMU_API uint32_t emu_kernel_pack_args(struct emu_kernel *k, void **args, void *buf, size_t cap);

/* Flags the trace writer adds to every call record this thread emits
 * (graph.c sets MAYA_F_FROM_GRAPH while it replays a graph). */
EMU_API void emu_trace_set_thread_flags(uint16_t flags);
/* Calls made on behalf of another traced call (the runtime's cudaLibrary*
 * calling the driver's cuLibrary*) are not traced: nest +1 before, -1 after. */
EMU_API void emu_trace_nest(int delta);
/* Is this thread replaying a graph launch? */
EMU_API int emu_graph_replaying(void);

#endif
