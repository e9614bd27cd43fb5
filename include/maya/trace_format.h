/* The maya trace format, version 1: the contract between the emulator (which
 * writes one trace per process) and every later stage (which reads them).
 * docs/trace-format.md describes the same thing field by field, for people.
 *
 * A file is a fixed header followed by compressed chunks:
 *
 *   struct maya_trace_header        128 bytes, not compressed
 *   { struct maya_trace_chunk       16 bytes
 *     zbytes of compressed data that inflate to raw_bytes bytes: a
 *     Zstandard frame (magic MAYA_TRACE_CHUNK_MAGIC_ZSTD, what maya writes)
 *     or zlib (RFC 1950) data (MAYA_TRACE_CHUNK_MAGIC, traces written
 *     before; still read) } ...
 *
 * The inflated chunks, concatenated, are a sequence of records. Every record
 * starts with struct maya_rec_hdr, its size is a multiple of 8, and no record
 * spans two chunks. All integers are little-endian; structs below have no
 * implicit padding (checked by static asserts), so a record can be copied
 * into its struct. A complete trace ends with a MAYA_REC_END record; a trace
 * without one was cut short (the process crashed or was killed).
 *
 * Identifiers are per trace (per process): string ids, stream ids, event ids,
 * kernel ids. Communicator ids are the same in every member's trace.
 * Readers skip record types they do not know (their size says how far).
 */
#ifndef MAYA_TRACE_FORMAT_H
#define MAYA_TRACE_FORMAT_H

#include <stdint.h>

#define MAYA_TRACE_MAGIC "MAYATRCE"
#define MAYA_TRACE_VERSION 1
#define MAYA_TRACE_CHUNK_MAGIC 0x4b4e4843u      /* "CHNK": a zlib chunk */
#define MAYA_TRACE_CHUNK_MAGIC_ZSTD 0x5a4b4843u /* "CHKZ": a Zstandard chunk */
#define MAYA_TRACE_MAX_CHUNK (64u << 20)   /* raw bytes in one chunk, at most */

enum maya_trace_kind {
    MAYA_TRACE_RANK = 1, /* one process, written by the emulator */
    MAYA_TRACE_JOB = 2,  /* all ranks, written by the collator */
};

/* header.flags */
#define MAYA_TRACE_F_PASSTHROUGH 0x1 /* recorded on a real GPU: measured_ns is set */
#define MAYA_TRACE_F_HOST_CPU    0x2 /* host times are CPU time (MAYA_HOST_CLOCK=cpu), not wall time */
#define MAYA_TRACE_F_HOST_ACTIVE 0x4 /* host times are wall time less run-queue delay (MAYA_HOST_CLOCK=active) */

struct maya_trace_header {
    char magic[8];              /* "MAYATRCE" */
    uint32_t version;           /* MAYA_TRACE_VERSION */
    uint32_t header_bytes;      /* sizeof(struct maya_trace_header) = 128 */
    uint32_t kind;              /* enum maya_trace_kind */
    uint32_t flags;             /* MAYA_TRACE_F_* */
    int32_t rank;               /* global rank of this process (RANK), -1 if unknown */
    int32_t world_size;         /* WORLD_SIZE, -1 if unknown */
    int32_t local_rank;         /* LOCAL_RANK, -1 if unknown */
    int32_t node;               /* emulated node this process runs on */
    int32_t gpus_per_node;      /* GPUs of the emulated node */
    uint32_t pid;
    uint64_t start_realtime_ns; /* CLOCK_REALTIME when the trace began */
    uint64_t start_mono_ns;     /* CLOCK_MONOTONIC then; host times count from it */
    char gpu[64];               /* hwspec key of the emulated GPU ("H100-SXM") */
};

struct maya_trace_chunk {
    uint32_t magic;             /* MAYA_TRACE_CHUNK_MAGIC_ZSTD (or _MAGIC: zlib) */
    uint32_t raw_bytes;         /* inflated size, 8 .. MAYA_TRACE_MAX_CHUNK */
    uint32_t zbytes;            /* compressed bytes that follow */
    uint32_t crc32;             /* zlib crc32 of the inflated bytes */
};

/* The tail file, "<trace>.tail" beside "<trace>.tmp" while a process
 * traces: the records not yet compressed into the trace, kept in a shared
 * file mapping so that they survive however the process ends (SIGKILL and
 * the OOM killer included; only the machine crashing loses them). Two
 * slots: the chunk being filled and the one being compressed. Each slot is
 * a struct maya_trace_tail followed by slot_bytes of raw records, of which
 * the first `used` are whole (the writer publishes used after each record).
 * A reader of a cut-short trace takes the slots whose chunk index is not
 * yet in the file, in order, after the file's last whole chunk. A trace
 * that ended normally has no tail file. */
#define MAYA_TRACE_TAIL_MAGIC 0x4c494154u /* "TAIL" */
#define MAYA_TRACE_TAIL_SLOTS 2
#define MAYA_TRACE_TAIL_EMPTY UINT64_MAX  /* slot.chunk: holds nothing yet */

struct maya_trace_tail {
    uint32_t magic;             /* MAYA_TRACE_TAIL_MAGIC */
    uint32_t slot_bytes;        /* room for records in each slot (<= MAYA_TRACE_MAX_CHUNK) */
    uint64_t chunk;             /* which chunk of the trace (0 = the first after the header) */
    uint32_t used;              /* bytes of whole records at the start of the slot */
    uint32_t reserved[11];
};

