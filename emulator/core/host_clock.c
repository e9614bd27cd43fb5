/* The host clock that stamps trace records (emu_now), and how the emulator
 * takes its own waiting off it (emu_wait_begin/end).
 *
 * The simulator replays the time between one call's exit and the next
 * call's entry as the program's host work, so the clock should advance only
 * while the program works. Two clocks (MAYA_HOST_CLOCK, docs/trace-format.md):
 *
 * wall  CLOCK_MONOTONIC, standing still while any thread waits inside the
 *       emulator. Counts everything a GPU machine's host would spend between
 *       calls (sleeps, I/O, waiting for other threads or processes), but
 *       also the time the process was not running: with more busy processes
 *       than cores every rank is descheduled for milliseconds at a time and
 *       its gaps grow.
 * cpu   the CPU time of the threads that call CUDA, added up into one
 *       process clock: each thread, whenever it reads the clock, adds the
 *       CPU time it used since its previous reading (its CPU time outside
 *       the emulator's waits; before a thread's first reading, since it was
 *       created or since the trace began). A process whose work moves
 *       between threads (PyTorch's main and autograd threads) keeps one
 *       timeline, and time not running, sleeping or blocked does not count.
 *       Threads that never call CUDA (the emulator's trace compressor, a
 *       program's CPU-only workers) are not counted; the worker that runs
 *       host functions reads the clock after each one, so that work counts.
 *
 * Cost: CLOCK_THREAD_CPUTIME_ID is a system call (about 0.4 us here, against
 * 20 ns for CLOCK_MONOTONIC from the vDSO). A thread therefore reads its CPU
 * time for real only when FRESH_NS or more of wall time passed since its last
 * real reading; before that it takes itself to have run all along. Being
 * descheduled takes a time slice (milliseconds), which always forces a real
 * reading, so the shortcut's error is under FRESH_NS per reading and the next
 * real reading corrects the sum. A thread calling CUDA without pause makes
 * one system call per FRESH_NS.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FRESH_NS 10000u

static int cpu_mode;              /* the cpu clock (set once, at start) */

/* ---- wall ---- */

static uint64_t clock_base;       /* CLOCK_MONOTONIC at trace start */
static uint64_t excluded_ns;      /* emulator waiting, already finished */
static uint64_t wait_start_ns;    /* when the current wait began */
static int waiters;               /* threads inside emu_wait_begin..end */
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t wall_now(void)
{
    uint64_t now = maya_mono_ns();
    /* While any thread waits inside the emulator the clock stands still:
     * programs here block in the emulator only where a GPU would not make
     * them block (peer exchange) or where maya itself is slow (trace I/O). */
    if (__atomic_load_n(&waiters, __ATOMIC_ACQUIRE) > 0) {
        pthread_mutex_lock(&wait_lock);
        if (waiters > 0)
            now = wait_start_ns;
        uint64_t t = now - clock_base - excluded_ns;
        pthread_mutex_unlock(&wait_lock);
        return t;
    }
    return now - clock_base - __atomic_load_n(&excluded_ns, __ATOMIC_RELAXED);
}

static void wall_wait_begin(void)
{
    pthread_mutex_lock(&wait_lock);
    if (waiters++ == 0)
        wait_start_ns = maya_mono_ns();
    pthread_mutex_unlock(&wait_lock);
}

static void wall_wait_end(void)
{
    pthread_mutex_lock(&wait_lock);
    if (--waiters == 0)
        __atomic_store_n(&excluded_ns, excluded_ns + (maya_mono_ns() - wait_start_ns), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&wait_lock);
}

/* ---- cpu ---- */

static uint64_t process_ns;       /* the process clock: CPU time added up by the threads */

struct cpu_thread {
    int ready;
    int waits;                    /* depth of emu_wait_begin..end */
    uint64_t anchor_wall, anchor_cpu; /* the last real reading */
    uint64_t counted;             /* CPU time of this thread already added (or excluded) */
};
static __thread struct cpu_thread me;

/* Threads that existed when the trace began, with their CPU time then, so
 * that a thread's first reading counts only what it did since. */
struct start_thread {
    pid_t tid;
    uint64_t cpu_ns;              /* UINT64_MAX: unknown */
};
static struct start_thread *at_start;
static size_t nat_start;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void read_real(struct cpu_thread *t)
{
    t->anchor_cpu = thread_cpu_ns();
    t->anchor_wall = maya_mono_ns();
}

/* This thread's CPU time now: read for real when FRESH_NS have passed since
 * the last real reading (or force), else the anchor plus the wall time since. */
static uint64_t cpu_now(struct cpu_thread *t, int force)
{
    uint64_t w = maya_mono_ns();
    if (!force && w - t->anchor_wall < FRESH_NS)
        return t->anchor_cpu + (w - t->anchor_wall);
    read_real(t);
    return t->anchor_cpu;
}

/* A thread's CPU time when the trace began: 0 if it started later (all its
 * time is since), its time then if it already ran, else its time now. (A
 * thread id reused after a starting thread ended counts from that thread's
 * time: what it did up to there is not counted, a rare small loss.) */
