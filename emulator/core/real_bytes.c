/* Which device bytes hold real values: the bytes a real GPU would hold
 * there, because the operation that last wrote them was performed (a small
 * host-to-device copy, a memset, a device-to-device copy of real bytes, a
 * small collective of real inputs), and which were written by something
 * that only moved time (a kernel, a library call, a copy too large to
 * perform). A small read by the host (a device-to-host copy: `.item()`,
 * `.cpu()`) of bytes that are not real is what a value check in the
 * program sees wrong; it is traced as a VALUE_READ record naming what last
 * wrote them, and the report counts those reads ("values not computed").
 *
 * Structures and what they cost:
 * - spans: one sorted array of disjoint address ranges, each either real or
 *   written by an uncomputed writer (kernel id, API name). Address ranges of
 *   different allocations never overlap, so one array over the address space
 *   is the interval set of every allocation at once. Lookup is O(log n);
 *   setting a range is O(log n + k) plus an O(n) memmove when it splits or
 *   adds a span. Spans only appear where the program made bytes real (small
 *   copies and memsets) or spoilt real ones, so n stays the number of small
 *   buffers the program keeps; large launches and copies never add per-byte
 *   work (a large range is one span).
 * - marks: a fixed table (open addressing, no probing: a newer entry
 *   replaces an older one in its slot) from an address a launch was given
 *   to the kernel, so that a read of bytes nothing real ever wrote names the
 *   kernel that would have written them. Lossy by design: a lost entry only
 *   makes the report say "never written" instead of naming the kernel.
 *
 * A launch that is not computed may have written every buffer it was given:
 * each 8-byte word of its parameters (pointers inside structures included)
 * that points at device memory spoils the real bytes from there to the end
 * of the span it falls in, except the words the kernel only reads through:
 * pointers to const in its demangled signature, and words no global store
 * or atomic of its code goes through (its work summary, kernel_work.c, when
 * that names the parameter of every store). Where neither tells, a buffer a
 * kernel only read is spoilt too (conservative: a read of it is counted
 * although the value it gives is still right).
 *
 * Cost on a launch: one pass over the parameter words, two compares each;
 * a device pointer stores one table entry, and takes the lock only if some
 * real span exists.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "kernel_work.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

struct span {
    uint64_t start, end;         /* [start, end) */
    uint32_t writer;             /* kernel id or API string id; 0 with REAL */
    uint32_t kind;               /* enum maya_writer_kind, MAYA_WRITER_REAL for real bytes */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct span *spans;
static size_t nspans, cap;
static size_t nspans_seen;       /* nspans, read without the lock on launches */
static int enabled = -1;         /* -1 not yet decided */

#define MARK_SLOTS 8192u         /* a power of two; 128 KiB */
static struct mark {
    uint64_t ptr;
    uint32_t writer, kind;
} marks[MARK_SLOTS];

int emu_real_enabled(void)
{
    int e = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (__builtin_expect(e >= 0, 1))
        return e;
    /* Off in passthrough (the GPU computes every value) and with
     * MAYA_REAL_BYTES=0 (benchmarks of the cost). */
    const char *v = getenv("MAYA_REAL_BYTES");
    e = !emu_config()->passthrough && !(v && strcmp(v, "0") == 0);
    __atomic_store_n(&enabled, e, __ATOMIC_RELAXED);
    return e;
}

static size_t mark_slot(uint64_t p)
{
    p ^= p >> 29;
    p *= 0xbf58476d1ce4e5b9ull;
    p ^= p >> 32;
    return (size_t)(p & (MARK_SLOTS - 1));
}