/* After the slots, the tail file ends with the process's status, for a
 * launcher's watchdog (maya run names a rank that stops making calls while
 * the others wait for it in a collective). Updated in place, never read
 * by the collator. */
#define MAYA_TRACE_STATUS_MAGIC 0x54415453u /* "STAT" */

struct maya_trace_status {
    uint32_t magic;             /* MAYA_TRACE_STATUS_MAGIC */
    uint32_t pid;
    uint64_t records;           /* records traced so far: grows with every call */
    uint32_t waiting;           /* 1 while the process waits in a collective for its peers */
    uint32_t op;                /* then: enum maya_coll_op */
    uint64_t comm;              /* its communicator */
    uint64_t seq;               /* its sequence number there */
    int32_t awaits_pid;         /* the process it waits for, 0 any or unknown */
    int32_t write_errno;        /* writing the trace failed with this errno (ENOSPC: a full
                                   disk); what was written before stays readable */
    uint32_t reserved[20];
};

enum maya_rec_type {
    /* definitions: give meaning to ids used by later records */
    MAYA_REC_STRING = 1,
    MAYA_REC_PROCESS = 2,
    MAYA_REC_DEVICE = 3,
    MAYA_REC_STREAM = 4,
    MAYA_REC_KERNEL = 5,
    MAYA_REC_COMM = 6,
    /* calls: one record per API call, all starting with struct maya_call */
    MAYA_REC_CALL = 16,         /* a call with nothing more to say */
    MAYA_REC_LAUNCH = 17,
    MAYA_REC_MEMCPY = 18,
    MAYA_REC_MEMSET = 19,
    MAYA_REC_ALLOC = 20,
    MAYA_REC_FREE = 21,
    MAYA_REC_EVENT_RECORD = 22,
    MAYA_REC_STREAM_WAIT = 23,
    MAYA_REC_SYNC = 24,
    MAYA_REC_HOST_FUNC = 25,
    MAYA_REC_GEMM = 26,
    MAYA_REC_DNN = 27,
    MAYA_REC_COLL = 28,
    MAYA_REC_GRAPH = 29,
    MAYA_REC_MARKER = 30,
    /* notes about the values a program saw (not calls) */
    MAYA_REC_VALUE_READ = 40,
    /* 48..63: about the process's run itself */
    MAYA_REC_ELIMINATED = 48,   /* duplicate-rank elimination stopped this rank (docs/dedup.md) */
    MAYA_REC_COMM_MEMBERS = 49, /* with declared replicas: a communicator's members' global ranks */
    /* 64..127: job traces (collator); see collator/job_trace.h */
    MAYA_REC_END = 255,
};

/* maya_rec_hdr.flags */
#define MAYA_F_UNSUPPORTED 0x0001 /* exported but not implemented: returned not-supported */
#define MAYA_F_HOST_WAITS  0x0002 /* the host waits until this op completes (sync memcpy) */
#define MAYA_F_DEVICE_SYNC 0x0004 /* the host waits for all work of the device (cudaFree) */
#define MAYA_F_FROM_GRAPH  0x0008 /* the op was replayed from a CUDA graph launch */
#define MAYA_F_MEASURED    0x0010 /* call.measured_ns holds a measured device duration */
#define MAYA_F_CAPTURING   0x0020 /* issued to a capturing stream: not executed, joins a graph */
#define MAYA_F_SASS_UNREAD 0x0040 /* KERNEL: its code is SASS only, and no nvdisasm was found to
                                     read it (no work summary: the fallback rule prices it) */
/* What to do about it: the emulator's warning and the report both say this. */
#define MAYA_NVDISASM_REMEDY "install nvdisasm (pip install nvidia-cuda-nvdisasm in the program's Python " \
                             "environment, or the CUDA toolkit) or set MAYA_NVDISASM to it"

struct maya_rec_hdr {
    uint16_t type;              /* enum maya_rec_type */
    uint16_t flags;             /* MAYA_F_* */
    uint32_t bytes;             /* whole record, header included; multiple of 8 */
};

/* ---- definitions ---- */

struct maya_rec_string {        /* MAYA_REC_STRING: defines id before first use */
    struct maya_rec_hdr h;
    uint32_t id;                /* 1.. (0 means "no string") */
    uint32_t len;               /* bytes of text, no NUL; text follows, padded to 8 */
};

struct maya_rec_process {       /* MAYA_REC_PROCESS: once, first record */
    struct maya_rec_hdr h;
    uint32_t hostname;          /* string ids */
    uint32_t cmdline;           /* arguments joined by spaces */
    uint32_t mode;              /* 1 emulate, 2 passthrough */
    uint32_t copy_threshold;    /* copies/memsets up to this many bytes were performed */
};

struct maya_rec_device {        /* MAYA_REC_DEVICE: a device the process used */
    struct maya_rec_hdr h;
    int32_t ordinal;            /* CUDA device ordinal in this process */
    int32_t global_index;       /* node * gpus_per_node + index on the node */
    uint32_t gpu;               /* string id: hwspec key */
    uint32_t reserved;
    uint64_t total_mem_bytes;
    uint8_t uuid[16];
};

/* maya_rec_stream.flags */
#define MAYA_STREAM_NON_BLOCKING 0x0001 /* cudaStreamNonBlocking: no implicit sync with legacy stream */
#define MAYA_STREAM_LEGACY       0x0100 /* the device's legacy default stream (NULL / cudaStreamLegacy) */
#define MAYA_STREAM_PER_THREAD   0x0200 /* a thread's per-thread default stream */
#define MAYA_STREAM_GRAPH        0x0400 /* internal stream of an executable graph: one of its branches */

