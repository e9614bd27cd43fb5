/* The host clock that stamps trace records (emu_now), and how the emulator
 * takes its own waiting off it (emu_wait_begin/end).
 *
 * The simulator replays the time between one call's exit and the next
 * call's entry as the program's host work, so the clock should advance only
 * while the program works. Three clocks (MAYA_HOST_CLOCK, docs/trace-format.md):
 *
 * wall    CLOCK_MONOTONIC, standing still while any thread waits inside the
 *         emulator. Counts everything a GPU machine's host would spend
 *         between calls (sleeps, I/O, waiting for other threads or
 *         processes), but also the time the process was not running: with
 *         more busy processes than cores every rank is descheduled for
 *         milliseconds at a time and its gaps grow.
 * active  the wall clock less the time the process was stalled: none of
 *         its CUDA-calling threads running while one of them was ready to
 *         run but waiting for a CPU, or running on a virtual CPU that its
 *         hypervisor gave to another guest (the kernel's per-thread
 *         counters, /proc/self/task/TID/schedstat; how a stall is estimated
 *         from them is below). Being descheduled by other work does not count;
 *         computing, sleeping, I/O and blocking on a lock, a queue or
 *         another process (a data loader's workers) do. The clock never
 *         goes back. A thread that blocks waiting for one that never calls
 *         CUDA sees that thread's delays as its own wait.
 * cpu     the CPU time of the threads that call CUDA, added up into one
 *         process clock: each thread, whenever it reads the clock, adds the
 *         CPU time it used since its previous reading (its CPU time outside
 *         the emulator's waits; before a thread's first reading, since it
 *         was created or since the trace began). A process whose work moves
 *         between threads (PyTorch's main and autograd threads) keeps one
 *         timeline, and time not running, sleeping or blocked does not
 *         count. Threads that never call CUDA (the emulator's trace
 *         compressor, a program's CPU-only workers) are not counted; the
 *         worker that runs host functions reads the clock after each one,
 *         so that work counts.
 *
 * Cost: CLOCK_THREAD_CPUTIME_ID is a system call (about 0.2-0.4 us here,
 * against 20 ns for CLOCK_MONOTONIC from the vDSO). A thread therefore reads
 * its CPU time for real only when FRESH_NS or more of wall time passed since
 * its last real reading; before that it takes itself to have run all along.
 * Being descheduled takes a time slice (milliseconds), which always forces a
 * real reading, so the shortcut's error is under FRESH_NS per reading and
 * the next real reading corrects the sum. A thread calling CUDA without
 * pause makes one system call per FRESH_NS. The active clock reads the
 * schedstat files (a pread each, 0.3-0.4 us, of files kept open; an
 * open/read/close costs 1.8 us) at most once per ACTIVE_FRESH_NS.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FRESH_NS 10000u
#define ACTIVE_FRESH_NS 50000u

static int cpu_mode;              /* the cpu clock (set once, at start) */
static int active_mode;           /* the active clock (set once, at start) */

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
    uint64_t delay_ns;            /* its run-queue delay then; UINT64_MAX: unknown */
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
static const struct start_thread *start_entry(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    for (size_t i = 0; i < nat_start; i++)
        if (at_start[i].tid == tid)
            return &at_start[i];
    return NULL;
}

static uint64_t start_cpu_ns(uint64_t now)
{
    const struct start_thread *e = start_entry();
    if (!e)
        return 0;
    return e->cpu_ns == UINT64_MAX ? now : MAYA_MIN(e->cpu_ns, now);
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

/* A thread's time on a CPU (what CLOCK_THREAD_CPUTIME_ID reads) and its
 * run-queue delay, UINT64_MAX where unknown. */
static void schedstat_of(long tid, struct start_thread *out)
{
    char path[64];
    uint64_t run, delay;
    out->cpu_ns = out->delay_ns = UINT64_MAX;
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (maya_schedstat_read(fd, &run, &delay) == 0) {
        out->cpu_ns = run;
        out->delay_ns = delay;
    }
    close(fd);
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
        schedstat_of(tid, &at_start[nat_start]);
        nat_start++;
    }
    closedir(d);
}

