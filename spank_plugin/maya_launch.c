/* maya-launch: what a Slurm task of a --maya-emulate step becomes.
 *
 * The plugin's task_init makes slurmstepd execute this program instead of the
 * task's own (see spank_task.c). It starts the task's share of emulated
 * ranks, each a process of the real program with its rank identity, pinned to
 * its cores; forwards signals to them; copies each rank's standard error to
 * the job's and to logs/rank-N.err (the report shows its tail when a rank
 * fails); stops the others when one fails (as torchrun does); and records how
 * each ended in slurm/task-<T>.conf of the run directory, which the
 * post-processing merges into run.conf. Its exit status is the first failing
 * rank's (a rank killed by a signal kills the launcher with it), so Slurm
 * reports the task as it would report the program. The launcher of task 0
 * also runs the watchdog (maya/run_watchdog.h) over every rank of the step,
 * through their tail files in the shared traces/ folder: when the job hangs
 * it names the ranks in its task file's cause and writes slurm/stop (the
 * cause, then the hung ranks), which every task's launcher looks for four
 * times a second and then stops its ranks, the hung ones included
 * (MAYA_HANG_TIMEOUT seconds, default 15).
 *
 * Environment (set by the plugin; removed before the program starts):
 *   MAYA_LAUNCH_EXE    the program (the task's argv[0]); our argv[1..] are its arguments
 *   MAYA_LAUNCH_RANKS  FIRST:COUNT, the ranks of this task
 *   MAYA_LAUNCH_TASK   the task's global id (names its status file)
 *   MAYA_LAUNCH_LOCAL  LOCAL:NLOCAL, the task's index among the node's tasks
 *   MAYA_LAUNCH_DIR    the step's run directory
 *   MAYA_LAUNCH_PIN    1: pin each rank to its share of the task's cores
 * and WORLD_SIZE, MAYA_GPUS_PER_NODE, which the ranks keep.
 */
#define _GNU_SOURCE
#include "pin.h"
#include "maya/common.h"
#include "maya/run_desc.h"
#include "maya/run_elim.h"
#include "maya/run_watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILL_GRACE_S 10

struct rank {
    int rank;
    pid_t pid;
    int err_pipe;               /* read end of its stderr, -1 when closed */
    int err_log;                /* logs/rank-N.err, -1 if none */
    int status;                 /* from waitpid */
    int done;
    int hung;                   /* named by the watchdog */
    char note[128];
};

static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* the pipe is full: the main loop is already awake */
    }
    errno = saved;
}

static int env_int(const char *name, int lo, int hi, int *out)
{
    const char *s = getenv(name);
    int64_t v;
    if (!s || maya_parse_i64(s, &v) < 0 || v < lo || v > hi)
        return maya_error("%s=\"%s\": expected a whole number from %d to %d", name, s ? s : "", lo, hi);
    *out = (int)v;
    return 0;
}

static int env_pair(const char *name, int *a, int *b)
{
    const char *s = getenv(name);
    char buf[64];
    int64_t x, y;
    char *colon;
    if (!s || snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf || !(colon = strchr(buf, ':')))
        return maya_error("%s=\"%s\": expected A:B", name, s ? s : "");
    *colon = 0;
    if (maya_parse_i64(buf, &x) < 0 || maya_parse_i64(colon + 1, &y) < 0 || x < 0 || y < 0 ||
        x > (1 << 24) || y > (1 << 24))
        return maya_error("%s=\"%s\": expected two whole numbers A:B", name, s);
    *a = (int)x;
    *b = (int)y;
    return 0;
}

static void setenv_int(const char *name, int v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", v);
    setenv(name, buf, 1);
}