static uint64_t start_cpu_ns(uint64_t now)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    for (size_t i = 0; i < nat_start; i++)
        if (at_start[i].tid == tid)
            return at_start[i].cpu_ns == UINT64_MAX ? now : MAYA_MIN(at_start[i].cpu_ns, now);
    return 0;
}

static struct cpu_thread *cpu_self(void)
{
    struct cpu_thread *t = &me;
    if (__builtin_expect(!t->ready, 0)) {
        read_real(t);
        t->counted = start_cpu_ns(t->anchor_cpu);
        t->ready = 1;
    }
    return t;
}

/* Add what this thread used since its last reading to the process clock. */
static uint64_t cpu_add(struct cpu_thread *t, uint64_t cpu)
{
    if (cpu <= t->counted)
        return __atomic_load_n(&process_ns, __ATOMIC_RELAXED);
    uint64_t d = cpu - t->counted;
    t->counted = cpu;
    return __atomic_add_fetch(&process_ns, d, __ATOMIC_RELAXED);
}

/* /proc/self/task/TID/schedstat starts with the thread's time on a CPU in
 * ns, the sum CLOCK_THREAD_CPUTIME_ID reads. */
static uint64_t schedstat_ns(long tid)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return UINT64_MAX;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return UINT64_MAX;
    buf[n] = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    return end == buf ? UINT64_MAX : (uint64_t)v;
}

static void note_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        if (nat_start == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct start_thread *n = realloc(at_start, ncap * sizeof *n);
            if (!n)
                break;
            at_start = n;
            cap = ncap;
        }
        at_start[nat_start].tid = (pid_t)tid;
        at_start[nat_start].cpu_ns = schedstat_ns(tid);
        nat_start++;
    }
    closedir(d);
}

/* ---- API ---- */

EMU_API uint64_t emu_now(void)
{
    if (!cpu_mode)
        return wall_now();
    struct cpu_thread *t = cpu_self();
    if (t->waits > 0) /* this thread's clock stands still while it waits */
        return __atomic_load_n(&process_ns, __ATOMIC_RELAXED);
    return cpu_add(t, cpu_now(t, 0));
}

/* The cpu clock's waits are the waiting thread's: its CPU time from begin
 * to end (the emulator's work: NCCL's data exchange, reading fat binaries)
 * is not counted; other threads' clocks go on. Both ends read for real, so
 * that nothing of the program's is lost to the shortcut. */
EMU_API void emu_wait_begin(void)
{
    if (!cpu_mode) {
        wall_wait_begin();
        return;
    }
    struct cpu_thread *t = cpu_self();
    if (t->waits++ == 0)
        cpu_add(t, cpu_now(t, 1));
}

EMU_API void emu_wait_end(void)
{
    if (!cpu_mode) {
        wall_wait_end();
        return;
    }
    struct cpu_thread *t = cpu_self();
    if (t->waits > 0 && --t->waits == 0)
        t->counted = MAYA_MAX(t->counted, cpu_now(t, 1));
}

EMU_API int emu_host_clock_cpu(void)
{
    return cpu_mode;
}

void emu_host_clock_start(const struct emu_config *cfg)
{
    clock_base = maya_mono_ns();
    if (cfg->host_clock != EMU_HOST_CLOCK_CPU)
        return;
    note_threads();
    struct cpu_thread *t = &me;
    read_real(t);
    t->counted = t->anchor_cpu; /* the starting thread counts from now */
    t->ready = 1;
    cpu_mode = 1;
}

uint64_t emu_host_clock_base(void)
{
    return clock_base;
}

/* MAYA_HOST_CLOCK: wall, cpu, or auto (the default): cpu when this
 * machine's ranks (LOCAL_WORLD_SIZE) outnumber the CPUs this process may
 * run on, as when a laptop emulates an 8-GPU node. Launchers that know
 * better (maya run, which starts every rank here; the Slurm plugin, which
 * knows the binding) set wall or cpu themselves. Passthrough (real GPUs):
 * always wall, the real host's time. */
int emu_host_clock_configure(struct emu_config *cfg)
{
    const char *s = getenv("MAYA_HOST_CLOCK");
    cfg->host_clock = EMU_HOST_CLOCK_WALL;
    if (cfg->passthrough)
        return 0;
    if (s && !strcmp(s, "cpu")) {
        cfg->host_clock = EMU_HOST_CLOCK_CPU;
    } else if (s && *s && strcmp(s, "wall") && strcmp(s, "auto")) {
        return maya_error("MAYA_HOST_CLOCK=\"%s\": expected wall, cpu or auto", s);
    } else if (!s || !*s || !strcmp(s, "auto")) {
        const char *lws = getenv("LOCAL_WORLD_SIZE");
        int64_t ranks = 1;
        if (lws && *lws && (maya_parse_i64(lws, &ranks) < 0 || ranks < 1))
            ranks = 1;
        cpu_set_t set;
        int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
        if (cpus > 0 && ranks > cpus)
            cfg->host_clock = EMU_HOST_CLOCK_CPU;
    }
    return 0;
}
