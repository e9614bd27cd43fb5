/* libmaya-nvtx.so: the NVTX injection library. NVTX v3 is header-only: a
 * program's first NVTX call (nvtxRangePushA, torch.cuda.nvtx.range_push,
 * llm.c's NvtxRange) loads the library named by NVTX_INJECTION64_PATH and
 * calls its InitializeInjectionNvtx2, which fills in the program's tables
 * of NVTX functions (the older libnvToolsExt.so.1 does the same). `maya run`
 * and the Slurm launcher point NVTX_INJECTION64_PATH here.
 *
 * Marks, push/pop ranges and start/end ranges, of the global domain or any
 * other, become MARKER records (kind point, push, pop, start, end) named by
 * their message; a pop is named after the push it closes (a per-thread
 * stack), an end after its start (a table by range id). The simulator can
 * then start iterations at a range of a given name (--iteration-marker).
 * Naming calls (threads, streams, categories) are accepted and do nothing.
 * Nothing is recorded before the emulator has started (the program's first
 * CUDA call) or in a forked child.
 *
 * Cost per NVTX call: the emulator's clock and a trace record (as a CUDA
 * call), a string lookup (hash), and for start/end a locked table entry.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "emu.h"
#include "maya/common.h"
#include "maya/map.h"

/* ---- names ---- */

/* A name's string id in the trace; messages of other types than ASCII text
 * are turned into ASCII (wide characters above 0x7f become '?'). */
static uint32_t name_of_wide(const wchar_t *w)
{
    char buf[256];
    size_t n = 0;
    for (; w && w[n] && n + 1 < sizeof buf; n++)
        buf[n] = w[n] > 0 && w[n] < 0x80 ? (char)w[n] : '?';
    buf[n] = 0;
    return emu_string(buf);
}

static uint32_t name_of(const char *s)
{
    return emu_string(s ? s : "");
}

/* Registered strings (nvtxDomainRegisterStringA): the handle is the string id. */
static uint32_t name_of_attr(const nvtxEventAttributes_t *a)
{
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return emu_string("");
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return name_of(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE: return name_of_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: return (uint32_t)(uintptr_t)a->message.registered;
    default: return emu_string("");
    }
}

/* ---- records ---- */

static int recording(void)
{
    return emu_started == 1 && emu_tracing();
}

static void record(uint32_t api, uint32_t name, uint32_t kind)
{
    uint64_t t0 = emu_now();
    struct maya_rec_marker r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_MARKER;
    r.h.bytes = sizeof r;
    r.name = name;
    r.kind = kind;
    emu_call_fill(&r.call, api, t0, 0, 0);
    emu_trace_emit(&r);
}

/* push/pop: a per-thread stack of names (a pop without a push is named "") */
struct stack {
    uint32_t *v;
    size_t n, cap;
};
static __thread struct stack names;

static int push(uint32_t api, uint32_t name)
{
    if (names.n == names.cap) {
        size_t cap = names.cap ? names.cap * 2 : 16;
        uint32_t *v = realloc(names.v, cap * sizeof *v);
        if (!v)
            return -1;
        names.v = v;
        names.cap = cap;
    }
    names.v[names.n++] = name;
    record(api, name, MAYA_MARK_PUSH);
    return (int)names.n - 1; /* the depth before, as NVTX returns it */
}

static int pop(uint32_t api)
{
    if (!names.n) {
        record(api, emu_string(""), MAYA_MARK_POP);
        return -1;
    }
    record(api, names.v[--names.n], MAYA_MARK_POP);
    return (int)names.n;
}

/* start/end: range id -> name, for ranges that end on any thread */
static struct maya_map ranges;
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_range = 1;

static nvtxRangeId_t start(uint32_t api, uint32_t name)
{
    uint64_t id = __atomic_fetch_add(&next_range, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ranges_lock);
    uint64_t *v = maya_map_put(&ranges, id, 0, NULL);
    if (v)
        *v = name;
    pthread_mutex_unlock(&ranges_lock);
    record(api, name, MAYA_MARK_START);
    return id;
}

static void end(uint32_t api, nvtxRangeId_t id)
{
    uint32_t name = 0;
    pthread_mutex_lock(&ranges_lock);
    uint64_t *v = maya_map_get(&ranges, id, 0);
    if (v) {
        name = (uint32_t)*v;
        maya_map_del(&ranges, id, 0);
    }
    pthread_mutex_unlock(&ranges_lock);
    record(api, name ? name : emu_string(""), MAYA_MARK_END);
}

/* ---- the NVTX functions ---- */

#define API(name) EMU_API_ID(#name)

static void mark_ex(const nvtxEventAttributes_t *a)
{
    if (recording())
        record(API(nvtxMarkEx), name_of_attr(a), MAYA_MARK_POINT);
}
static void mark_a(const char *m)
{
    if (recording())
        record(API(nvtxMarkA), name_of(m), MAYA_MARK_POINT);
}
static void mark_w(const wchar_t *m)
{
    if (recording())
        record(API(nvtxMarkW), name_of_wide(m), MAYA_MARK_POINT);
}
static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
    return recording() ? start(API(nvtxRangeStartEx), name_of_attr(a)) : 0;
}
static nvtxRangeId_t start_a(const char *m)
{
    return recording() ? start(API(nvtxRangeStartA), name_of(m)) : 0;
}
static nvtxRangeId_t start_w(const wchar_t *m)
{
    return recording() ? start(API(nvtxRangeStartW), name_of_wide(m)) : 0;
}
static void range_end(nvtxRangeId_t id)
{
    if (recording() && id)
        end(API(nvtxRangeEnd), id);
}
static int push_ex(const nvtxEventAttributes_t *a)
{
    return recording() ? push(API(nvtxRangePushEx), name_of_attr(a)) : -1;
}
static int push_a(const char *m)
{
    return recording() ? push(API(nvtxRangePushA), name_of(m)) : -1;
}
static int push_w(const wchar_t *m)
{
    return recording() ? push(API(nvtxRangePushW), name_of_wide(m)) : -1;
}
static int range_pop(void)
{
    return recording() ? pop(API(nvtxRangePop)) : -1;
}