struct maya_rec_stream {        /* MAYA_REC_STREAM: before a stream's first use */
    struct maya_rec_hdr h;
    uint64_t stream;            /* stream id, 1.. */
    int32_t device;             /* ordinal */
    uint32_t flags;             /* MAYA_STREAM_* */
    int32_t priority;
    uint32_t reserved;
};

enum maya_kparam_kind {
    MAYA_KP_BYTES = 0,          /* unknown type or aggregate: shown as hex */
    MAYA_KP_I8, MAYA_KP_U8, MAYA_KP_I16, MAYA_KP_U16,
    MAYA_KP_I32, MAYA_KP_U32, MAYA_KP_I64, MAYA_KP_U64,
    MAYA_KP_F16, MAYA_KP_BF16, MAYA_KP_F32, MAYA_KP_F64,
    MAYA_KP_PTR,                /* device (or host) address */
    MAYA_KP_BOOL, MAYA_KP_CHAR,
};

struct maya_kparam {
    uint16_t offset;            /* in the parameter buffer */
    uint16_t bytes;
    uint8_t kind;               /* enum maya_kparam_kind */
    uint8_t reserved[3];
};

struct maya_kfeature {          /* a static fact about a kernel, for the estimator */
    uint32_t name;              /* string id: "regs", "static_smem", "ir.dot", ... */
    uint32_t value;
};

enum maya_kernel_source {
    MAYA_KSRC_UNKNOWN = 0,
    MAYA_KSRC_FATBIN = 1,       /* registered by nvcc's __cudaRegisterFunction */
    MAYA_KSRC_MODULE = 2,       /* cuModuleLoadData / cuModuleGetFunction */
    MAYA_KSRC_LIBRARY = 3,      /* cuLibraryLoadData / cudaLibraryGetKernel */
};

struct maya_rec_kernel {        /* MAYA_REC_KERNEL: before a kernel's first launch */
    struct maya_rec_hdr h;
    uint32_t id;                /* kernel id, 1.. */
    uint32_t mangled;           /* string ids */
    uint32_t name;              /* demangled (same as mangled for extern "C") */
    uint32_t source;            /* enum maya_kernel_source */
    uint32_t nparams;           /* 0 with param_bytes > 0: layout unknown */
    uint32_t param_bytes;       /* size of the parameter buffer */
    uint32_t nfeatures;
    uint32_t work_bytes;        /* bytes of the work summary after the features, 0 if none */
    /* followed by struct maya_kparam[nparams], struct maya_kfeature[nfeatures],
     * then (work_bytes > 0) the work summary read from the kernel's code:
     * struct maya_kwork, struct maya_kexpr[nexprs], struct maya_kterm[nterms] */
};

/* The work a kernel does, read from its code (PTX or SASS) by the emulator
 * when the kernel is first launched: per-thread amounts (bytes loaded and
 * stored, FLOPs by precision, ...) each multiplied by how many times a
 * thread executes them. Those multipliers are expressions over the launch
 * (parameter values, block and grid sizes, thread indices), so that loop
 * trip counts and guards are resolved per launch by the estimator: the
 * summary is enough to price any launch of the kernel without the binary.
 * docs/trace-format.md describes how expressions are evaluated. */
enum maya_kw_source { MAYA_KW_PTX = 1, MAYA_KW_SASS = 2 };

/* maya_kwork.flags */
#define MAYA_KW_F_LOOP_UNRESOLVED 0x01 /* a loop whose trip count the code does not show: counted once */
#define MAYA_KW_F_TRUNCATED       0x02 /* code or summary too large: the rest is not counted */
#define MAYA_KW_F_BYTES_UNKNOWN   0x04 /* copies whose size the code does not show (TMA, bulk) */
#define MAYA_KW_F_STORES_UNKNOWN  0x08 /* global stores the terms do not show (a call, a surface
                                          store), or a store whose address adds two parameters:
                                          the stores' parameters are not all known */
#define MAYA_KW_F_WARP_MMA        0x10 /* tensor-core work issued by warp-level instructions
                                          (mma.sync, wmma; SASS HMMA...) */
#define MAYA_KW_F_GROUP_MMA       0x20 /* ... by warpgroup or CTA-level ones (wgmma, tcgen05) */

struct maya_kwork {
    uint8_t source;             /* enum maya_kw_source */
    uint8_t flags;              /* MAYA_KW_F_* */
    uint16_t sm;                /* architecture of the code read (90 for sm_90 / compute_90) */
    uint16_t nexprs;
    uint16_t nterms;
    uint16_t regs;              /* registers per thread (from the cubin), 0 unknown */
    uint16_t reserved;
    uint32_t static_smem;       /* static shared memory per block, bytes */
};

