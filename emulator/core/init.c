/* Emulator start-up: configuration, emulated devices, per-thread state,
 * contexts, and what happens at fork and exit. */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

EMU_API volatile int emu_started; /* 0 not yet, 1 running, -1 failed, -2 forked child */
EMU_API volatile int emu_driver_initialized;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_config config;
static struct maya_hwspecs hwspecs;
static struct emu_device *devices;
static int ndevices;
/* emu_init_passthrough's arguments, until configure reads them */
static char pt_trace_dir[4096], pt_gpu[64];

/* trace_writer.c */
int emu_trace_start(const struct emu_config *cfg);
/* host_clock.c */
int emu_host_clock_configure(struct emu_config *cfg);
/* streams.c */
void emu_streams_init(void);

EMU_API const struct emu_config *emu_config(void)
{
    return &config;
}

static int env_int(const char *name, int def, int lo, int hi, int *out)
{
    const char *s = getenv(name);
    int64_t v;
    if (!s || !*s) {
        *out = def;
        return 0;
    }
    if (maya_parse_i64(s, &v) < 0 || v < lo || v > hi)
        return maya_error("%s=\"%s\": expected a whole number from %d to %d", name, s, lo, hi);
    *out = (int)v;
    return 0;
}

static void make_uuid(struct cudaDeviceProp *p, int global_index);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi and NVML print it. */
static void format_uuid(const unsigned char *u, char *out, size_t size)
{
    snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

/* The node GPU a CUDA_VISIBLE_DEVICES entry names: an index, or a GPU UUID
 * (a prefix is enough when it names one GPU only, as the driver accepts);
 * -1 if none. */
static int visible_entry(const char *tok, int gpus_per_node)
{
    int64_t v;
    if (maya_parse_i64(tok, &v) == 0)
        return v >= 0 && v < gpus_per_node ? (int)v : -1;
    if (strncmp(tok, "GPU-", 4) != 0 || strlen(tok) <= 4)
        return -1;
    int found = -1;
    for (int i = 0; i < gpus_per_node; i++) {
        struct cudaDeviceProp p = config.gpu->prop;
        char text[64];
        make_uuid(&p, config.node * gpus_per_node + i);
        format_uuid((const unsigned char *)p.uuid.bytes, text, sizeof text);
        if (strncasecmp(text, tok, strlen(tok)) == 0) {
            if (found >= 0)
                return -1; /* ambiguous prefix */
            found = i;
        }
    }
    return found;
}

/* CUDA_VISIBLE_DEVICES: a comma list of indices or GPU UUIDs. The driver
 * stops at the first entry that names no GPU (or one already listed); an
 * empty value hides every device. */
static int visible_devices(int gpus_per_node, int *map, int max)
{
    const char *s = getenv("CUDA_VISIBLE_DEVICES");
    if (!s) {
        for (int i = 0; i < gpus_per_node && i < max; i++)
            map[i] = i;
        return MAYA_MIN(gpus_per_node, max);
    }
    int n = 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        int v = visible_entry(tok, gpus_per_node);
        if (v < 0)
            break;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= map[i] == v;
        if (dup)
            break;
        map[n++] = v;
    }
    return n;
}

static void make_uuid(struct cudaDeviceProp *p, int global_index)
{
    /* Distinct per emulated GPU, stable across runs: the file's uuid with the
     * device's global index mixed into the first and last bytes, so that even
     * the first group (what people abbreviate a UUID to) differs. */
    unsigned char *u = (unsigned char *)p->uuid.bytes;
    uint32_t mix = (uint32_t)global_index * 0x9e3779b1u;
    for (int i = 0; i < 4; i++) {
        u[i] ^= (unsigned char)(mix >> (24 - 8 * i));
        u[12 + i] ^= (unsigned char)((uint32_t)global_index >> (24 - 8 * i));
    }
}