/* In the child: become rank r and run the program. Never returns. */
static void run_rank(const struct rank *r, int gpus_per_node, const char *exe, char **argv, int err_fd,
                     const struct pin_plan *plan, hwloc_const_bitmap_t cpus, const char *host_clock)
{
    if (err_fd >= 0 && dup2(err_fd, 2) < 0)
        _exit(127);
    if (host_clock)
        setenv("MAYA_HOST_CLOCK", host_clock, 1);
    setenv_int("RANK", r->rank);
    setenv_int("MAYA_RANK", r->rank);
    setenv_int("LOCAL_RANK", r->rank % gpus_per_node);
    setenv_int("NODE_RANK", r->rank / gpus_per_node);
    setenv_int("GROUP_RANK", r->rank / gpus_per_node);
    setenv_int("MAYA_NODE", r->rank / gpus_per_node);
    const char *world = getenv("WORLD_SIZE");
    int w = world ? atoi(world) : 1;
    setenv_int("LOCAL_WORLD_SIZE", w < gpus_per_node ? w : gpus_per_node);
    static const char *ours[] = { "MAYA_LAUNCH_EXE", "MAYA_LAUNCH_RANKS", "MAYA_LAUNCH_TASK",
                                  "MAYA_LAUNCH_LOCAL", "MAYA_LAUNCH_DIR", "MAYA_LAUNCH_PIN" };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(ours); i++)
        unsetenv(ours[i]);
    if (cpus && pin_apply(plan, cpus) < 0)
        _exit(127);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    argv[0] = (char *)exe;
    execvp(exe, argv); /* a bare name is looked up in PATH, as srun would */
    fprintf(stderr, "maya-launch: cannot run %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* slurm/task-<T>.conf: a run description of the step as this task saw it
 * (its own ranks' states; the others unknown), merged after the job. */
static int write_status(const char *dir, int task, const char *start, const char *end, double wall_s,
                        const struct rank *ranks, int n, int gpus_per_node, int world, const char *cause)
{
    char path[PATH_MAX];
    const char *gpu = getenv("MAYA_GPU");
    struct maya_run_desc d;
    maya_run_desc_init(&d);
    snprintf(d.launcher, sizeof d.launcher, "slurm");
    snprintf(d.gpu, sizeof d.gpu, "%s", gpu && *gpu ? gpu : "unknown");
    d.gpu_count = world;
    d.gpus_per_node = gpus_per_node;
    d.nodes = (world + gpus_per_node - 1) / gpus_per_node;
    snprintf(d.start_time, sizeof d.start_time, "%s", start);
    if (end) {
        snprintf(d.end_time, sizeof d.end_time, "%s", end);
        d.wall_s = wall_s;
    }
    snprintf(d.cause, sizeof d.cause, "%s", cause ? cause : "");
    int rc = maya_run_desc_set_nprocs(&d, world);
    for (int i = 0; rc == 0 && i < n; i++) {
        const struct rank *r = &ranks[i];
        struct maya_run_proc *p = &d.procs[r->rank];
        p->node = r->rank / gpus_per_node;
        p->local_rank = r->rank % gpus_per_node;
        p->pid = r->pid;
        if (r->done && WIFEXITED(r->status)) {
            p->end = MAYA_RUN_EXITED;
            p->code = WEXITSTATUS(r->status);
        } else if (r->done && WIFSIGNALED(r->status)) {
            p->end = MAYA_RUN_SIGNALED;
            p->code = WTERMSIG(r->status);
        }
        snprintf(p->note, sizeof p->note, "%s", r->note);
    }
    if (rc == 0 && maya_snprintf(path, sizeof path, "%s/slurm/task-%d.conf", dir, task) == 0)
        rc = maya_run_desc_write(path, &d);
    maya_run_desc_free(&d);
    return rc;
}

static void copy_out(struct rank *r)
{
    char buf[65536];
    ssize_t n = read(r->err_pipe, buf, sizeof buf);
    if (n > 0) {
        /* The job's stderr first: that is where the user looks. */
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(2, buf + off, (size_t)(n - off));
            if (w <= 0)
                break;
            off += w;
        }
        if (r->err_log >= 0 && write(r->err_log, buf, (size_t)n) != n) {
            close(r->err_log);
            r->err_log = -1;
        }
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(r->err_pipe);
        r->err_pipe = -1;
    }
}

static void signal_rank(const struct rank *r, int sig, int own_group)
{
    if (!own_group || kill(-r->pid, sig) < 0)
        kill(r->pid, sig);
}

static int failed(const struct rank *r)
{
    return r->done && !(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0);
}

struct launch {
    const char *exe, *dir;
    char **argv;
    int first, count, task, local, nlocal, gpn, world;
    int pin, tee, own_group;
    struct pin_plan plan;
    const char *host_clock;     /* MAYA_HOST_CLOCK the ranks get; NULL: leave as it is */
    struct rank *ranks;
    char start[32];
    uint64_t t0;
    /* the watchdog (task 0 only): every rank of the step */
    struct run_watchdog *wd;
    pid_t *wd_pids;             /* by global rank: ours, 0 ended, -1 another task's */
    int *wd_hung;
    char cause[512];
};

static int read_env(struct launch *L)
{
    L->exe = getenv("MAYA_LAUNCH_EXE");
    L->dir = getenv("MAYA_LAUNCH_DIR");
    if (!L->exe || !*L->exe || !L->dir || !*L->dir)
        return maya_error("started without MAYA_LAUNCH_EXE and MAYA_LAUNCH_DIR; it is run by the maya "
                          "Slurm plugin (srun --maya-emulate, maya-srun(1))");
    if (env_pair("MAYA_LAUNCH_RANKS", &L->first, &L->count) < 0 ||
        env_int("MAYA_LAUNCH_TASK", 0, 1 << 24, &L->task) < 0 ||
        env_pair("MAYA_LAUNCH_LOCAL", &L->local, &L->nlocal) < 0 ||
        env_int("MAYA_GPUS_PER_NODE", 1, 1024, &L->gpn) < 0 || env_int("WORLD_SIZE", 1, 1 << 24, &L->world) < 0)
        return -1;
    if (L->count < 1 || L->first + L->count > L->world)
        return maya_error("MAYA_LAUNCH_RANKS=%d:%d does not fit WORLD_SIZE=%d", L->first, L->count, L->world);
    const char *pin = getenv("MAYA_LAUNCH_PIN");
    L->pin = pin && !strcmp(pin, "1");
    /* On a terminal (srun --pty) ranks stay in its foreground process group
     * and write to it directly; otherwise each rank is a process group of its
     * own, so that stopping a rank stops what it started, and its stderr is
     * copied to its log. */
    L->tee = !isatty(2) && L->count <= 1000;
    L->own_group = !isatty(0);
    return 0;
}

/* The host clock of the ranks' traces (MAYA_HOST_CLOCK, docs/trace-format.md):
 * a user's wall, active or cpu (or a bad value, which the emulator names)
 * stands; otherwise cpu when ranks share CPUs: more ranks than the cores
 * they are pinned to, or, unpinned, than the CPUs of the task's binding (the
 * node's tasks together when the task is not bound on its own), else active
 * (wall where the kernel does not report run-queue delays). */
static const char *pick_host_clock(const struct launch *L)
{
    const char *s = getenv("MAYA_HOST_CLOCK");
    if (s && *s && strcmp(s, "auto"))
        return NULL;
    const char *own = maya_schedstat_readable() ? "active" : "wall";
    if (L->pin)
        return L->count > L->plan.nunits ? "cpu" : own;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return NULL;
    int cpus = CPU_COUNT(&set), sharing = L->count;
    if (cpus >= sysconf(_SC_NPROCESSORS_ONLN))
        sharing *= L->nlocal;
    return sharing > cpus ? "cpu" : own;
}

/* Start rank i: its stderr pipe and log, its cores, the process. */
static int start_rank(struct launch *L, int i)
{
    struct rank *r = &L->ranks[i];
    hwloc_bitmap_t cpus = NULL;
    int fds[2] = { -1, -1 };
    r->rank = L->first + i;
    r->err_pipe = r->err_log = -1;
    if (L->tee) {
        char log[PATH_MAX];
        if (pipe2(fds, O_CLOEXEC) < 0)
            return maya_error("pipe: %m");
        snprintf(log, sizeof log, "%s/logs/rank-%d.err", L->dir, r->rank);
        r->err_log = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        r->err_pipe = fds[0];
    }
    if (L->pin && !(cpus = pin_plan_share(&L->plan, i, L->count)))
        return maya_error("out of memory");
    r->pid = fork();
    if (r->pid < 0)
        return maya_error("fork: %m");
    if (r->pid == 0) {
        if (L->own_group)
            setpgid(0, 0);
        run_rank(r, L->gpn, L->exe, L->argv, fds[1], &L->plan, cpus, L->host_clock);
    }
    if (L->own_group)
        setpgid(r->pid, r->pid); /* also here: no signal may find it unset */
    if (fds[1] >= 0)
        close(fds[1]);
    if (cpus)
        hwloc_bitmap_free(cpus);
    return 0;
}

/* A rank ended: when it failed, stop the others, which would wait for it in
 * their next collective. */
static void rank_ended(struct launch *L, int i, int status, int *first_failed, uint64_t *kill_at)
{
    struct rank *r = &L->ranks[i];
    r->done = 1;
    r->status = status;
    /* "terminated" only if our signal is what ended it (it may have been
     * exiting on its own already). */
    if (r->note[0] && !(WIFSIGNALED(status) && (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGKILL)))
        r->note[0] = 0;
    /* duplicate-rank elimination stopped it (it exited 0): say so in run.conf */
    char traces[PATH_MAX + 16];
    snprintf(traces, sizeof traces, "%s/traces", L->dir);
    if (!r->note[0] && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        run_elim_note(traces, r->rank, r->note, sizeof r->note);
    if (!failed(r) || *first_failed >= 0)
        return;
    *first_failed = i;
    for (int j = 0; j < L->count; j++) {
        if (L->ranks[j].done)
            continue;
        snprintf(L->ranks[j].note, sizeof L->ranks[j].note, "terminated: rank %d failed", L->ranks[i].rank);
        signal_rank(&L->ranks[j], SIGTERM, L->own_group);
    }
    *kill_at = maya_mono_ns() + KILL_GRACE_S * 1000000000ull;
}

/* slurm/stop: the watchdog of task 0 found the step hung. Its first line is
 * the cause, its second the hung ranks ("1 5"). Written atomically. */
static void write_stop(struct launch *L)
{
    char path[PATH_MAX], text[sizeof L->cause + 4096];
    size_t used = (size_t)snprintf(text, sizeof text, "%s\n", L->cause);
    for (int i = 0; i < L->world && used < sizeof text - 16; i++)
        if (L->wd_hung[i])
            used += (size_t)snprintf(text + used, sizeof text - used, "%d ", i);
    snprintf(text + used, sizeof text - used, "\n");
    if (maya_snprintf(path, sizeof path, "%s/slurm/stop", L->dir) < 0 ||
        maya_write_file_atomic(path, text, strlen(text)) < 0)
        maya_warn("cannot tell the other tasks to stop; stopping this task's ranks only");
}

/* Has the step been told to stop (slurm/stop)? Then the cause and which of
 * this task's ranks hung are taken from it. */
static int stop_requested(struct launch *L)
{
    char path[PATH_MAX], *text;
    if (maya_snprintf(path, sizeof path, "%s/slurm/stop", L->dir) < 0 || access(path, F_OK) != 0 ||
        maya_read_file(path, &text, NULL) < 0)
        return 0;
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = 0;
    snprintf(L->cause, sizeof L->cause, "%s", text);
    for (int j = 0; j < L->count; j++)
        L->ranks[j].hung = 0;
    for (char *p = nl ? nl + 1 : NULL, *end; p && *p; p = end) {
        long r = strtol(p, &end, 10);
        if (end == p)
            break;
        for (int j = 0; j < L->count; j++)
            L->ranks[j].hung |= L->ranks[j].rank == r;
    }
    free(text);
    return 1;
}

/* Stop this task's ranks because the step hung; when to kill what is left. */
static uint64_t stop_ranks(struct launch *L)
{
    for (int j = 0; j < L->count; j++) {
        struct rank *r = &L->ranks[j];
        if (r->done)
            continue;
        snprintf(r->note, sizeof r->note, "%s", r->hung ? "hung: stopped by the watchdog"
                 : "terminated: the job hung (see the run's cause)");
        signal_rank(r, SIGTERM, L->own_group);
        signal_rank(r, SIGCONT, L->own_group); /* a stopped rank acts on it only once continued */
    }
    return maya_mono_ns() + KILL_GRACE_S * 1000000000ull;
}

/* Copy the ranks' stderr, pass signals on, reap them. Returns the index of
 * the first rank that failed, -1 if none, or -2 when supervising failed. */
static int supervise(struct launch *L)
{
    int alive = L->count, first_failed = -1;
    uint64_t kill_at = 0, drain_until = 0;
    struct pollfd pfd[1 + 1000];
    int idx[1000];
    for (;;) {
        int np = 0;
        pfd[np++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
        for (int i = 0; i < L->count && np < (int)MAYA_ARRAY_LEN(pfd); i++)
            if (L->ranks[i].err_pipe >= 0) {
                idx[np - 1] = i;
                pfd[np++] = (struct pollfd){ .fd = L->ranks[i].err_pipe, .events = POLLIN };
            }
        /* A process a rank left behind may hold its stderr: not for long. */
        if (alive == 0 && (np == 1 || maya_mono_ns() >= drain_until))
            return first_failed;
        if (poll(pfd, (nfds_t)np, kill_at || alive == 0 ? 200 : L->world > 1 ? 250 : -1) < 0 && errno != EINTR) {
            maya_error("poll: %m");
            return -2;
        }
        for (int k = 1; k < np; k++)
            if (pfd[k].revents)
                copy_out(&L->ranks[idx[k - 1]]);
        if (pfd[0].revents) {
            unsigned char sigs[64];
            ssize_t n = read(sig_pipe[0], sigs, sizeof sigs);
            for (ssize_t s = 0; s < n; s++)
                for (int i = 0; sigs[s] != SIGCHLD && i < L->count; i++)
                    if (!L->ranks[i].done)
                        signal_rank(&L->ranks[i], sigs[s], L->own_group);
        }
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            for (int i = 0; i < L->count; i++) {
                if (L->ranks[i].pid != pid || L->ranks[i].done)
                    continue;
                rank_ended(L, i, status, &first_failed, &kill_at);
                if (L->wd_pids)
                    L->wd_pids[L->ranks[i].rank] = 0;
                if (--alive == 0)
                    drain_until = maya_mono_ns() + 2000000000ull;
            }
        }
        if (L->wd && !kill_at && first_failed < 0 && alive > 0 &&
            run_watchdog_check(L->wd, L->wd_pids, L->wd_hung, L->cause, sizeof L->cause)) {
            maya_warn("%s; stopping the step", L->cause);
            write_stop(L);
        }
        if (L->world > 1 && !kill_at && alive > 0 && stop_requested(L))
            kill_at = stop_ranks(L);
        if (kill_at && alive > 0 && maya_mono_ns() >= kill_at) {
            for (int j = 0; j < L->count; j++)
                if (!L->ranks[j].done)
                    signal_rank(&L->ranks[j], SIGKILL, L->own_group);
            kill_at = 0;
        }
    }
}

/* End as the rank ended: its exit status, or its signal (without a core
 * file of our own). */
static int exit_as(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none);
    signal(WTERMSIG(status), SIG_DFL);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    raise(WTERMSIG(status));
    return 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    struct launch L = { .argv = argv };
    maya_set_error_prefix("maya-launch");
    if (read_env(&L) < 0 || (L.pin && pin_plan_init(&L.plan, L.local, L.nlocal) < 0))
        return 127;
    L.host_clock = pick_host_clock(&L);
    L.ranks = calloc((size_t)L.count, sizeof *L.ranks);
    if (!L.ranks || pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        maya_error("cannot start: %m");
        return 127;
    }
    static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD };
    struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < MAYA_ARRAY_LEN(forwarded); i++)
        sigaction(forwarded[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    maya_utc_now(L.start, sizeof L.start);
    L.t0 = maya_mono_ns();
    for (int i = 0; i < L.count; i++) {
        if (start_rank(&L, i) < 0) {
            /* Stop those already started; 127, as a shell answers for a
             * command it cannot run. */
            for (int j = 0; j < i; j++)
                signal_rank(&L.ranks[j], SIGKILL, L.own_group);
            return 127;
        }
    }
    write_status(L.dir, L.task, L.start, NULL, 0, L.ranks, L.count, L.gpn, L.world, NULL);
    if (L.task == 0 && L.world > 1) {
        double hang_s = RUN_HANG_TIMEOUT_S;
        const char *h = getenv("MAYA_HANG_TIMEOUT");
        if (h && *h && (maya_parse_double(h, &hang_s) < 0 || !(hang_s > 0))) {
            maya_warn("MAYA_HANG_TIMEOUT=\"%s\": expected seconds above 0; using %g", h, RUN_HANG_TIMEOUT_S);
            hang_s = RUN_HANG_TIMEOUT_S;
        }
        char traces[PATH_MAX];
        snprintf(traces, sizeof traces, "%s/traces", L.dir);
        L.wd = run_watchdog_new(traces, L.world, hang_s);
        L.wd_pids = calloc((size_t)L.world, sizeof *L.wd_pids);
        L.wd_hung = calloc((size_t)L.world, sizeof *L.wd_hung);
        if (!L.wd || !L.wd_pids || !L.wd_hung) {
            run_watchdog_free(L.wd);
            L.wd = NULL;
        } else {
            for (int i = 0; i < L.world; i++)
                L.wd_pids[i] = -1;
            for (int i = 0; i < L.count; i++)
                L.wd_pids[L.ranks[i].rank] = L.ranks[i].pid;
        }
    }
    int first_failed = supervise(&L);
    char end[32];
    maya_utc_now(end, sizeof end);
    write_status(L.dir, L.task, L.start, end, (double)(maya_mono_ns() - L.t0) / 1e9, L.ranks, L.count, L.gpn,
                 L.world, L.cause);
    run_watchdog_free(L.wd);
    if (first_failed == -2) {
        for (int j = 0; j < L.count; j++)
            signal_rank(&L.ranks[j], SIGKILL, L.own_group);
        return 127;
    }
    return first_failed < 0 ? 0 : exit_as(L.ranks[first_failed].status);
}