enum maya_kx_op {
    MAYA_KX_UNKNOWN = 0,        /* a value the code computes from memory: not known */
    MAYA_KX_CONST = 1,          /* imm */
    MAYA_KX_PARAM = 2,          /* integer parameter at byte offset a, b bytes; arg 1 = signed */
    MAYA_KX_SREG = 3,           /* special register arg (enum maya_kx_sreg) */
    MAYA_KX_ADD, MAYA_KX_SUB, MAYA_KX_MUL, MAYA_KX_DIV, MAYA_KX_REM, MAYA_KX_SHL, MAYA_KX_SHR,
    MAYA_KX_AND, MAYA_KX_OR, MAYA_KX_XOR, MAYA_KX_MIN, MAYA_KX_MAX,
    MAYA_KX_CMP = 16,           /* share of threads for which (a arg b) holds; arg enum maya_kx_cmp */
    MAYA_KX_NOT = 17,           /* 1 - a (a share) */
    MAYA_KX_POR = 18,           /* a + b - a*b (either of two shares) */
    MAYA_KX_SEL = 19,           /* c ? a : b, c a share: the mean of both, weighted */
    MAYA_KX_PHI = 20,           /* a loop-carried value: a is its value on entry, b the loop */
    MAYA_KX_TRIP = 21,          /* iterations of a loop from a towards b in steps of c, tested
                                   with arg & 0x3f (enum maya_kx_cmp), for the threads that
                                   enter it; arg 0x80: tested before the step; arg 0x40: the
                                   counter halves, shifted right by c bits each step */
    MAYA_KX_PARAM_AT = 22,      /* integer parameter at the byte offset a gives (an index into an
                                   array in the parameters: PyTorch's tensor lists), imm bytes
                                   (1, 2, 4 or 8); arg 1 = signed; b = 0 */
    MAYA_KX_NOPS
};

enum maya_kx_sreg {
    MAYA_SR_TID_X, MAYA_SR_TID_Y, MAYA_SR_TID_Z, MAYA_SR_NTID_X, MAYA_SR_NTID_Y, MAYA_SR_NTID_Z,
    MAYA_SR_CTAID_X, MAYA_SR_CTAID_Y, MAYA_SR_CTAID_Z, MAYA_SR_NCTAID_X, MAYA_SR_NCTAID_Y,
    MAYA_SR_NCTAID_Z, MAYA_SR_LANEID, MAYA_SR_WARPID, MAYA_SR_NSREGS
};

enum maya_kx_cmp {
    MAYA_CMP_LT, MAYA_CMP_LE, MAYA_CMP_GT, MAYA_CMP_GE, MAYA_CMP_EQ, MAYA_CMP_NE, MAYA_CMP_NCMPS
};

/* MAYA_KX_TRIP's arg: the comparison, and how the counter steps */
#define MAYA_KX_TRIP_CMP 0x3f
#define MAYA_KX_TRIP_HALVES 0x40  /* shifted right by c bits (a tree reduction's s >>= 1) */
#define MAYA_KX_TRIP_BEFORE 0x80  /* tested before the step */

struct maya_kexpr {             /* operands a, b, c are indexes of earlier expressions */
    uint8_t op;                 /* enum maya_kx_op */
    uint8_t arg;
    uint16_t a, b, c;
    double imm;
};

/* What a term counts, per execution by one thread. */
enum maya_kw_class {
    MAYA_KW_LD_GLOBAL = 0,      /* bytes read from global memory (loads, cp.async, atomics) */
    MAYA_KW_ST_GLOBAL = 1,      /* bytes written to global memory */
    MAYA_KW_LD_SHARED = 2,      /* bytes read from shared memory (ld.shared, ldmatrix) */
    MAYA_KW_ST_SHARED = 3,
    MAYA_KW_FLOP_FP64 = 4,      /* CUDA-core arithmetic: an FMA is 2 */
    MAYA_KW_FLOP_FP32 = 5,
    MAYA_KW_FLOP_FP16 = 6,      /* half and bfloat16, packed pairs count 2 */
    MAYA_KW_MMA_FP64 = 7,       /* tensor-core FLOPs (2 m n k per warp-level op, shared by its threads) */
    MAYA_KW_MMA_TF32 = 8,
    MAYA_KW_MMA_FP16 = 9,       /* fp16 and bf16 inputs */
    MAYA_KW_MMA_FP8 = 10,
    MAYA_KW_MMA_INT8 = 11,
    MAYA_KW_SFU = 12,           /* special-function ops: exp2, log2, rsqrt, sin, ... */
    MAYA_KW_INSTS = 13,         /* instructions issued, all of them */
    MAYA_KW_ATOMIC = 14,        /* atomic and reduction operations on global memory */
    MAYA_KW_NCLASSES
};

#define MAYA_KW_NO_PARAM 0xffffu

/* maya_kterm.flags */
#define MAYA_KT_F_SAME_EACH_BLOCK 0x01 /* a global load or atomic whose address does not depend on
                                          the block (%ctaid) or on memory: every block reads (or
                                          updates) the same bytes */
#define MAYA_KT_F_SAME_EACH_THREAD 0x02 /* a global load whose address does not depend on the
                                           thread within its block (%tid, lane, warp) or on
                                           memory: a warp's threads read the same bytes, one
                                           request for the warp */
#define MAYA_KT_F_SAME_EACH_ROW 0x04    /* a global load whose address does not depend on %tid.x,
                                           the lane or memory (it may on %tid.y, %tid.z and the
                                           warp): the threads of a warp in one row of the block
                                           read the same bytes, one request per row a warp spans */

struct maya_kterm {
    uint16_t mult;              /* expression: executions per thread */
    uint8_t cls;                /* enum maya_kw_class */
    uint8_t flags;              /* MAYA_KT_F_* (0 in traces before it) */
    uint16_t param;             /* global memory: byte offset of the pointer parameter the
                                   address derives from, MAYA_KW_NO_PARAM if none is known */
    uint16_t body;              /* the innermost loop holding it, numbered from 1 (each loop of
                                   the code its own, even where two count alike); 0 outside
                                   any loop (and in traces before it) */
    float amount;               /* per execution */
    uint32_t reserved3;
};