/* ---- active ----
 *
 * The process is stalled when none of its CUDA-calling threads runs while
 * one of them is ready to run: on a machine of its own it would have run.
 * Over an interval of `elapsed` ns, thread i ran r_i (its CPU-time clock:
 * schedstat's own figure lags up to a tick), waited ready d_i (schedstat's
 * run-queue delay) and was blocked b_i = elapsed - r_i - d_i. Nothing ran
 * for at least elapsed - sum r_i, and all threads were blocked for at most
 * min b_i, so the stall was at least
 *
 *     S = elapsed - sum r_i - min b_i
 *
 * which the clock takes off. For one thread S is its delay exactly; when
 * work moves between threads (PyTorch's main thread blocks while its
 * autograd thread runs; the host-function worker runs while the program
 * waits in a synchronize) S is the working thread's delay; when threads
 * work at the same time, S is never more than the process lost. Intervals
 * are short (an update every ACTIVE_FRESH_NS at most, by whichever thread
 * reads the clock; a descheduled process reads nothing, so a stall falls in
 * one interval). The counters are read before the interval's end is
 * taken, so that a thread descheduled at the end of one of those system
 * calls counts it in the interval it shows in. The kernel adds a wait to
 * d_i only when the thread runs again: a thread that waited and has not
 * run since shows its wait later, where it may not fit (b_i taken as 0),
 * and is then not taken off, which errs toward the wall clock.
 *
 * Time stolen by a hypervisor (a virtual CPU not running while its guest
 * thought it ran) and interrupt handling are in neither r_i (the kernel
 * leaves them out of a thread's CPU time) nor d_i, so they look like
 * blocking. A thread that made no voluntary context switch over the
 * interval cannot have blocked: the updating thread reads its own count
 * (getrusage RUSAGE_THREAD; no other thread's is cheap to read) and, when
 * it is unchanged since its previous reading, takes its b_i as 0, so that
 * the stolen time comes off too (for one thread S is then d_i plus the
 * stolen time). Other threads keep their b_i, which errs toward the wall
 * clock.
 *
 * Cost per update: a clock_gettime and a pread of the schedstat file of
 * each registered thread and a getrusage of the updating one, under a lock
 * that a thread finding it taken does not wait for (the update in progress
 * covers it). */

struct active_thread {
    int fd;                       /* its /proc/self/task/TID/schedstat, for the delay */
    clockid_t cpu;                /* its CPU-time clock (exact, where schedstat's lags a tick) */
    uint64_t run, delay;          /* its CPU time and delay at the last update */
    long nvcsw;                   /* its voluntary context switches when it last updated
                                   * (-1: not yet; only the thread itself reads it) */
};

static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;
static struct active_thread *athreads; /* the registered threads (under active_lock) */
static size_t nathreads, capathreads;
static uint64_t last_update;      /* CLOCK_MONOTONIC of the last update */
static uint64_t wall_at_update;   /* the wall clock (wall_now) then */
static uint64_t stall_sum;        /* stalls taken off so far */
static uint64_t active_last;      /* the last value given: the clock never goes back */
static pthread_key_t active_key;  /* unregisters a thread when it ends */
static __thread int registered;   /* 1: in athreads; -1: could not be */

/* Under active_lock: add the stall since the last update to stall_sum. The
 * part of the interval the wall clock left out (an emulator wait) holds its
 * share of the stall, already off the clock. */