static int configure(void)
{
    maya_set_error_prefix("maya-emu");
    if (maya_hwspecs_load_default((const void *)configure, &hwspecs) < 0)
        return -1;
    const char *gpu = config.passthrough && pt_gpu[0] ? pt_gpu : getenv("MAYA_GPU");
    if (!gpu || !*gpu)
        gpu = "H100-SXM";
    config.gpu = maya_hwspecs_find_gpu(&hwspecs, gpu);
    if (!config.gpu) {
        char names[2048];
        maya_hwspecs_gpu_names(&hwspecs, names, sizeof names);
        return maya_error("MAYA_GPU=\"%s\" is not a known GPU; known: %s", gpu, names);
    }
    if (env_int("MAYA_GPUS_PER_NODE", 8, 1, 64, &config.gpus_per_node) < 0 ||
        env_int("MAYA_NODE", 0, 0, 1 << 20, &config.node) < 0)
        return -1;
    const char *rank_var = getenv("MAYA_RANK") ? "MAYA_RANK" : "RANK";
    if (env_int(rank_var, -1, -1, 1 << 24, &config.rank) < 0 ||
        env_int("WORLD_SIZE", -1, -1, 1 << 24, &config.world_size) < 0 ||
        env_int("LOCAL_RANK", -1, -1, 1 << 24, &config.local_rank) < 0)
        return -1;
    config.copy_threshold = config.passthrough ? 0 : 64 << 10;
    const char *thr = config.passthrough ? NULL : getenv("MAYA_COPY_THRESHOLD");
    if (thr && *thr && maya_parse_size(thr, &config.copy_threshold) < 0)
        return maya_error("MAYA_COPY_THRESHOLD=\"%s\": expected a size in bytes (e.g. 65536, 64K)", thr);
    const char *fault = getenv("MAYA_INJECT_FAULT");
    if (fault && *fault && maya_parse_u64(fault, &config.fault_launch) < 0)
        return maya_error("MAYA_INJECT_FAULT=\"%s\": expected the number of the launch that faults "
                          "(1 = the first), or 0 for none", fault);
    const char *kw = getenv("MAYA_KERNEL_WORK");
    if (kw && *kw && strcmp(kw, "0") != 0 && strcmp(kw, "1") != 0)
        return maya_error("MAYA_KERNEL_WORK=\"%s\": expected 1 (read kernels' work from their code, the "
                          "default) or 0 (do not)", kw);
    config.no_kernel_work = kw && strcmp(kw, "0") == 0;
    const char *q = getenv("MAYA_QUIET");
    config.quiet = q && *q && strcmp(q, "0") != 0;
    const char *intra = getenv("MAYA_INTRA_NODE");
    if (intra && *intra) {
        if (maya_intra_link_parse(intra, &config.intra) < 0)
            return maya_error("MAYA_INTRA_NODE=\"%s\": expected nvswitch, pairwise or pcie", intra);
    } else {
        struct maya_cluster_spec node;
        maya_default_cluster(&hwspecs, config.gpu, config.gpus_per_node, &node);
        config.intra = node.intra;
    }
    if (emu_host_clock_configure(&config) < 0 || emu_values_configure() < 0)
        return -1;
    const char *dir = config.passthrough ? pt_trace_dir : getenv("MAYA_TRACE_DIR");
    if (dir && *dir && maya_snprintf(config.trace_dir, sizeof config.trace_dir, "%s", dir) < 0)
        return -1;

    int map[64];
    ndevices = visible_devices(config.gpus_per_node, map, 64);
    devices = calloc((size_t)MAYA_MAX(ndevices, 1), sizeof *devices);
    if (!devices)
        return maya_error("out of memory");
    for (int i = 0; i < ndevices; i++) {
        struct emu_device *d = &devices[i];
        d->ordinal = i;
        d->index_on_node = map[i];
        d->global_index = config.node * config.gpus_per_node + map[i];
        d->spec = config.gpu;
        emu_node_gpu_prop(map[i], &d->prop);
        /* A real context keeps some memory for itself; the program gets the rest. */
        d->capacity = config.passthrough ? UINT64_MAX / 2 : d->prop.totalGlobalMem;
        d->primary_flags = 0;
    }
    return 0;
}