struct maya_rec_comm {          /* MAYA_REC_COMM: a communicator this process joined */
    struct maya_rec_hdr h;
    uint64_t comm;              /* communicator id, the same in every member's trace */
    uint64_t parent;            /* comm it was split from, 0 if none */
    int32_t rank;
    int32_t nranks;
    int32_t device;             /* ordinal in this process */
    int32_t global_gpu;         /* node * gpus_per_node + device index on the node */
    int32_t color;              /* ncclCommSplit color/key; -1 if not split */
    int32_t key;
};

/* ---- calls ---- */

/* Every call record starts with this. Host times are ns since
 * header.start_mono_ns on a clock that stops while the emulator itself waits
 * (for peers, for its trace writer), so the gap between one call's exit and
 * the next call's entry is the program's own host work. */
struct maya_call {
    uint64_t seq;               /* order of completion in the process, from 0 */
    uint64_t t_enter_ns;
    uint64_t t_exit_ns;
    uint64_t stream;            /* stream id the op went to; 0 for host-only calls */
    uint64_t measured_ns;       /* device time measured in passthrough mode, else 0 */
    uint32_t api;               /* string id of the API function name */
    uint32_t tid;               /* thread index, 0 = first thread that called CUDA */
    int32_t device;             /* the calling thread's current device, -1 if none */
    int32_t result;             /* what the call returned (cudaError_t, CUresult, ...) */
};

struct maya_rec_call {          /* MAYA_REC_CALL */
    struct maya_rec_hdr h;
    struct maya_call call;
};

/* maya_rec_launch.flags */
#define MAYA_LAUNCH_DRIVER      0x1 /* cuLaunchKernel[Ex] */
#define MAYA_LAUNCH_COOPERATIVE 0x2

struct maya_rec_launch {        /* MAYA_REC_LAUNCH: param_bytes of parameters follow, padded to 8 */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint32_t kernel;            /* kernel id */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t cluster[3];        /* 0 0 0 if no cluster dimensions */
    uint32_t smem_bytes;        /* dynamic shared memory */
    uint32_t flags;             /* MAYA_LAUNCH_* */
    uint32_t param_bytes;
    uint32_t nextents;          /* struct maya_kextent after the parameters (padded to 8) */
};

/* How far a pointer parameter can reach: the bytes from the pointer to the
 * end of the allocation it points into, as the emulator knew it at the
 * launch (0: not in any allocation). Recorded for the pointers a kernel's
 * work summary attributes global memory traffic to. */
struct maya_kextent {
    uint16_t param;             /* byte offset of the pointer parameter */
    uint16_t reserved[3];
    uint64_t bytes;
};

enum maya_copy_kind {
    MAYA_COPY_H2D = 1, MAYA_COPY_D2H = 2, MAYA_COPY_D2D = 3, MAYA_COPY_H2H = 4,
    MAYA_COPY_PEER = 5,         /* device to another device */
};

/* maya_rec_memcpy.flags and maya_rec_memset.flags */
#define MAYA_COPY_ASYNC     0x1
#define MAYA_COPY_PINNED    0x2 /* the host side is page-locked */
#define MAYA_COPY_PERFORMED 0x4 /* the bytes were really moved (small copy) */

struct maya_rec_memcpy {        /* MAYA_REC_MEMCPY */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t dst, src;
    uint64_t bytes;             /* total bytes moved */
    uint32_t kind;              /* enum maya_copy_kind, from where the pointers live */
    int32_t src_device, dst_device; /* ordinals, -1 for host */
    uint32_t flags;
    uint64_t width, height, depth;  /* bytes per row, rows, slices (1 1 1 for linear) */
};

struct maya_rec_memset {        /* MAYA_REC_MEMSET */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t dst;
    uint64_t bytes;
    uint32_t value;
    uint32_t elem_bytes;        /* 1, 2 or 4 (cuMemsetD16/D32) */
    uint32_t flags;
    uint32_t reserved;
};

enum maya_alloc_kind {
    MAYA_ALLOC_DEVICE = 1,      /* cudaMalloc, cuMemAlloc, pitched */
    MAYA_ALLOC_ASYNC = 2,       /* cudaMallocAsync, pools (stream-ordered) */
    MAYA_ALLOC_MANAGED = 3,
    MAYA_ALLOC_HOST = 4,        /* page-locked host memory */
    MAYA_ALLOC_HOST_REGISTER = 5,
    MAYA_ALLOC_VMM_PHYSICAL = 6,/* cuMemCreate: counts against capacity */
    MAYA_ALLOC_VMM_RESERVE = 7, /* cuMemAddressReserve: address space only */
    MAYA_ALLOC_VMM_MAP = 8,     /* cuMemMap: address range backed by a physical handle */
};

struct maya_rec_alloc {         /* MAYA_REC_ALLOC and MAYA_REC_FREE */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t ptr;               /* address (or physical handle for VMM_PHYSICAL) */
    uint64_t bytes;             /* as requested (alloc) or as allocated (free) */
    uint32_t kind;              /* enum maya_alloc_kind */
    int32_t device;             /* ordinal, -1 for host memory */
    uint64_t device_used_bytes; /* device memory in use after the call */
    uint64_t device_peak_bytes; /* highest device_used_bytes so far */
};

struct maya_rec_event {         /* MAYA_REC_EVENT_RECORD and MAYA_REC_STREAM_WAIT */
    struct maya_rec_hdr h;
    struct maya_call call;      /* call.stream: the recording / waiting stream */
    uint64_t event;             /* event id */
    uint32_t version;           /* record: the new version; wait: the version waited for
                                   (0 = never recorded: the wait is a no-op) */
    uint32_t flags;             /* the event's creation flags */
};

