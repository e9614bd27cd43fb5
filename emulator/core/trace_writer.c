/* The per-process trace writer (the host clock it stamps records with is
 * host_clock.c).
 *
 * Records are appended to a chunk buffer under one mutex (the only lock on
 * the launch path). A full chunk is handed to a background thread that
 * compresses it (Zstandard level 1: common/chunk_codec.c) and appends it
 * to "<name>.tmp"; the program's thread only waits if two chunks are
 * already in flight, and that wait is taken off the host clock. At exit the END record is written and the file
 * renamed into place, so a trace that exists under its final name is whole.
 *
 * The two chunk buffers are the slots of "<name>.tail", a file mapped
 * shared (struct maya_trace_tail, trace_format.h): what was recorded lives
 * in the page cache from the moment it is written, so a process that is
 * killed (SIGKILL, the OOM killer, a SIGTERM it does not handle) leaves its
 * trace readable up to its last whole record; the reader takes the tail
 * after the file's last whole chunk. The tail is preallocated (a full disk
 * must not make a page fault kill the program) and removed at a normal
 * exit. Where it cannot be made, the buffers are plain memory and a killed
 * process loses what its last chunk held.
 *
 * Cost per record: two clock reads by the caller, one lock, one memcpy and
 * one store of the slot's fill level. The tail costs 2 x 4 MiB of page
 * cache per process, written back by the kernel as it sees fit.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/chunk_codec.h"
#include "maya/common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK_BYTES (4u << 20)

/* host_clock.c */
void emu_host_clock_start(const struct emu_config *cfg);
uint64_t emu_host_clock_base(void);
int emu_host_clock_active(void);

/* ---- writer ---- */