/* index of the first span with end > p (lock held) */
static size_t find(uint64_t p)
{
    size_t lo = 0, hi = nspans;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (spans[mid].end <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int same_tag(const struct span *a, uint32_t kind, uint32_t writer)
{
    return a->kind == kind && a->writer == writer;
}

/* Make [start, end) one span of the given tag, or no span (drop): every
 * span it overlaps is cut to what lies outside it (lock held). */
static int set_range(uint64_t start, uint64_t end, uint32_t kind, uint32_t writer, int drop)
{
    if (start >= end)
        return 0;
    size_t i = find(start);
    /* the pieces of the first and last overlapping spans outside the range */
    struct span left = { 0 }, right = { 0 };
    int have_left = 0, have_right = 0;
    size_t j = i;
    while (j < nspans && spans[j].start < end) {
        if (spans[j].start < start) {
            left = spans[j];
            left.end = start;
            have_left = 1;
        }
        if (spans[j].end > end) {
            right = spans[j];
            right.start = end;
            have_right = 1;
        }
        j++;
    }
    /* spans[i, j) overlap the range: they become left, the new span, right */
    struct span mid = { start, end, writer, kind };
    struct span out[3];
    size_t nout = 0;
    if (have_left)
        out[nout++] = left;
    if (!drop)
        out[nout++] = mid;
    if (have_right)
        out[nout++] = right;
    /* merge with touching neighbours of the same tag */
    size_t from = i, to = j;
    if (!drop && !have_left && from > 0 && spans[from - 1].end == start &&
        same_tag(&spans[from - 1], kind, writer)) {
        from--;
        out[0].start = spans[from].start;
    }
    if (!drop && !have_right && to < nspans && spans[to].start == end && same_tag(&spans[to], kind, writer)) {
        out[nout - 1].end = spans[to].end;
        to++;
    }
    size_t removed = to - from;
    if (nspans - removed + nout > cap) {
        size_t ncap = cap ? cap * 2 : 256;
        while (ncap < nspans - removed + nout)
            ncap *= 2;
        struct span *n = realloc(spans, ncap * sizeof *n);
        if (!n)
            return -1;
        spans = n;
        cap = ncap;
    }
    memmove(&spans[from + nout], &spans[to], (nspans - to) * sizeof *spans);
    memcpy(&spans[from], out, nout * sizeof *out);
    nspans = nspans - removed + nout;
    __atomic_store_n(&nspans_seen, nspans, __ATOMIC_RELAXED);
    return 0;
}

EMU_API void emu_real_mark(uint64_t p, uint64_t bytes)
{
    if (!bytes || !emu_real_enabled())
        return;
    pthread_mutex_lock(&lock);
    set_range(p, p + bytes, MAYA_WRITER_REAL, 0, 0);
    pthread_mutex_unlock(&lock);
}

EMU_API void emu_real_spoil(uint64_t p, uint64_t bytes, uint32_t kind, uint32_t writer)
{
    if (!bytes || !emu_real_enabled())
        return;
    struct mark *m = &marks[mark_slot(p)];
    pthread_mutex_lock(&lock);
    __atomic_store_n(&m->ptr, p, __ATOMIC_RELAXED);
    __atomic_store_n(&m->writer, writer, __ATOMIC_RELAXED);
    __atomic_store_n(&m->kind, kind, __ATOMIC_RELAXED);
    set_range(p, p + bytes, kind, writer, 0);
    pthread_mutex_unlock(&lock);
}

EMU_API void emu_real_forget(uint64_t p, uint64_t bytes)
{
    if (!bytes || !emu_real_enabled() || !__atomic_load_n(&nspans_seen, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&lock);
    set_range(p, p + bytes, 0, 0, 1);
    pthread_mutex_unlock(&lock);
}

/* Something not computed was given address w (in device memory): the real
 * bytes from w to the end of their span are no longer known to be real. */
static void spoil_at(uint64_t w, uint32_t kind, uint32_t writer)
{
    struct mark *m = &marks[mark_slot(w)];
    __atomic_store_n(&m->ptr, w, __ATOMIC_RELAXED);
    __atomic_store_n(&m->writer, writer, __ATOMIC_RELAXED);
    __atomic_store_n(&m->kind, kind, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&nspans_seen, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&lock);
    size_t i = find(w);
    if (i < nspans && spans[i].start <= w && !same_tag(&spans[i], kind, writer))
        set_range(w, spans[i].end, kind, writer, 0);
    pthread_mutex_unlock(&lock);
}

void emu_real_launch(uint32_t kernel_id, const void *params, uint32_t bytes, uint64_t readonly)
{
    if (!params || bytes < 8 || !emu_real_enabled())
        return;
    uint64_t lo, hi;
    emu_mem_device_va(&lo, &hi);
    const unsigned char *b = params;
    for (uint32_t off = 0; off + 8 <= bytes; off += 8) {
        uint64_t w;
        if (off / 8 < 64 && (readonly >> (off / 8) & 1))
            continue;
        memcpy(&w, b + off, 8);
        if (w >= lo && w < hi)
            spoil_at(w, MAYA_WRITER_KERNEL, kernel_id);
    }
}

int emu_real_any_word(const void *params, uint32_t bytes)
{
    if (!params || bytes < 8 || !__atomic_load_n(&nspans_seen, __ATOMIC_RELAXED))
        return 0; /* no real bytes anywhere: the common case, no lock */
    uint64_t lo, hi;
    emu_mem_device_va(&lo, &hi);
    const unsigned char *b = params;
    int any = 0;
    pthread_mutex_lock(&lock);
    for (uint32_t off = 0; off + 8 <= bytes && !any; off += 8) {
        uint64_t w;
        memcpy(&w, b + off, 8);
        if (w < lo || w >= hi)
            continue;
        size_t i = find(w);
        any = i < nspans && spans[i].start <= w && w < spans[i].end && spans[i].kind == MAYA_WRITER_REAL;
    }
    pthread_mutex_unlock(&lock);
    return any;
}

EMU_API void emu_real_written(uint64_t p, uint32_t kind, uint32_t writer)
{
    uint64_t lo, hi;
    emu_mem_device_va(&lo, &hi);
    if (p >= lo && p < hi && emu_real_enabled())
        spoil_at(p, kind, writer);
}

EMU_API uint64_t emu_real_check(uint64_t p, uint64_t bytes, uint32_t *kind, uint32_t *writer)
{
    *kind = MAYA_WRITER_REAL;
    *writer = 0;
    if (!bytes || !emu_real_enabled())
        return 0;
    uint64_t end = p + bytes, covered = 0, unreal = 0;
    int named = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = find(p); i < nspans && spans[i].start < end; i++) {
        uint64_t a = MAYA_MAX(spans[i].start, p), b = MAYA_MIN(spans[i].end, end);
        covered += b - a;
        if (spans[i].kind != MAYA_WRITER_REAL) {
            unreal += b - a;
            if (!named) {
                *kind = spans[i].kind;
                *writer = spans[i].writer;
                named = 1;
            }
        }
    }
    const struct mark *m = &marks[mark_slot(p)];
    if (!named && covered < bytes) {
        /* Bytes no span covers: nothing real wrote them. A launch given
         * this very address would have. */
        if (__atomic_load_n(&m->ptr, __ATOMIC_RELAXED) == p) {
            *kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
            *writer = __atomic_load_n(&m->writer, __ATOMIC_RELAXED);
        } else {
            *kind = MAYA_WRITER_NONE;
        }
    }
    pthread_mutex_unlock(&lock);
    return unreal + (bytes - covered);
}

EMU_API void emu_real_copy(uint64_t dst, uint64_t src, uint64_t bytes)
{
    if (!bytes || !emu_real_enabled())
        return;
    uint32_t kind, writer;
    if (emu_real_check(src, bytes, &kind, &writer) == 0)
        emu_real_mark(dst, bytes);
    else
        emu_real_spoil(dst, bytes, kind, writer);
}

/* Does the parameter type text [a, b) end in "const*" (a pointer to const:
 * "float const*", "const float*" as some demanglers print it)? */
static int const_pointer(const char *a, const char *b)
{
    while (b > a && b[-1] == ' ')
        b--;
    if (b == a || b[-1] != '*')
        return 0;
    b--;
    while (b > a && b[-1] == ' ')
        b--;
    size_t n = (size_t)(b - a);
    if (n >= 5 && memcmp(b - 5, "const", 5) == 0)
        return 1;
    /* "const T*": const first, no other pointer level */
    return n > 6 && memcmp(a, "const ", 6) == 0 && !memchr(a, '*', n);
}

/* The pointer-to-const parameters of the kernel's demangled signature. */
static uint64_t const_pointer_words(const struct emu_kernel *k)
{
    /* The parameter list is the last top-level "(...)" of the demangled
     * name; extern "C" kernels (Triton, PyTorch's jiterator) have none, and
     * their pointers all count as written. */
    if (!k->layout_known || !k->name)
        return 0;
    const char *s = k->name, *end = s + strlen(s);
    if (end == s || end[-1] != ')')
        return 0;
    int depth = 0;
    const char *open = NULL;
    for (const char *p = end - 1; p >= s; p--) {
        if (*p == ')' || *p == '>')
            depth++;
        else if ((*p == '(' || *p == '<') && --depth == 0 && *p == '(') {
            open = p;
            break;
        }
    }
    if (!open)
        return 0;
    uint64_t mask = 0;
    uint32_t index = 0;
    const char *from = open + 1;
    depth = 0;
    for (const char *p = open + 1; p < end; p++) {
        if (*p == '(' || *p == '<' || *p == '[')
            depth++;
        else if ((*p == ')' || *p == '>' || *p == ']') && depth > 0)
            depth--;
        else if ((*p == ',' && depth == 0) || p == end - 1) {
            if (index < k->nparams && k->params[index].bytes == 8 && k->params[index].offset % 8 == 0 &&
                k->params[index].offset / 8 < 64 && const_pointer(from, p))
                mask |= 1ull << (k->params[index].offset / 8);
            index++;
            from = p + 1;
            while (*from == ' ')
                from++;
        }
    }
    /* a list that does not match the layout says nothing */
    return index == k->nparams ? mask : 0;
}

uint64_t emu_real_readonly_words(const struct emu_kernel *k)
{
    /* const in the signature, or no store of the kernel's code through it */
    return const_pointer_words(k) | emu_kwork_unstored_words(k->work, k->work_bytes);
}