enum maya_sync_kind {
    MAYA_SYNC_DEVICE = 1,       /* cudaDeviceSynchronize, cuCtxSynchronize */
    MAYA_SYNC_STREAM = 2,       /* target = stream id */
    MAYA_SYNC_EVENT = 3,        /* target = event id, version = the version waited for */
};

struct maya_rec_sync {          /* MAYA_REC_SYNC: the host blocks until the target is done */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t target;
    uint32_t kind;              /* enum maya_sync_kind */
    uint32_t version;
};

struct maya_rec_host_func {     /* MAYA_REC_HOST_FUNC: a host function run in stream order */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t fn;
    uint64_t user_data;
};

enum maya_gemm_lib { MAYA_GEMM_CUBLAS = 1, MAYA_GEMM_CUBLASLT = 2 };

/* maya_rec_gemm.flags */
#define MAYA_GEMM_POINTER_ARRAYS 0x01 /* batched over arrays of pointers (cublas*gemmBatched):
                                         a, b, c, d are the addresses of the arrays */
#define MAYA_GEMM_MATVEC         0x02 /* matrix-vector product (GEMV): n = 1, ldb and ldc are the
                                         increments of x and y */
#define MAYA_GEMM_ROW_MAJOR_A    0x10 /* cuBLASLt layout order ROW: the matrix is stored by rows, */
#define MAYA_GEMM_ROW_MAJOR_B    0x20 /* its ld counts elements between rows (otherwise every */
#define MAYA_GEMM_ROW_MAJOR_C    0x40 /* matrix is column-major, as in cuBLAS) */
#define MAYA_GEMM_ROW_MAJOR_D    0x80

struct maya_rec_gemm {          /* MAYA_REC_GEMM: one cuBLAS/cuBLASLt matrix multiply */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint32_t lib;               /* enum maya_gemm_lib */
    uint32_t flags;             /* MAYA_GEMM_* */
    int32_t transa, transb;     /* cublasOperation_t: 0 N, 1 T, 2 C */
    int64_t m, n, k;
    int64_t batch;              /* 1 for a single GEMM */
    int64_t lda, ldb, ldc, ldd;
    int64_t stride_a, stride_b, stride_c, stride_d; /* elements between batches; 0 if not strided */
    int32_t atype, btype, ctype, dtype; /* cudaDataType_t */
    int32_t compute_type;       /* cublasComputeType_t the GEMM runs with (cuBLAS: after the
                                   handle's math mode, e.g. TF32 makes 68 into 77) */
    int32_t scale_type;         /* cudaDataType_t */
    int32_t epilogue;           /* cublasLtEpilogue_t (1 = default) */
    int32_t algo;               /* algorithm id, -1 default */
    uint64_t a, b, c, d;
    uint64_t workspace_bytes;
};

enum maya_dnn_op {
    MAYA_DNN_CONV_FWD = 1, MAYA_DNN_CONV_BWD_DATA = 2, MAYA_DNN_CONV_BWD_FILTER = 3,
    MAYA_DNN_MATMUL = 4,
    MAYA_DNN_SDPA_FWD = 5, MAYA_DNN_SDPA_BWD = 6,
    MAYA_DNN_BN_FWD_TRAIN = 7, MAYA_DNN_BN_FWD_INFER = 8, MAYA_DNN_BN_BWD = 9,
    MAYA_DNN_SOFTMAX_FWD = 10, MAYA_DNN_SOFTMAX_BWD = 11,
    MAYA_DNN_POINTWISE = 12, MAYA_DNN_REDUCTION = 13, MAYA_DNN_NORM = 14,
    MAYA_DNN_OTHER = 15,
};

#define MAYA_TENSOR_MAX_DIMS 8

struct maya_tensor {
    int32_t dtype;              /* cudnnDataType_t */
    int32_t ndims;              /* 0: tensor absent */
    int64_t dims[MAYA_TENSOR_MAX_DIMS];
    int64_t strides[MAYA_TENSOR_MAX_DIMS];
};

struct maya_rec_dnn {           /* MAYA_REC_DNN: one cuDNN operation (legacy or graph) */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint32_t op;                /* enum maya_dnn_op */
    uint32_t ntensors;          /* tensors used below */
    int32_t conv_nspatial;      /* 2 for 2-D convolution, 0 if not a convolution */
    int32_t conv_mode;          /* cudnnConvolutionMode_t */
    int32_t groups;
    int32_t compute_type;       /* cudnnDataType_t */
    int64_t pad_pre[3], pad_post[3], stride[3], dilation[3];
    int32_t causal;             /* attention: causal mask (1/0) */
    int32_t algo;               /* algorithm / engine id, -1 unknown */
    float attn_scale;
    float dropout;
    uint64_t workspace_bytes;
    uint32_t nops;              /* graph API: operations in the graph */
    uint32_t reserved;
    /* conv: x, w, y; matmul: a, b, c; sdpa: q, k, v, o; bn/softmax/norm: x, y */
    struct maya_tensor t[4];
};

enum maya_coll_op {
    MAYA_COLL_ALLREDUCE = 1, MAYA_COLL_BROADCAST = 2, MAYA_COLL_REDUCE = 3,
    MAYA_COLL_ALLGATHER = 4, MAYA_COLL_REDUCESCATTER = 5,
    MAYA_COLL_SEND = 6, MAYA_COLL_RECV = 7,
    MAYA_COLL_ALLTOALL = 8, MAYA_COLL_GATHER = 9, MAYA_COLL_SCATTER = 10,
};