/* domains: one global handle; their events are the global domain's */
static int domain_token;

static void domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    if (recording())
        record(API(nvtxDomainMarkEx), name_of_attr(a), MAYA_MARK_POINT);
}
static nvtxRangeId_t domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return recording() ? start(API(nvtxDomainRangeStartEx), name_of_attr(a)) : 0;
}
static void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    if (recording() && id)
        end(API(nvtxDomainRangeEnd), id);
}
static int domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return recording() ? push(API(nvtxDomainRangePushEx), name_of_attr(a)) : -1;
}
static int domain_pop(nvtxDomainHandle_t d)
{
    (void)d;
    return recording() ? pop(API(nvtxDomainRangePop)) : -1;
}
static nvtxStringHandle_t domain_string_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return emu_started == 1 ? (nvtxStringHandle_t)(uintptr_t)name_of(s) : NULL;
}
static nvtxStringHandle_t domain_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    (void)d;
    return emu_started == 1 ? (nvtxStringHandle_t)(uintptr_t)name_of_wide(s) : NULL;
}
static nvtxDomainHandle_t domain_create_a(const char *name)
{
    (void)name;
    return (nvtxDomainHandle_t)&domain_token;
}
static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
    (void)name;
    return (nvtxDomainHandle_t)&domain_token;
}
static void domain_destroy(nvtxDomainHandle_t d)
{
    (void)d;
}

/* Naming calls (categories, threads, devices, streams, events): nothing to
 * record; any of their signatures, called with any arguments, returns. */
static void ignore(void)
{
}

/* ---- injection ---- */

struct slot {
    unsigned id;
    NvtxFunctionPointer fn;
};

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static const struct slot core[] = {
    { NVTX_CBID_CORE_MarkEx, FN(mark_ex) },
    { NVTX_CBID_CORE_MarkA, FN(mark_a) },
    { NVTX_CBID_CORE_MarkW, FN(mark_w) },
    { NVTX_CBID_CORE_RangeStartEx, FN(start_ex) },
    { NVTX_CBID_CORE_RangeStartA, FN(start_a) },
    { NVTX_CBID_CORE_RangeStartW, FN(start_w) },
    { NVTX_CBID_CORE_RangeEnd, FN(range_end) },
    { NVTX_CBID_CORE_RangePushEx, FN(push_ex) },
    { NVTX_CBID_CORE_RangePushA, FN(push_a) },
    { NVTX_CBID_CORE_RangePushW, FN(push_w) },
    { NVTX_CBID_CORE_RangePop, FN(range_pop) },
    { NVTX_CBID_CORE_NameCategoryA, FN(ignore) },
    { NVTX_CBID_CORE_NameCategoryW, FN(ignore) },
    { NVTX_CBID_CORE_NameOsThreadA, FN(ignore) },
    { NVTX_CBID_CORE_NameOsThreadW, FN(ignore) },
};

static const struct slot core2[] = {
    { NVTX_CBID_CORE2_DomainMarkEx, FN(domain_mark) },
    { NVTX_CBID_CORE2_DomainRangeStartEx, FN(domain_start) },
    { NVTX_CBID_CORE2_DomainRangeEnd, FN(domain_end) },
    { NVTX_CBID_CORE2_DomainRangePushEx, FN(domain_push) },
    { NVTX_CBID_CORE2_DomainRangePop, FN(domain_pop) },
    { NVTX_CBID_CORE2_DomainNameCategoryA, FN(ignore) },
    { NVTX_CBID_CORE2_DomainNameCategoryW, FN(ignore) },
    { NVTX_CBID_CORE2_DomainRegisterStringA, FN(domain_string_a) },
    { NVTX_CBID_CORE2_DomainRegisterStringW, FN(domain_string_w) },
    { NVTX_CBID_CORE2_DomainCreateA, FN(domain_create_a) },
    { NVTX_CBID_CORE2_DomainCreateW, FN(domain_create_w) },
    { NVTX_CBID_CORE2_DomainDestroy, FN(domain_destroy) },
    { NVTX_CBID_CORE2_Initialize, FN(ignore) },
};

/* Fill the slots of one module's table that the program's NVTX has (an older
 * NVTX has fewer): those listed in s, or, with s NULL, every one with
 * ignore. 0, or -1 if the table cannot be had. */
static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const struct slot *s, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return -1;
    for (unsigned int i = 1; !s && i < size; i++)
        if (table[i])
            *table[i] = FN(ignore);
    for (size_t i = 0; s && i < n; i++)
        if (s[i].id < size && table[s[i].id])
            *table[s[i].id] = s[i].fn;
    return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    if (!get_table)
        return 0;
    const NvtxExportTableCallbacks *cb = get_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    if (fill(cb, NVTX_CB_MODULE_CORE, core, MAYA_ARRAY_LEN(core)) < 0)
        return 0;
    /* the others are optional: an NVTX without domains still gets the core */
    fill(cb, NVTX_CB_MODULE_CORE2, core2, MAYA_ARRAY_LEN(core2));
    /* naming devices, contexts, streams, events */
    fill(cb, NVTX_CB_MODULE_CUDA, NULL, 0);
    fill(cb, NVTX_CB_MODULE_CUDART, NULL, 0);
    return 1;
}
