/* Kernels: modules (fat binaries, cubins, PTX), the kernels they hold, and
 * tracing a launch with its parameter values.
 *
 * nvcc's host stubs are looked up by address in a hash table; the handle the
 * runtime gives out (cudaKernel_t, CUfunction) is the struct emu_kernel
 * itself, so the common launch paths need no lookup at all.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_module *modules;
static uint32_t next_kernel_id = 1;
/* kernel by trace id - 1, for naming what wrote bytes (declared_values.c) */
static struct emu_kernel **by_id;
static uint32_t cap_by_id;

/* host stub address -> kernel, open addressing */
static struct emu_kernel **by_stub;
static size_t stub_cap, stub_count;

EMU_API struct emu_module *emu_module_new(const void *image, size_t bytes, int copy, int source)
{
    struct emu_module *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->magic = EMU_MODULE_MAGIC;
    m->source = source;
    m->image_bytes = bytes;
    if (copy && image && bytes) {
        void *c = malloc(bytes);
        if (!c) {
            free(m);
            return NULL;
        }
        memcpy(c, image, bytes);
        m->image = c;
        m->owns_image = 1;
    } else {
        m->image = image;
    }
    pthread_mutex_lock(&lock);
    m->next = modules;
    modules = m;
    pthread_mutex_unlock(&lock);
    return m;
}

static void stub_remove_locked(const struct emu_kernel *k);