/* maya_rec_coll.flags */
#define MAYA_COLL_DATA_MOVED 0x1 /* small op: the data really went between ranks */
#define MAYA_COLL_BOTH_WAYS  0x2 /* send/recv: its group has this rank both sending and receiving
                                    on the communicator (NCCL's kernel then splits each channel's
                                    warps between the two directions) */

struct maya_rec_coll {          /* MAYA_REC_COLL: one NCCL collective or point-to-point op */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t comm;              /* communicator id */
    uint64_t seq;               /* collectives: index among this comm's collectives (the same
                                   on every member); send/recv: index among the ops from
                                   sender to receiver on this comm (the same on both sides) */
    uint64_t group;             /* nonzero: ops of one ncclGroupStart..End share it */
    uint64_t count;             /* elements, as NCCL counts them (allgather: per rank sent,
                                   reducescatter: per rank received) */
    uint64_t bytes;             /* count * size of dtype */
    uint64_t sendbuf, recvbuf;
    uint32_t op;                /* enum maya_coll_op */
    int32_t dtype;              /* ncclDataType_t */
    int32_t redop;              /* ncclRedOp_t; custom ops >= ncclNumOps */
    int32_t rank, nranks;
    int32_t peer;               /* root (broadcast, reduce, gather, scatter) or peer
                                   (send, recv); -1 otherwise */
    uint32_t flags;             /* MAYA_COLL_* */
    uint32_t reserved;
};

struct maya_rec_graph {         /* MAYA_REC_GRAPH: bounds of one graph launch's ops */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint64_t graph_exec;        /* executable graph id */
    uint32_t phase;             /* 1 begin (before its ops), 2 end (after them) */
    uint32_t nodes;
};

/* push/pop: nested ranges of a thread (nvtxRangePush/Pop); start/end: ranges
 * that may overlap or end on another thread (nvtxRangeStart/End). A pop or
 * an end carries the name of the range it closes. */
enum maya_marker_kind { MAYA_MARK_PUSH = 1, MAYA_MARK_POP = 2, MAYA_MARK_POINT = 3, MAYA_MARK_START = 4,
                        MAYA_MARK_END = 5 };

struct maya_rec_marker {        /* MAYA_REC_MARKER: a named point or range (NVTX, profiler) */
    struct maya_rec_hdr h;
    struct maya_call call;
    uint32_t name;              /* string id */
    uint32_t kind;              /* enum maya_marker_kind */
};

/* What last wrote device bytes, as the emulator tracks it (real_bytes.c). */
enum maya_writer_kind {
    MAYA_WRITER_REAL = 0,       /* real values: a performed copy, memset or small collective */
    MAYA_WRITER_NONE = 1,       /* nothing wrote them */
    MAYA_WRITER_KERNEL = 2,     /* a kernel launch that was not computed (writer: kernel id) */
    MAYA_WRITER_LIBRARY = 3,    /* a library op (cuBLAS, cuDNN) (writer: API string id) */
    MAYA_WRITER_COPY = 4,       /* a copy too large to perform, or of bytes not real (API) */
    MAYA_WRITER_MEMSET = 5,     /* a memset too large to perform (API) */
    MAYA_WRITER_COLL = 6,       /* a collective too large to move data, or of inputs not real (API) */
};

struct maya_rec_value_read {    /* MAYA_REC_VALUE_READ: follows the MEMCPY record of a small
                                   device-to-host copy that read bytes not real */
    struct maya_rec_hdr h;
    uint64_t src;               /* device address read */
    uint64_t bytes;             /* bytes the copy read */
    uint64_t unreal_bytes;      /* of which not real */
    uint32_t writer_kind;       /* enum maya_writer_kind of the first bytes not real */
    uint32_t writer;            /* KERNEL: kernel id; LIBRARY, COPY, MEMSET, COLL: API string id;
                                   NONE: 0 */
    uint32_t declared;          /* string id of the MAYA_VALUES declaration whose value the host
                                   was given instead, 0 if none */
    uint32_t reserved;
};

struct maya_end_device {
    int32_t device;
    uint32_t reserved;
    uint64_t peak_bytes;        /* highest device memory in use */
    uint64_t total_bytes;       /* capacity */
};

struct maya_rec_end {           /* MAYA_REC_END: last record of a complete trace */
    struct maya_rec_hdr h;
    uint64_t records;           /* records before this one */
    uint64_t unsupported_calls; /* calls that returned not-supported */
    uint32_t ndevices;
    uint32_t oom;               /* 1 if any allocation failed for lack of memory */
    /* followed by struct maya_end_device[ndevices] */
};

/* MAYA_REC_ELIMINATED: the last record before END of a rank that duplicate-
 * rank elimination stopped (docs/dedup.md). The rank issued stop_op NCCL
 * operations (COLL records) and was stopped before the next; it did the
 * same work as rank `source`, whose trace stands for it from there on. */
struct maya_rec_eliminated {
    struct maya_rec_hdr h;
    int32_t source;             /* the representative: the global rank that ran on */
    uint32_t how;               /* enum maya_elim_how */
    uint64_t stop_op;           /* COLL records of this rank before the stop */
    uint64_t stop_hash;         /* maya_coll_hash over those stop_op records */
    uint64_t check_op;          /* ops when the classes were compared (0: declared) */
    uint64_t check_hash;        /* the hash compared then */
    uint64_t t_ns;              /* host time of the stop */
};

/* MAYA_REC_COMM_MEMBERS: written after a COMM record when replicas are
 * declared (maya run --replicas): the global rank of every member, by rank in
 * the communicator, the ranks that never started included. */