struct chunk {
    unsigned char *data;
    uint32_t used;
    struct maya_trace_tail *slot; /* its slot of the tail file (data follows it), or NULL */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int tracing;               /* a trace file is open */
static int finished;
static int fd = -1;
static char final_path[PATH_MAX];
static char tmp_path[PATH_MAX + 16];
static char tail_path[PATH_MAX + 16];
static void *tail_map;            /* the tail file's mapping, or NULL */
static struct maya_trace_status *status; /* in it, after the slots */
static size_t tail_bytes;
static uint64_t next_chunk;       /* index of the next chunk to fill */
static int tail_frozen;           /* a write failed: the slots keep what they hold */
static struct chunk cur;          /* being filled (under lock) */
static struct chunk pending;      /* handed to the compressor */
static int have_pending;
static int compressor_running, compressor_quit;
static pthread_t compressor;
static int write_failed;
static uint64_t next_seq, nrecords, unsupported_calls;
static int oom_seen;

/* strings: open-addressing hash of text -> id */
struct str_slot {
    char *text;
    uint32_t id;
    uint32_t hash;
};
static struct str_slot *strs;
static uint32_t str_cap, str_count;
static const char **str_text;    /* by id, for emu_string_text */
static uint32_t str_text_cap;

static int write_all(const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Compress and append one chunk (called without the lock held, by one
 * thread at a time: the compressor, or the caller when there is none). Its
 * output buffer and compression context are kept from one chunk to the
 * next: a fresh 4 MiB allocation per chunk is an mmap and munmap, which
 * take the process's memory map lock, and a program thread faulting a page
 * meanwhile blocks behind it (for milliseconds when the compressor is
 * descheduled holding it on a busy machine), a wait that looks like the
 * program's own. */
static void write_chunk(const struct chunk *c)
{
    static unsigned char *z;
    static size_t zcap;
    static struct maya_chunk_codec *codec;
    if (c->used == 0 || write_failed)
        return;
    size_t need = sizeof(struct maya_trace_chunk) + maya_chunk_bound(c->used);
    if (need > zcap) {
        free(z);
        zcap = 0;
        if (!(z = malloc(need))) {
            write_failed = 1;
            return;
        }
        zcap = need;
    }
    uint32_t magic;
    size_t zlen = 0;
    if (codec || (codec = maya_chunk_codec_new()))
        zlen = maya_chunk_compress(codec, z + sizeof(struct maya_trace_chunk), zcap - sizeof(struct maya_trace_chunk),
                                   c->data, c->used, &magic);
    if (!zlen) {
        write_failed = 1;
        return;
    }
    struct maya_trace_chunk h = {
        .magic = magic,
        .raw_bytes = c->used,
        .zbytes = (uint32_t)zlen,
        .crc32 = (uint32_t)crc32(0, c->data, c->used),
    };
    memcpy(z, &h, sizeof h);
    if (write_all(z, sizeof h + zlen) < 0) {
        int err = errno;
        maya_warn("cannot write trace %s: %m", tmp_path);
        write_failed = 1;
        /* the warning may be lost with the disk that filled: the launcher
         * reads it from the status */
        struct maya_trace_status *st = __atomic_load_n(&status, __ATOMIC_ACQUIRE);
        if (st)
            __atomic_store_n(&st->write_errno, err, __ATOMIC_RELEASE);
    }
}

static void *compressor_main(void *arg)
{
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!have_pending && !compressor_quit)
            pthread_cond_wait(&cond, &lock);
        if (!have_pending && compressor_quit)
            break;
        struct chunk c = pending;
        pthread_mutex_unlock(&lock);
        write_chunk(&c);
        pthread_mutex_lock(&lock);
        have_pending = 0;
        pthread_cond_broadcast(&cond);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* cur starts a new chunk (lock held): its slot says empty first, then
 * which chunk it holds, so that a reader never takes stale records for it. */
static void begin_chunk_locked(void)
{
    cur.used = 0;
    if (cur.slot) {
        __atomic_store_n(&cur.slot->used, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&cur.slot->chunk, next_chunk, __ATOMIC_RELEASE);
    }
    next_chunk++;
}

/* What cur holds is whole records: say so in its slot (lock held). */
static void publish_locked(void)
{
    if (cur.slot)
        __atomic_store_n(&cur.slot->used, cur.used, __ATOMIC_RELEASE);
}

/* Hand the current chunk to the compressor (lock held). */
static void flush_locked(void)
{
    if (cur.used == 0)
        return;
    /* A write failed (a full disk): the file will miss chunks from there
     * on, so the tail's two slots are kept as they are (the failed chunk
     * and the one after it, what a reader can still add after the file's
     * last whole chunk) and later records are dropped. */
    if (write_failed && cur.slot) {
        tail_frozen = 1;
        return;
    }
    if (!compressor_running) {
        /* Starting the thread is the emulator's cost, not the program's. */
        emu_wait_begin();
        compressor_running = pthread_create(&compressor, NULL, compressor_main, NULL) == 0;
        if (!compressor_running) {
            write_chunk(&cur); /* no thread: do it here */
            begin_chunk_locked();
        }
        emu_wait_end();
        if (!compressor_running)
            return;
    }
    if (have_pending) {
        emu_wait_begin();
        while (have_pending)
            pthread_cond_wait(&cond, &lock);
        emu_wait_end();
    }
    struct chunk spare = pending;
    pending = cur;
    have_pending = 1;
    cur = spare;
    if (!cur.data)
        cur.data = malloc(CHUNK_BYTES);
    if (!cur.data)
        write_failed = 1;
    begin_chunk_locked();
    pthread_cond_broadcast(&cond);
}

/* Room for bytes in the current chunk (lock held); NULL if tracing failed. */
static unsigned char *reserve_locked(uint32_t bytes)
{
    if (cur.used + bytes > CHUNK_BYTES)
        flush_locked();
    if (tail_frozen)
        return NULL;
    if (!cur.data || bytes > CHUNK_BYTES)
        return NULL;
    unsigned char *p = cur.data + cur.used;
    cur.used += bytes;
    nrecords++;
    if (status)
        __atomic_store_n(&status->records, nrecords, __ATOMIC_RELAXED);
    return p;
}

static __thread uint16_t thread_flags;
static __thread int nested;

EMU_API void emu_trace_nest(int delta)
{
    nested += delta;
}

EMU_API void emu_trace_set_thread_flags(uint16_t flags)
{
    thread_flags = flags;
}

EMU_API int emu_graph_replaying(void)
{
    return (thread_flags & MAYA_F_FROM_GRAPH) != 0;
}

static uint64_t host_syncs;       /* synchronisations and blocking device-to-host reads */

EMU_API uint64_t emu_host_syncs(void)
{
    return __atomic_load_n(&host_syncs, __ATOMIC_RELAXED);
}

static void emit_locked(void *rec)
{
    struct maya_rec_hdr *h = rec;
    if (maya_rec_is_call(h->type)) {
        ((struct maya_rec_call *)rec)->call.seq = next_seq++;
        h->flags |= thread_flags;
        if (h->type == MAYA_REC_SYNC || (h->type == MAYA_REC_MEMCPY && (h->flags & MAYA_F_HOST_WAITS) &&
                                         ((struct maya_rec_memcpy *)rec)->kind == MAYA_COPY_D2H))
            __atomic_add_fetch(&host_syncs, 1, __ATOMIC_RELAXED);
    }
    unsigned char *p = reserve_locked(h->bytes);
    if (p) {
        memcpy(p, rec, h->bytes);
        publish_locked();
    }
}

static emu_trace_divert_fn divert;

EMU_API void emu_trace_divert(emu_trace_divert_fn fn)
{
    divert = fn;
}

EMU_API void emu_trace_commit(void *rec)
{
    /* Nothing in a child forked after start-up (emu_started -2): the trace
     * and its file belong to the parent. */
    if (!tracing || __builtin_expect(emu_started < 0, 0))
        return;
    if (!emu_config()->passthrough) /* on real GPUs the device keeps its own time */
        emu_clock_record(rec);
    pthread_mutex_lock(&lock);
    if (!finished)
        emit_locked(rec);
    pthread_mutex_unlock(&lock);
}

EMU_API void emu_trace_emit(void *rec)
{
    int call = maya_rec_is_call(((struct maya_rec_hdr *)rec)->type);
    if (__builtin_expect(nested > 0, 0) && call)
        return;
    if (__builtin_expect(divert != NULL, 0) && tracing && call) {
        divert(rec);
        return;
    }
    emu_trace_commit(rec);
}

EMU_API void emu_trace_waiting(uint32_t op, uint64_t comm, uint64_t seq, int awaits_pid)
{
    struct maya_trace_status *st = __atomic_load_n(&status, __ATOMIC_ACQUIRE);
    if (!st || emu_started < 0)
        return;
    st->op = op;
    st->comm = comm;
    st->seq = seq;
    st->awaits_pid = awaits_pid;
    __atomic_store_n(&st->waiting, 1, __ATOMIC_RELEASE);
}

EMU_API void emu_trace_waiting_done(void)
{
    struct maya_trace_status *st = __atomic_load_n(&status, __ATOMIC_ACQUIRE);
    if (st && emu_started >= 0)
        __atomic_store_n(&st->waiting, 0, __ATOMIC_RELEASE);
}

EMU_API int emu_tracing(void)
{
    return tracing;
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

EMU_API uint32_t emu_string(const char *s)
{
    if (!s)
        return 0;
    uint32_t h = hash_str(s);
    pthread_mutex_lock(&lock);
    if (str_count * 2 >= str_cap) {
        uint32_t ncap = str_cap ? str_cap * 2 : 1024;
        struct str_slot *n = calloc(ncap, sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
        for (uint32_t i = 0; i < str_cap; i++) {
            if (!strs[i].text)
                continue;
            uint32_t j = strs[i].hash & (ncap - 1);
            while (n[j].text)
                j = (j + 1) & (ncap - 1);
            n[j] = strs[i];
        }
        free(strs);
        strs = n;
        str_cap = ncap;
    }
    uint32_t i = h & (str_cap - 1);
    while (strs[i].text) {
        if (strs[i].hash == h && strcmp(strs[i].text, s) == 0) {
            uint32_t id = strs[i].id;
            pthread_mutex_unlock(&lock);
            return id;
        }
        i = (i + 1) & (str_cap - 1);
    }
    strs[i].text = strdup(s);
    strs[i].hash = h;
    strs[i].id = ++str_count;
    uint32_t id = strs[i].id;
    if (id >= str_text_cap) {
        uint32_t ncap = str_text_cap ? str_text_cap * 2 : 1024;
        const char **n = realloc(str_text, ncap * sizeof *n);
        if (n) {
            str_text = n;
            str_text_cap = ncap;
        }
    }
    if (id < str_text_cap)
        str_text[id] = strs[i].text;
    if (tracing && !finished) {
        size_t len = strlen(s);
        if (len > CHUNK_BYTES / 2)
            len = CHUNK_BYTES / 2;
        uint32_t bytes = MAYA_REC_ALIGN((uint32_t)(sizeof(struct maya_rec_string) + len));
        unsigned char *p = reserve_locked(bytes);
        if (p) {
            struct maya_rec_string r = { .h = { MAYA_REC_STRING, 0, bytes }, .id = id, .len = (uint32_t)len };
            memset(p, 0, bytes);
            memcpy(p, &r, sizeof r);
            memcpy(p + sizeof r, s, len);
            publish_locked();
        }
    }
    pthread_mutex_unlock(&lock);
    return id;
}

EMU_API const char *emu_string_text(uint32_t id)
{
    pthread_mutex_lock(&lock);
    const char *t = id && id <= str_count && id < str_text_cap ? str_text[id] : NULL;
    pthread_mutex_unlock(&lock);
    return t;
}

EMU_API void emu_call_fill(struct maya_call *c, uint32_t api, uint64_t t_enter, int result,
                           uint64_t stream)
{
    struct emu_thread *t = emu_thread();
    c->seq = 0;
    c->t_enter_ns = t_enter;
    c->t_exit_ns = emu_now();
    c->stream = stream;
    c->measured_ns = 0;
    c->api = api;
    c->tid = t->tid;
    /* Without a context the runtime works on device 0 (its implicit primary). */
    c->device = t->nctx > 0 ? t->ctx[t->nctx - 1]->device : (emu_device_count() ? 0 : -1);
    c->result = result;
}

EMU_API void emu_trace_call(uint32_t api, uint64_t t_enter, int result, uint64_t stream,
                            uint16_t flags)
{
    if (!tracing)
        return;
    struct maya_rec_call r;
    r.h.type = MAYA_REC_CALL;
    r.h.flags = flags;
    r.h.bytes = sizeof r;
    emu_call_fill(&r.call, api, t_enter, result, stream);
    emu_trace_emit(&r);
}

/* Names already reported as unsupported (reported once each). */
static pthread_mutex_t unsup_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *unsup_seen[512];
static int unsup_nseen;

EMU_API void emu_unsupported(const char *name, int result)
{
    uint64_t t0 = emu_now();
    int first = 1;
    pthread_mutex_lock(&unsup_lock);
    for (int i = 0; i < unsup_nseen; i++)
        if (unsup_seen[i] == name || strcmp(unsup_seen[i], name) == 0)
            first = 0;
    if (first && unsup_nseen < (int)MAYA_ARRAY_LEN(unsup_seen))
        unsup_seen[unsup_nseen++] = name;
    pthread_mutex_unlock(&unsup_lock);
    __atomic_fetch_add(&unsupported_calls, 1, __ATOMIC_RELAXED);
    /* A runtime call's failure is also the thread's last runtime error
     * (cudaGetLastError), as for every other failing cudart call. */
    if (strncmp(name, "cuda", 4) == 0)
        emu_thread()->runtime_error = result;
    if (first)
        fprintf(stderr, "maya-emu: %s is not supported by the emulator; it returned %d "
                "(counted in the trace)\n", name, result);
    emu_trace_call(emu_string(name), t0, result, 0, MAYA_F_UNSUPPORTED);
}

EMU_API void emu_note_oom(void)
{
    oom_seen = 1;
}

static void trace_name(const struct emu_config *cfg, char *name, size_t size)
{
    if (cfg->rank >= 0)
        snprintf(name, size, "rank-%d.mtrace", cfg->rank);
    else
        snprintf(name, size, "pid-%d.mtrace", (int)getpid());
}

/* mkdir -p: each missing directory of path. */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (maya_snprintf(buf, sizeof buf, "%s", path) < 0)
        return -1;
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return maya_error("cannot create trace directory %s: %m (MAYA_TRACE_DIR=%s)", buf, path);
        *p = c;
        if (!c)
            return 0;
    }
}

/* The tail file and its two slots as cur and pending (see the top). 0, or
 * -1 when it cannot be made (then the buffers are plain memory). */
static int tail_open(void)
{
    if (maya_snprintf(tail_path, sizeof tail_path, "%s.tail", final_path) < 0)
        return -1;
    size_t slot = sizeof(struct maya_trace_tail) + CHUNK_BYTES;
    size_t bytes = slot * MAYA_TRACE_TAIL_SLOTS + sizeof(struct maya_trace_status);
    int tfd = open(tail_path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (tfd < 0)
        return maya_error("cannot create %s: %m", tail_path);
    int err = posix_fallocate(tfd, 0, (off_t)bytes);
    void *map = err ? MAP_FAILED : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
    if (map == MAP_FAILED) {
        if (err)
            errno = err;
        maya_error("cannot map %s: %m", tail_path);
        close(tfd);
        unlink(tail_path);
        return -1;
    }
    close(tfd);
    tail_map = map;
    tail_bytes = bytes;
    status = (void *)((unsigned char *)map + slot * MAYA_TRACE_TAIL_SLOTS);
    memset(status, 0, sizeof *status);
    status->pid = (uint32_t)getpid();
    __atomic_store_n(&status->magic, MAYA_TRACE_STATUS_MAGIC, __ATOMIC_RELEASE);
    struct chunk *c[MAYA_TRACE_TAIL_SLOTS] = { &cur, &pending };
    for (int i = 0; i < MAYA_TRACE_TAIL_SLOTS; i++) {
        struct maya_trace_tail *t = (void *)((unsigned char *)map + slot * (size_t)i);
        memset(t, 0, sizeof *t);
        t->magic = MAYA_TRACE_TAIL_MAGIC;
        t->slot_bytes = CHUNK_BYTES;
        t->chunk = MAYA_TRACE_TAIL_EMPTY;
        c[i]->slot = t;
        c[i]->data = (unsigned char *)(t + 1);
        c[i]->used = 0;
    }
    return 0;
}

static void tail_close(int remove)
{
    status = NULL;
    if (tail_map)
        munmap(tail_map, tail_bytes);
    tail_map = NULL;
    if (remove && tail_path[0])
        unlink(tail_path);
}

int emu_trace_start(const struct emu_config *cfg)
{
    emu_host_clock_start(cfg);
    if (!cfg->trace_dir[0])
        return 0; /* emulate without writing a trace */
    if (make_dirs(cfg->trace_dir) < 0)
        return -1;
    char name[64];
    trace_name(cfg, name, sizeof name);
    if (maya_snprintf(final_path, sizeof final_path, "%s/%s", cfg->trace_dir, name) < 0)
        return -1;
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp", final_path);
    fd = open(tmp_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    /* The trace being written stays locked. A process that finds it locked
     * is a helper the rank started with the rank's environment (PyTorch's
     * compile workers, which ask the driver about the GPU): its trace is
     * kept beside the rank's as rank-N.mtrace.pid-P.aux, which the collator
     * does not take for a rank. A lock left by no one (a crashed run) is
     * taken over. */
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        if (maya_snprintf(final_path, sizeof final_path, "%s/%s.pid-%d.aux", cfg->trace_dir, name,
                          (int)getpid()) < 0)
            return -1;
        snprintf(tmp_path, sizeof tmp_path, "%s.tmp", final_path);
        fd = open(tmp_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd < 0 || ftruncate(fd, 0) != 0)
        return maya_error("cannot create trace %s: %m (MAYA_TRACE_DIR=%s)", tmp_path, cfg->trace_dir);

    struct maya_trace_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAYA_TRACE_MAGIC, 8);
    h.version = MAYA_TRACE_VERSION;
    h.header_bytes = sizeof h;
    h.kind = MAYA_TRACE_RANK;
    h.flags = (cfg->passthrough ? MAYA_TRACE_F_PASSTHROUGH : 0) |
              (emu_host_clock_cpu() ? MAYA_TRACE_F_HOST_CPU : 0) |
              (emu_host_clock_active() ? MAYA_TRACE_F_HOST_ACTIVE : 0);
    h.rank = cfg->rank;
    h.world_size = cfg->world_size;
    h.local_rank = cfg->local_rank;
    h.node = cfg->node;
    h.gpus_per_node = cfg->gpus_per_node;
    h.pid = (uint32_t)getpid();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h.start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    h.start_mono_ns = emu_host_clock_base();
    snprintf(h.gpu, sizeof h.gpu, "%s", cfg->gpu->key);
    if (write_all(&h, sizeof h) < 0) {
        close(fd);
        unlink(tmp_path);
        return maya_error("cannot write trace %s: %m", tmp_path);
    }
    if (tail_open() < 0) {
        maya_warn("trace %s: the records of its last chunk will be lost if the process is killed", tmp_path);
        cur.data = malloc(CHUNK_BYTES);
        if (!cur.data) {
            close(fd);
            unlink(tmp_path);
            return maya_error("out of memory for the trace buffer");
        }
    }
    begin_chunk_locked();
    tracing = 1;

    /* PROCESS record: who we are. */
    char host[256] = "", cmd[4096] = "";
    gethostname(host, sizeof host - 1);
    int cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (cfd >= 0) {
        ssize_t n = read(cfd, cmd, sizeof cmd - 1);
        close(cfd);
        for (ssize_t i = 0; i < n - 1; i++)
            if (cmd[i] == 0)
                cmd[i] = ' ';
        cmd[n > 0 ? n : 0] = 0;
    }
    struct maya_rec_process p;
    memset(&p, 0, sizeof p);
    p.h.type = MAYA_REC_PROCESS;
    p.h.bytes = sizeof p;
    p.hostname = emu_string(host);
    p.cmdline = emu_string(cmd);
    p.mode = cfg->passthrough ? 2 : 1;
    p.copy_threshold = (uint32_t)MAYA_MIN(cfg->copy_threshold, UINT32_MAX);
    emu_trace_emit(&p);
    return 0;
}

EMU_API void emu_trace_finish(void)
{
    if (!tracing)
        return;
    pthread_mutex_lock(&lock);
    if (finished) {
        pthread_mutex_unlock(&lock);
        return;
    }
    int n = emu_device_count();
    uint32_t bytes = (uint32_t)(sizeof(struct maya_rec_end) + (size_t)n * sizeof(struct maya_end_device));
    unsigned char *buf = calloc(1, bytes);
    if (buf) {
        struct maya_rec_end *e = (void *)buf;
        struct maya_end_device *d = (void *)(e + 1);
        e->h.type = MAYA_REC_END;
        e->h.bytes = bytes;
        e->records = nrecords;
        e->unsupported_calls = unsupported_calls;
        e->oom = (uint32_t)oom_seen;
        for (int i = 0; i < n; i++) {
            struct emu_device *dev = emu_device(i);
            if (!dev->defined)
                continue;
            d[e->ndevices].device = i;
            emu_mem_usage(i, NULL, &d[e->ndevices].peak_bytes);
            d[e->ndevices].total_bytes = dev->prop.totalGlobalMem;
            e->ndevices++;
        }
        e->h.bytes = (uint32_t)(sizeof *e + e->ndevices * sizeof *d);
        /* END gets a chunk of its own: the collator then copies every chunk
         * before it into the job trace as it is, compressed once */
        flush_locked();
        emit_locked(e);
        free(buf);
    }
    finished = 1;
    flush_locked();
    compressor_quit = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (compressor_running)
        pthread_join(compressor, NULL);
    if (fsync(fd) != 0 || write_failed) {
        /* the tail stays: the reader takes from it what the file lacks */
        maya_warn("trace %s is incomplete: %s", tmp_path, write_failed ? "a write failed" : strerror(errno));
        if (tail_map)
            msync(tail_map, tail_bytes, MS_SYNC);
        tail_close(0);
        close(fd);
        return;
    }
    /* Renamed while still open (and locked), so that no helper process
     * takes the name over in between (see emu_trace_start). */
    if (rename(tmp_path, final_path) != 0)
        maya_warn("cannot rename %s to %s: %m", tmp_path, final_path);
    tail_close(1);
    if (close(fd) != 0)
        maya_warn("trace %s may be incomplete: %m", final_path);
}