static void update_locked(void)
{
    /* the counters first, then the time: a thread descheduled at the end of
     * a system call here (clock_gettime, pread) is so within the interval
     * its counters show it in */
    struct reading {
        uint64_t dr, dd;
        int unblocked;            /* no voluntary switch over the interval: b_i is stolen time */
    } rd[64], *rv = nathreads <= 64 ? rd : malloc(nathreads * sizeof *rv);
    if (!rv)
        return;
    int self_fd = (int)(intptr_t)pthread_getspecific(active_key) - 1;
    size_t nread = 0;
    for (size_t i = 0; i < nathreads; i++) {
        struct active_thread *t = &athreads[i];
        uint64_t run, delay, unused;
        struct timespec ts;
        if (clock_gettime(t->cpu, &ts) != 0 || maya_schedstat_read(t->fd, &unused, &delay) < 0)
            continue; /* ending: its key's destructor unregisters it */
        run = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        int unblocked = 0;
        struct rusage ru;
        if (t->fd == self_fd && getrusage(RUSAGE_THREAD, &ru) == 0) {
            unblocked = t->nvcsw >= 0 && ru.ru_nvcsw == t->nvcsw;
            t->nvcsw = ru.ru_nvcsw;
        }
        rv[nread++] = (struct reading){ run > t->run ? run - t->run : 0, delay > t->delay ? delay - t->delay : 0, unblocked };
        t->run = MAYA_MAX(run, t->run);
        t->delay = MAYA_MAX(delay, t->delay);
    }
    uint64_t now = maya_mono_ns(), w = wall_now();
    uint64_t elapsed = now - last_update, advanced = w > wall_at_update ? w - wall_at_update : 0;
    last_update = now;
    wall_at_update = w;
    uint64_t sum_run = 0, min_blocked = UINT64_MAX;
    for (size_t i = 0; i < nread; i++) {
        sum_run += rv[i].dr;
        uint64_t busy = rv[i].dr + rv[i].dd;
        min_blocked = MAYA_MIN(min_blocked, elapsed > busy && !rv[i].unblocked ? elapsed - busy : 0);
    }
    if (rv != rd)
        free(rv);
    if (min_blocked == UINT64_MAX || sum_run + min_blocked >= elapsed)
        return;
    uint64_t stall = elapsed - sum_run - min_blocked;
    /* the part of the interval the wall clock left out (an emulator wait)
     * holds its share of the stall, already off the clock */
    if (advanced < elapsed)
        stall = (uint64_t)((double)stall * (double)advanced / (double)elapsed);
    __atomic_store_n(&stall_sum, stall_sum + stall, __ATOMIC_RELAXED);
}

static void active_thread_end(void *v)
{
    int fd = (int)(intptr_t)v - 1;
    pthread_mutex_lock(&active_lock);
    for (size_t i = 0; i < nathreads; i++)
        if (athreads[i].fd == fd) {
            athreads[i] = athreads[--nathreads];
            break;
        }
    pthread_mutex_unlock(&active_lock);
    close(fd);
}

/* The calling thread joins the threads the clock watches, with what it ran
 * and was delayed since the trace began or since it was created as part of
 * the interval since the last update: a thread that works before its first
 * CUDA call (the host-function worker, a thread the program starts and
 * waits for) is what the process waited for then, which the clock could
 * not see; of a history longer than the interval (a thread that started
 * before it) only what fits it counts, its time running first. */
static void active_register(void)
{
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    uint64_t run, delay;
    clockid_t cpu;
    if (fd < 0 || maya_schedstat_read(fd, &run, &delay) < 0 || pthread_getcpuclockid(pthread_self(), &cpu) != 0) {
        if (fd >= 0)
            close(fd);
        registered = -1;
        return;
    }
    struct timespec ts;
    if (clock_gettime(cpu, &ts) == 0) /* exact, where schedstat's lags up to a tick */
        run = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    pthread_mutex_lock(&active_lock);
    int ok = SIZE_MAX / 2 / sizeof *athreads > nathreads;
    if (ok && nathreads == capathreads) {
        size_t cap = capathreads ? capathreads * 2 : 8;
        struct active_thread *n = realloc(athreads, cap * sizeof *n);
        if (n) {
            athreads = n;
            capathreads = cap;
        } else {
            ok = 0;
        }
    }
    if (ok)
        ok = pthread_setspecific(active_key, (void *)(intptr_t)(fd + 1)) == 0;
    if (ok) {
        const struct start_thread *e = start_entry();
        uint64_t run0 = !e ? 0 : e->cpu_ns == UINT64_MAX ? run : MAYA_MIN(e->cpu_ns, run);
        uint64_t delay0 = !e ? 0 : e->delay_ns == UINT64_MAX ? delay : MAYA_MIN(e->delay_ns, delay);
        /* of a history longer than the interval, what fits it (run first):
         * the rest was before, where the clock cannot place it */
        uint64_t el = maya_mono_ns() - last_update, hr = MAYA_MIN(run - run0, el);
        run0 = run - hr;
        delay0 = delay - MAYA_MIN(delay - delay0, el - hr);
        /* no count yet: before it registered the thread may not have
         * existed, which is not the same as running */
        athreads[nathreads++] = (struct active_thread){ fd, cpu, run0, delay0, -1 };
        update_locked();
    }
    pthread_mutex_unlock(&active_lock);
    if (!ok)
        close(fd);
    registered = ok ? 1 : -1;
}