EMU_API int emu_node_gpu_prop(int index_on_node, struct cudaDeviceProp *out)
{
    if (!config.gpu || index_on_node < 0 || index_on_node >= config.gpus_per_node)
        return -1;
    *out = config.gpu->prop;
    /* consecutive buses, as the GPUs of a real node enumerate */
    out->pciBusID = config.gpu->prop.pciBusID + index_on_node;
    make_uuid(out, config.node * config.gpus_per_node + index_on_node);
    return 0;
}

static void at_fork_child(void)
{
    /* CUDA cannot be used in a child forked after initialisation: calls fail
     * with an initialisation error, and the child must not touch the
     * parent's trace. */
    if (emu_started == 1)
        emu_started = -2;
}

static void at_exit(void)
{
    if (emu_started == 1)
        emu_trace_finish();
}

static int configured; /* 0 not yet, 1 done, -1 failed (message printed) */

/* Under init_lock. */
static int configure_once(void)
{
    if (!configured)
        __atomic_store_n(&configured, configure() < 0 ? -1 : 1, __ATOMIC_RELEASE);
    return configured;
}

EMU_API enum emu_err emu_configure(void)
{
    if (__atomic_load_n(&configured, __ATOMIC_ACQUIRE) == 1)
        return EMU_OK;
    pthread_mutex_lock(&init_lock);
    int c = configure_once();
    pthread_mutex_unlock(&init_lock);
    return c == 1 ? EMU_OK : EMU_ERR_INIT;
}

EMU_API enum emu_err emu_init(void)
{
    if (emu_started == 1)
        return EMU_OK;
    if (emu_started == -2)
        return EMU_ERR_NOT_INITIALIZED;
    pthread_mutex_lock(&init_lock);
    if (emu_started == 0) {
        if (configure_once() < 0) {
            emu_started = -1;
        } else {
            emu_streams_init();
            if (emu_trace_start(&config) < 0) {
                emu_started = -1;
            } else {
                pthread_atfork(NULL, NULL, at_fork_child);
                atexit(at_exit);
                __atomic_store_n(&emu_started, 1, __ATOMIC_RELEASE);
            }
        }
    }
    pthread_mutex_unlock(&init_lock);
    if (emu_started == 1)
        return EMU_OK;
    return emu_started == -2 ? EMU_ERR_NOT_INITIALIZED : EMU_ERR_INIT;
}

EMU_API enum emu_err emu_init_passthrough(const char *trace_dir, const char *gpu_key)
{
    pthread_mutex_lock(&init_lock);
    int fresh = emu_started == 0;
    if (fresh) {
        config.passthrough = 1;
        snprintf(pt_trace_dir, sizeof pt_trace_dir, "%s", trace_dir ? trace_dir : "");
        snprintf(pt_gpu, sizeof pt_gpu, "%s", gpu_key ? gpu_key : "");
    }
    pthread_mutex_unlock(&init_lock);
    if (!fresh && !config.passthrough)
        return EMU_ERR_INIT;
    return emu_init();
}

EMU_API int emu_device_count(void)
{
    return ndevices;
}

EMU_API struct emu_device *emu_device(int ordinal)
{
    return ordinal >= 0 && ordinal < ndevices ? &devices[ordinal] : NULL;
}

/* ---- threads ---- */

static __thread struct emu_thread *self;
static uint32_t next_tid;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_free(void *p)
{
    free(p);
}

static void make_thread_key(void)
{
    pthread_key_create(&thread_key, thread_free);
}

EMU_API struct emu_thread *emu_thread(void)
{
    if (__builtin_expect(self != NULL, 1))
        return self;
    pthread_once(&thread_key_once, make_thread_key);
    struct emu_thread *t = calloc(1, sizeof *t);
    if (!t)
        abort(); /* a few hundred bytes: nothing sensible is left to do */
    t->tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
    pthread_setspecific(thread_key, t);
    self = t;
    return t;
}