EMU_API void emu_module_free(struct emu_module *m)
{
    if (!m || m->magic != EMU_MODULE_MAGIC)
        return;
    pthread_mutex_lock(&lock);
    for (struct emu_module **p = &modules; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    /* Kernels stay allocated (their ids live on in the trace, and a stale
     * CUfunction must not crash); only the stub table forgets them. */
    for (struct emu_kernel *k = m->kernels; k; k = k->next)
        if (k->host_fun)
            stub_remove_locked(k);
    m->magic = 0;
    pthread_mutex_unlock(&lock);
    if (m->owns_image)
        free((void *)m->image);
    m->image = NULL;
    emu_image_index_free(m->index);
    m->index = NULL;
}

static size_t stub_slot(const void *p, size_t cap)
{
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 17;
    h *= 0xed5ad4bbu;
    h ^= h >> 11;
    return h & (cap - 1);
}

static int stub_insert_locked(struct emu_kernel *k)
{
    if ((stub_count + 1) * 2 > stub_cap) {
        size_t ncap = stub_cap ? stub_cap * 2 : 1024;
        struct emu_kernel **n = calloc(ncap, sizeof *n);
        if (!n)
            return -1;
        for (size_t i = 0; i < stub_cap; i++) {
            if (!by_stub[i])
                continue;
            size_t j = stub_slot(by_stub[i]->host_fun, ncap);
            while (n[j])
                j = (j + 1) & (ncap - 1);
            n[j] = by_stub[i];
        }
        free(by_stub);
        by_stub = n;
        stub_cap = ncap;
    }
    size_t j = stub_slot(k->host_fun, stub_cap);
    while (by_stub[j] && by_stub[j]->host_fun != k->host_fun)
        j = (j + 1) & (stub_cap - 1);
    if (!by_stub[j])
        stub_count++;
    by_stub[j] = k; /* a re-registered stub takes the newest kernel */
    return 0;
}

static void stub_remove_locked(const struct emu_kernel *k)
{
    if (!stub_cap)
        return;
    size_t j = stub_slot(k->host_fun, stub_cap);
    while (by_stub[j] && by_stub[j] != k)
        j = (j + 1) & (stub_cap - 1);
    if (!by_stub[j])
        return;
    /* Backward-shift deletion keeps probe chains intact. */
    by_stub[j] = NULL;
    stub_count--;
    for (size_t i = (j + 1) & (stub_cap - 1); by_stub[i]; i = (i + 1) & (stub_cap - 1)) {
        struct emu_kernel *moved = by_stub[i];
        by_stub[i] = NULL;
        size_t s = stub_slot(moved->host_fun, stub_cap);
        while (by_stub[s])
            s = (s + 1) & (stub_cap - 1);
        by_stub[s] = moved;
    }
}

EMU_API struct emu_kernel *emu_kernel_add(struct emu_module *m, const char *mangled, const void *host_fun)
{
    struct emu_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->magic = EMU_KERNEL_MAGIC;
    k->mangled = strdup(mangled ? mangled : "?");
    k->name = emu_demangle(k->mangled);
    k->host_fun = host_fun;
    k->module = m;
    k->source = m ? m->source : MAYA_KSRC_UNKNOWN;
    k->max_threads_per_block = 1024;
    k->num_regs = 32;
    k->preferred_carveout = -1;
    if (!k->mangled || !k->name) {
        free(k->mangled);
        free(k->name);
        free(k);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (m) {
        k->next = m->kernels;
        m->kernels = k;
    }
    if (host_fun && stub_insert_locked(k) < 0)
        k->host_fun = NULL;
    pthread_mutex_unlock(&lock);
    return k;
}

EMU_API struct emu_kernel *emu_kernel_by_host_fun(const void *host_fun)
{
    struct emu_kernel *k = NULL;
    pthread_mutex_lock(&lock);
    if (stub_cap) {
        size_t j = stub_slot(host_fun, stub_cap);
        while (by_stub[j] && by_stub[j]->host_fun != host_fun)
            j = (j + 1) & (stub_cap - 1);
        k = by_stub[j];
    }
    pthread_mutex_unlock(&lock);
    return k;
}

EMU_API struct emu_kernel *emu_kernel_by_name(struct emu_module *m, const char *mangled)
{
    pthread_mutex_lock(&lock);
    struct emu_kernel *k = m ? m->kernels : NULL;
    while (k && strcmp(k->mangled, mangled) != 0)
        k = k->next;
    pthread_mutex_unlock(&lock);
    return k;
}

EMU_API void emu_kernel_prepare(struct emu_kernel *k)
{
    if (__atomic_load_n(&k->trace_id, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&lock);
    if (k->trace_id) {
        pthread_mutex_unlock(&lock);
        return;
    }
    if (!k->layout_known && k->module && k->module->image) {
        /* Reading the fat binary (decompressing it, for big libraries some
         * milliseconds) is the emulator's work: off the program's clock. */
        emu_wait_begin();
        if (emu_fatbin_kernel_layout(k->module->image, k->module->image_bytes, k) == 0)
            k->layout_known = 1;
        emu_wait_end();
    }
    k->readonly_words = emu_real_readonly_words(k);
    uint32_t id = next_kernel_id++;
    if (id > cap_by_id) {
        uint32_t c = cap_by_id ? cap_by_id * 2 : 256;
        struct emu_kernel **n = realloc(by_id, c * sizeof *n);
        if (n) {
            by_id = n;
            cap_by_id = c;
        }
    }
    if (id <= cap_by_id)
        by_id[id - 1] = k;
    pthread_mutex_unlock(&lock);

    size_t bytes = sizeof(struct maya_rec_kernel) + k->nparams * sizeof(struct maya_kparam) +
                   k->nfeatures * sizeof(struct maya_kfeature) + k->work_bytes;
    unsigned char *buf = calloc(1, MAYA_REC_ALIGN(bytes));
    if (buf) {
        struct maya_rec_kernel *r = (void *)buf;
        r->h.type = MAYA_REC_KERNEL;
        r->h.bytes = (uint32_t)MAYA_REC_ALIGN(bytes);
        r->h.flags = k->sass_unread ? MAYA_F_SASS_UNREAD : 0;
        r->id = id;
        r->mangled = emu_string(k->mangled);
        r->name = emu_string(k->name);
        r->source = (uint32_t)k->source;
        r->nparams = k->layout_known ? k->nparams : 0;
        r->param_bytes = k->layout_known ? k->param_bytes : 0;
        r->nfeatures = k->nfeatures;
        if (k->layout_known)
            memcpy(buf + sizeof *r, k->params, k->nparams * sizeof *k->params);
        struct maya_kfeature *f = (void *)(buf + sizeof *r + r->nparams * sizeof(struct maya_kparam));
        memcpy(f, k->features, k->nfeatures * sizeof *f);
        if (k->work && k->layout_known) {
            r->work_bytes = k->work_bytes;
            memcpy(f + k->nfeatures, k->work, k->work_bytes);
        } else {
            r->h.bytes = (uint32_t)MAYA_REC_ALIGN(bytes - k->work_bytes);
        }
        emu_trace_emit(r);
        free(buf);
    }
    __atomic_store_n(&k->trace_id, id, __ATOMIC_RELEASE);
}

EMU_API const char *emu_kernel_name_by_id(uint32_t id)
{
    pthread_mutex_lock(&lock);
    const char *name = id && id < next_kernel_id && id <= cap_by_id && by_id[id - 1] ? by_id[id - 1]->name : NULL;
    pthread_mutex_unlock(&lock);
    return name;
}

EMU_API enum emu_err emu_launch_check(const struct emu_launch *l)
{
    struct emu_device *d = emu_device(l->stream ? l->stream->device : emu_current_device());
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    const struct cudaDeviceProp *p = &d->prop;
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (threads == 0 || l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0)
        return EMU_ERR_INVALID_CONFIG;
    for (int i = 0; i < 3; i++)
        if ((int64_t)l->block[i] > p->maxThreadsDim[i] || (int64_t)l->grid[i] > p->maxGridSize[i])
            return EMU_ERR_INVALID_CONFIG;
    int limit = l->kernel ? MAYA_MIN(l->kernel->max_threads_per_block, p->maxThreadsPerBlock)
                          : p->maxThreadsPerBlock;
    if (threads > (uint64_t)limit)
        return EMU_ERR_INVALID_CONFIG;
    /* Dynamic shared memory up to the kernel's MaxDynamicSharedMemorySize
     * (by default what the 48 KiB without opt-in leave beside its static
     * shared memory), and static + dynamic within the opt-in maximum. */
    uint64_t stat = (uint64_t)(l->kernel ? MAYA_MAX(l->kernel->static_smem, 0) : 0);
    uint64_t max_dyn = l->kernel && l->kernel->max_dynamic_smem > 0
                           ? (uint64_t)l->kernel->max_dynamic_smem
                           : (p->sharedMemPerBlock > stat ? p->sharedMemPerBlock - stat : 0);
    uint64_t optin = MAYA_MAX(p->sharedMemPerBlockOptin, p->sharedMemPerBlock);
    if (l->smem_bytes > max_dyn || l->smem_bytes + stat > optin)
        return EMU_ERR_INVALID_CONFIG;
    return EMU_OK;
}

EMU_API uint32_t emu_kernel_pack_args(struct emu_kernel *k, void **args, void *buf, size_t cap)
{
    emu_kernel_prepare(k);
    if (!args || !k->layout_known || k->param_bytes > cap)
        return 0;
    unsigned char *p = buf;
    memset(p, 0, k->param_bytes);
    for (uint32_t i = 0; i < k->nparams; i++)
        if (args[i] && (uint32_t)k->params[i].offset + k->params[i].bytes <= k->param_bytes)
            memcpy(p + k->params[i].offset, args[i], k->params[i].bytes);
    return k->param_bytes;
}

/* The largest parameter buffer a launch can have (CUDA 12.1+: 32764 bytes). */
#define MAX_PARAM_BYTES 32764u

/* Each thread builds its launch records in its own buffer, made on its
 * first launch with room for the largest one. */
static __thread unsigned char *launch_buf;
#define LAUNCH_BUF_BYTES (sizeof(struct maya_rec_launch) + MAYA_REC_ALIGN(MAX_PARAM_BYTES) + \
                          EMU_MAX_EXTENTS * sizeof(struct maya_kextent))

static unsigned char *thread_launch_buf(void)
{
    if (__builtin_expect(!launch_buf, 0))
        launch_buf = malloc(LAUNCH_BUF_BYTES);
    return launch_buf;
}

/* A launch to a capturing stream: a kernel node with the packed values. */
static void capture_launch(uint32_t api, uint64_t t_enter, int result, const struct emu_launch *l, void **args,
                           const void *extra_buf, size_t extra_bytes)
{
    struct emu_node_params p = { .type = EMU_NODE_KERNEL, .api = api, .launch = *l };
    p.launch.stream = NULL;
    if (extra_buf) {
        p.kparams = extra_buf;
        p.kparam_bytes = (uint32_t)MAYA_MIN(extra_bytes, MAX_PARAM_BYTES);
    } else if (thread_launch_buf()) {
        p.kparams = launch_buf;
        p.kparam_bytes = emu_kernel_pack_args(l->kernel, args, launch_buf, MAX_PARAM_BYTES);
    }
    emu_capture_add(l->stream, &p, NULL);
    emu_trace_call(api, t_enter, result, l->stream->id, MAYA_F_CAPTURING);
}

EMU_API void emu_trace_launch(uint32_t api, uint64_t t_enter, int result, const struct emu_launch *l,
                              void **args, const void *extra_buf, size_t extra_bytes, uint16_t flags)
{
    if (result == 0 && emu_stream_capturing(l->stream)) {
        capture_launch(api, t_enter, result, l, args, extra_buf, extra_bytes);
        return;
    }
    if (!emu_tracing() || !thread_launch_buf())
        return;
    struct emu_kernel *k = l->kernel;
    emu_kernel_prepare(k);
    int spoils = result == 0 && emu_real_enabled();
    uint32_t pbytes = 0;
    if (extra_buf)
        pbytes = (uint32_t)MAYA_MIN(extra_bytes, MAX_PARAM_BYTES);
    else if (args && k->layout_known)
        pbytes = k->param_bytes;
    struct maya_rec_launch *r = (void *)launch_buf;
    unsigned char *params = launch_buf + sizeof *r;
    uint32_t padded = MAYA_REC_ALIGN(pbytes);
    r->h.type = MAYA_REC_LAUNCH;
    r->h.flags = flags;
    r->h.bytes = (uint32_t)(sizeof *r + padded);
    emu_call_fill(&r->call, api, t_enter, result, l->stream ? l->stream->id : 0);
    r->kernel = k->trace_id;
    memcpy(r->grid, l->grid, sizeof r->grid);
    memcpy(r->block, l->block, sizeof r->block);
    memcpy(r->cluster, l->cluster, sizeof r->cluster);
    r->smem_bytes = l->smem_bytes;
    r->flags = l->flags;
    r->param_bytes = pbytes;
    r->nextents = 0;
    if (extra_buf) {
        memcpy(params, extra_buf, pbytes);
        memset(params + pbytes, 0, padded - pbytes);
    } else if (pbytes) {
        memset(params, 0, padded); /* gaps between parameters */
        for (uint32_t i = 0; i < k->nparams; i++)
            if (args[i] && (uint32_t)k->params[i].offset + k->params[i].bytes <= pbytes)
                memcpy(params + k->params[i].offset, args[i], k->params[i].bytes);
    }
    /* How far the pointers the kernel's work goes through can reach: one
     * allocation lookup each (a binary search), for kernels with a summary. */
    struct maya_kextent *ext = (void *)(params + padded);
    for (uint32_t i = 0; i < k->nextent_params && i < EMU_MAX_EXTENTS; i++) {
        uint16_t at = k->extent_params[i];
        if ((uint32_t)at + 8 > pbytes)
            continue;
        uint64_t ptr;
        memcpy(&ptr, params + at, sizeof ptr);
        struct emu_alloc a;
        uint64_t reach = emu_mem_lookup(ptr, &a) && a.bytes > ptr - a.base ? a.base + a.bytes - ptr : 0;
        ext[r->nextents++] = (struct maya_kextent){ .param = at, .bytes = reach };
    }
    r->h.bytes += r->nextents * (uint32_t)sizeof *ext;
    /* Computed on the CPU if small (kernel_exec.c); otherwise what it was
     * given may now hold other values. */
    if (spoils && !emu_kernel_exec(k, l, params, pbytes))
        emu_real_launch(k->trace_id, params, pbytes, k->readonly_words);
    emu_trace_emit(r);
}

/* CU_LAUNCH_PARAM_BUFFER_POINTER (1), CU_LAUNCH_PARAM_BUFFER_SIZE (2),
 * CU_LAUNCH_PARAM_END (0). */
EMU_API enum emu_err emu_launch_extra(void **extra, const void **buf, size_t *bytes)
{
    int have_size = 0;
    *buf = NULL;
    for (int i = 0; extra[i] != NULL; i += 2) {
        if (i >= 64)
            return EMU_ERR_INVALID_VALUE; /* no END: not a list */
        if (extra[i] == (void *)1) {
            *buf = extra[i + 1];
        } else if (extra[i] == (void *)2) {
            if (!extra[i + 1])
                return EMU_ERR_INVALID_VALUE;
            *bytes = *(const size_t *)extra[i + 1];
            have_size = 1;
        } else {
            return EMU_ERR_INVALID_VALUE;
        }
    }
    return *buf && have_size ? EMU_OK : EMU_ERR_INVALID_VALUE;
}

EMU_API enum emu_err emu_launch_args(struct emu_kernel *k, void **args, void **extra, const void **buf,
                                     size_t *bytes)
{
    *buf = NULL;
    *bytes = 0;
    if (args && extra)
        return EMU_ERR_INVALID_VALUE;
    if (extra) {
        enum emu_err e = emu_launch_extra(extra, buf, bytes);
        if (e != EMU_OK)
            return e;
    }
    /* The layout, read once from the module's image, says how many
     * parameter bytes the kernel takes. */
    emu_kernel_prepare(k);
    if (k->layout_known && k->nparams && !args && !*buf)
        return EMU_ERR_INVALID_VALUE;
    if (k->layout_known && *buf && *bytes < k->param_bytes)
        return EMU_ERR_INVALID_VALUE;
    return EMU_OK;
}

EMU_API enum emu_err emu_node_kernel(struct emu_node_params *p, uint32_t api, const struct emu_launch *l, void **args,
                                     void **extra)
{
    memset(p, 0, sizeof *p);
    p->type = EMU_NODE_KERNEL;
    p->api = api;
    p->launch = *l;
    p->launch.stream = NULL;
    if (!l->kernel)
        return EMU_ERR_INVALID_VALUE;
    const void *buf;
    size_t bytes;
    enum emu_err e = emu_launch_args(l->kernel, args, extra, &buf, &bytes);
    if (e == EMU_OK)
        e = emu_launch_check(&p->launch);
    if (e != EMU_OK)
        return e;
    if (buf) {
        p->kparams = buf;
        p->kparam_bytes = (uint32_t)MAYA_MIN(bytes, MAX_PARAM_BYTES);
    } else if (args && thread_launch_buf()) {
        p->kparams = launch_buf;
        p->kparam_bytes = emu_kernel_pack_args(l->kernel, args, launch_buf, MAX_PARAM_BYTES);
    }
    return EMU_OK;
}