struct maya_rec_comm_members {
    struct maya_rec_hdr h;
    uint64_t comm;
    int32_t nranks;
    uint32_t reserved;
    /* followed by int32_t rank[nranks], padded to 8 bytes */
};

enum maya_elim_how {
    MAYA_ELIM_MATCHED = 1,      /* its op hash matched the source's after an iteration */
    MAYA_ELIM_DECLARED = 2,     /* declared a replica (maya run --replicas): stopped at its first op */
};

#define MAYA_REC_ALIGN(n) (((n) + 7u) & ~7u)

/* The host clock a trace header's (or rank section's) flags name. */
static inline const char *maya_host_clock_name(uint32_t flags)
{
    return flags & MAYA_TRACE_F_HOST_CPU ? "cpu" : flags & MAYA_TRACE_F_HOST_ACTIVE ? "active" : "wall";
}

/* Does a record of this type start with struct maya_call (after its header)? */
static inline int maya_rec_is_call(uint16_t type)
{
    return type >= MAYA_REC_CALL && type <= MAYA_REC_MARKER;
}

/* Bytes per element of a COLL record's dtype (ncclDataType_t: int8, uint8,
 * int32, uint32, int64, uint64, float16, float32, float64, bfloat16,
 * float8e4m3, float8e5m2); 0 for a type NCCL does not define. */
static inline int maya_coll_dtype_bytes(int32_t dtype)
{
    static const int8_t bytes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
    return dtype >= 0 && dtype < (int32_t)sizeof bytes ? bytes[dtype] : 0;
}

/* Duplicate-rank elimination (docs/dedup.md): what an NCCL operation
 * contributes to its rank's rolling hash. Ranks whose hashes agree issued
 * the same operations in the same order on corresponding communicators:
 * op, count, type, reduction (custom ones alike), communicator size and
 * which of the process's communicators (comm_index: 0 for the first it
 * made), the root as a rank of the communicator, a send/recv peer relative
 * to the caller ((peer - rank) mod nranks); never the caller's own rank. */
static inline uint64_t maya_coll_signature(uint32_t op, uint64_t count, int32_t dtype, int32_t redop,
                                           int32_t rank, int32_t nranks, int32_t peer, uint32_t comm_index)
{
    uint64_t where = 0;
    if (op == MAYA_COLL_SEND || op == MAYA_COLL_RECV)
        where = nranks > 0 ? (uint64_t)(((int64_t)peer - rank) % nranks + nranks) % (uint64_t)nranks : 0;
    else if (op == MAYA_COLL_BROADCAST || op == MAYA_COLL_REDUCE || op == MAYA_COLL_GATHER ||
             op == MAYA_COLL_SCATTER)
        where = (uint64_t)(uint32_t)peer;
    if (redop > 5)
        redop = 5; /* custom (PreMulSum) ops, >= ncclNumOps (5): their numbers are per communicator */
    uint64_t x[6] = { op, count, (uint64_t)(uint32_t)dtype << 32 | (uint32_t)redop, (uint64_t)(uint32_t)nranks,
                      comm_index, where };
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 6; i++) { /* splitmix64 over the fields */
        h ^= x[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebull;
        h ^= h >> 31;
    }
    return h;
}

/* The rolling hash of a rank's NCCL operations: h(0) = 0,
 * h(n+1) = h(n) * MAYA_COLL_HASH_BASE + signature(op n) + 1 (mod 2^64). */
#define MAYA_COLL_HASH_BASE 0x100000001b3ull
static inline uint64_t maya_coll_hash_next(uint64_t h, uint64_t signature)
{
    return h * MAYA_COLL_HASH_BASE + signature + 1;
}

/* Layout checks: these sizes are the file format. */
_Static_assert(sizeof(struct maya_trace_header) == 128, "header size");
_Static_assert(sizeof(struct maya_trace_chunk) == 16, "chunk size");
_Static_assert(sizeof(struct maya_trace_tail) == 64, "tail slot header size");
_Static_assert(sizeof(struct maya_trace_status) == 128, "status size");
_Static_assert(sizeof(struct maya_call) == 56, "call size");
_Static_assert(sizeof(struct maya_rec_eliminated) == 56, "eliminated size");
_Static_assert(sizeof(struct maya_rec_comm_members) == 24, "comm members size");
_Static_assert(sizeof(struct maya_rec_call) == 64, "call record size");
_Static_assert(sizeof(struct maya_rec_launch) == 120, "launch size");
_Static_assert(sizeof(struct maya_rec_memcpy) == 128, "memcpy size");
_Static_assert(sizeof(struct maya_rec_gemm) == 248, "gemm size");
_Static_assert(sizeof(struct maya_rec_coll) == 152, "coll size");
_Static_assert(sizeof(struct maya_rec_kernel) == 40, "kernel size");
_Static_assert(sizeof(struct maya_kwork) == 16, "kwork size");
_Static_assert(sizeof(struct maya_kexpr) == 16, "kexpr size");
_Static_assert(sizeof(struct maya_kterm) == 16, "kterm size");
_Static_assert(sizeof(struct maya_kextent) == 16, "kextent size");
_Static_assert(sizeof(struct maya_tensor) == 136, "tensor size");
_Static_assert(sizeof(struct maya_rec_dnn) == 760, "dnn size");
_Static_assert(sizeof(struct maya_rec_alloc) == 104, "alloc size");
_Static_assert(sizeof(struct maya_rec_value_read) == 48, "value read size");

#endif