/* ---- contexts ---- */

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_ctx **primaries;
static uint64_t next_ctx_id = 1;

EMU_API struct emu_ctx *emu_primary_ctx(int ordinal)
{
    struct emu_device *d = emu_device(ordinal);
    if (!d)
        return NULL;
    pthread_mutex_lock(&ctx_lock);
    if (!primaries)
        primaries = calloc((size_t)ndevices, sizeof *primaries);
    struct emu_ctx *c = primaries ? primaries[ordinal] : NULL;
    if (primaries && !c) {
        c = calloc(1, sizeof *c);
        if (c) {
            c->magic = EMU_CTX_MAGIC;
            c->device = ordinal;
            c->primary = 1;
            c->id = next_ctx_id++;
            primaries[ordinal] = c;
        }
    }
    pthread_mutex_unlock(&ctx_lock);
    if (c) {
        emu_driver_initialized = 1;
        emu_device_touch(d);
    }
    return c;
}

EMU_API struct emu_ctx *emu_ctx_create(int ordinal, unsigned flags)
{
    struct emu_device *d = emu_device(ordinal);
    if (!d)
        return NULL;
    struct emu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = EMU_CTX_MAGIC;
    c->device = ordinal;
    c->flags = flags;
    c->refs = 1;
    pthread_mutex_lock(&ctx_lock);
    c->id = next_ctx_id++;
    pthread_mutex_unlock(&ctx_lock);
    emu_device_touch(d);
    return c;
}

EMU_API int emu_ctx_valid(const struct emu_ctx *ctx)
{
    return ctx && ctx->magic == EMU_CTX_MAGIC;
}

EMU_API enum emu_err emu_ctx_destroy(struct emu_ctx *ctx)
{
    if (!emu_ctx_valid(ctx) || ctx->primary)
        return EMU_ERR_INVALID_CONTEXT;
    struct emu_thread *t = emu_thread();
    for (int i = 0; i < t->nctx; i++)
        if (t->ctx[i] == ctx) {
            memmove(&t->ctx[i], &t->ctx[i + 1], (size_t)(t->nctx - i - 1) * sizeof t->ctx[0]);
            t->nctx--;
            i--;
        }
    ctx->magic = 0;
    free(ctx);
    return EMU_OK;
}

EMU_API int emu_current_device(void)
{
    struct emu_thread *t = emu_thread();
    if (t->nctx > 0)
        return t->ctx[t->nctx - 1]->device;
    return 0;
}

EMU_API enum emu_err emu_set_device(int ordinal)
{
    if (!emu_device(ordinal))
        return EMU_ERR_INVALID_DEVICE;
    struct emu_ctx *c = emu_primary_ctx(ordinal);
    if (!c)
        return EMU_ERR_OUT_OF_MEMORY;
    struct emu_thread *t = emu_thread();
    /* cudaSetDevice replaces the current context; it does not push. */
    if (t->nctx == 0)
        t->nctx = 1;
    t->ctx[t->nctx - 1] = c;
    devices[ordinal].primary_active = 1;
    return EMU_OK;
}

EMU_API void emu_device_touch(struct emu_device *d)
{
    if (__atomic_load_n(&d->defined, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&ctx_lock);
    if (!d->defined) {
        struct maya_rec_device r;
        memset(&r, 0, sizeof r);
        r.h.type = MAYA_REC_DEVICE;
        r.h.bytes = sizeof r;
        r.ordinal = d->ordinal;
        r.global_index = d->global_index;
        r.gpu = emu_string(d->spec->key);
        r.total_mem_bytes = d->prop.totalGlobalMem;
        memcpy(r.uuid, d->prop.uuid.bytes, 16);
        emu_trace_emit(&r);
        __atomic_store_n(&d->defined, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx_lock);
}