static uint64_t active_now(void)
{
    if (__builtin_expect(!registered, 0))
        active_register();
    uint64_t now = maya_mono_ns();
    if (now - __atomic_load_n(&last_update, __ATOMIC_RELAXED) >= ACTIVE_FRESH_NS &&
        pthread_mutex_trylock(&active_lock) == 0) {
        update_locked();
        pthread_mutex_unlock(&active_lock);
    }
    uint64_t d = __atomic_load_n(&stall_sum, __ATOMIC_RELAXED), w = wall_now();
    uint64_t v = w > d ? w - d : 0;
    uint64_t last = __atomic_load_n(&active_last, __ATOMIC_RELAXED);
    while (v > last && !__atomic_compare_exchange_n(&active_last, &last, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return v > last ? v : last;
}

/* ---- API ---- */

EMU_API uint64_t emu_now(void)
{
    if (active_mode)
        return active_now();
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
    if (!cpu_mode) { /* the active clock stands still as the wall clock does */
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

int emu_host_clock_active(void)
{
    return active_mode;
}

void emu_host_clock_start(const struct emu_config *cfg)
{
    clock_base = maya_mono_ns();
    if (cfg->host_clock == EMU_HOST_CLOCK_WALL)
        return;
    note_threads();
    if (cfg->host_clock == EMU_HOST_CLOCK_ACTIVE) {
        if (pthread_key_create(&active_key, active_thread_end) != 0)
            return; /* no key: the wall clock it is (the header says so) */
        last_update = clock_base;
        wall_at_update = 0;
        active_register(); /* the starting thread counts from now */
        active_mode = registered == 1;
        return;
    }
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

/* MAYA_HOST_CLOCK: wall, active, cpu, or auto (the default): cpu when this
 * machine's ranks (LOCAL_WORLD_SIZE) outnumber the CPUs this process may
 * run on, as when a laptop emulates an 8-GPU node, else active (wall where
 * the kernel does not report run-queue delays). Launchers that know better
 * (maya run, which starts every rank here; the Slurm plugin, which knows
 * the binding) set the clock themselves. Passthrough (real GPUs): always
 * wall, the real host's time. */
int emu_host_clock_configure(struct emu_config *cfg)
{
    const char *s = getenv("MAYA_HOST_CLOCK");
    cfg->host_clock = EMU_HOST_CLOCK_WALL;
    if (cfg->passthrough)
        return 0;
    if (s && !strcmp(s, "cpu")) {
        cfg->host_clock = EMU_HOST_CLOCK_CPU;
    } else if (s && !strcmp(s, "active")) {
        if (!maya_schedstat_readable())
            return maya_error("MAYA_HOST_CLOCK=active: this kernel does not report threads' run-queue delays "
                              "(/proc/thread-self/schedstat cannot be read); use wall or cpu");
        cfg->host_clock = EMU_HOST_CLOCK_ACTIVE;
    } else if (s && *s && strcmp(s, "wall") && strcmp(s, "auto")) {
        return maya_error("MAYA_HOST_CLOCK=\"%s\": expected wall, active, cpu or auto", s);
    } else if (!s || !*s || !strcmp(s, "auto")) {
        const char *lws = getenv("LOCAL_WORLD_SIZE");
        int64_t ranks = 1;
        if (lws && *lws && (maya_parse_i64(lws, &ranks) < 0 || ranks < 1))
            ranks = 1;
        cpu_set_t set;
        int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
        if (cpus > 0 && ranks > cpus)
            cfg->host_clock = EMU_HOST_CLOCK_CPU;
        else if (maya_schedstat_readable())
            cfg->host_clock = EMU_HOST_CLOCK_ACTIVE;
    }
    return 0;
}
