/* Claiming the run directory, run.conf as the run goes, and what fits this
 * machine (run_control.h). */
#define _GNU_SOURCE
#include "run_control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/trace_format.h"

/* The least a rank costs in memory, whatever it runs: the emulator's
 * libraries and state (~16 MiB resident for a small CUDA program), its
 * 4 MiB trace buffer and its 8 MiB tail file in the page cache. A PyTorch
 * rank takes ten times that: this bound refuses only what cannot work. */
#define RANK_MIN_BYTES (32ull << 20)
/* Tasks (processes and threads) a rank has at least: the program's thread,
 * the trace compressor and the emulated NCCL's progress thread. */
#define RANK_MIN_TASKS 3
/* More ranks than this per CPU make the emulation itself the bottleneck:
 * host gaps become scheduling delay (the cpu host clock corrects it only
 * so far) and a run takes hours. */
#define RANKS_PER_CPU 256

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (maya_snprintf(buf, sizeof buf, "%s", path) < 0)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return maya_error("cannot create directory %s: %m", buf);
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return maya_error("cannot create directory %s: %m", buf);
    return 0;
}

/* Why out/run.conf, which exists, belongs to another run. */
static int refuse(const char *out, const char *path)
{
    struct maya_run_desc d;
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size == 0)
        return maya_error("-o %s: another run is claiming the directory right now (its %s is being written); "
                          "choose another directory", out, MAYA_RUN_DESC_FILE);
    if (maya_run_desc_read(path, &d) < 0)
        return maya_error("-o %s: the directory already holds a run (%s, unreadable); choose another directory",
                          out, MAYA_RUN_DESC_FILE);
    int live = maya_run_desc_live(&d);
    int rc;
    if (live == 1)
        rc = maya_error("-o %s: the directory is in use by another run: %s pid %ld, started %s (%s); choose "
                        "another directory", out, d.launcher[0] ? d.launcher : "a launcher", d.launcher_pid,
                        d.start_time[0] ? d.start_time : "at an unknown time", d.command);
    else
        rc = maya_error("-o %s: the directory already holds a run (%s: %s, started %s%s); choose another "
                        "directory, or run `maya report %s` to redo its report", out, MAYA_RUN_DESC_FILE,
                        d.command[0] ? d.command : "?", d.start_time[0] ? d.start_time : "?",
                        live < 0 ? ", its launcher on another host or unknown" :
                        !strcmp(d.state, "running") ? ", its launcher gone before it ended" : "", out);
    maya_run_desc_free(&d);
    return rc;
}

int run_claim_dir(const char *out, char *real, size_t size)
{
    char path[PATH_MAX + 32];
    if (size < PATH_MAX)
        return maya_error("run_claim_dir: a buffer of %zu bytes for a path", size);
    if (mkdir_p(out) < 0 || !realpath(out, real))
        return maya_error("cannot use %s as the run directory: %m", out);
    if (maya_snprintf(path, sizeof path, "%s/%s", real, MAYA_RUN_DESC_FILE) < 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST)
        return refuse(out, path);
    if (fd < 0)
        return maya_error("cannot create %s: %m", path);
    close(fd);
    static const char *subs[] = { "traces", "logs" };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(subs); i++) {
        if (maya_snprintf(path, sizeof path, "%s/%s", real, subs[i]) < 0 || mkdir_p(path) < 0)
            return -1;
    }
    return 0;
}

int run_desc_save(const char *dir, const struct maya_run_desc *d)
{
    char path[PATH_MAX + 32];
    if (maya_snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_DESC_FILE) < 0)
        return -1;
    return maya_run_desc_write(path, d);
}

static int executable(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return -1;
    }
    return access(path, X_OK);
}

int run_check_command(char *const *cmd)
{
    const char *prog = cmd[0];
    if (!prog || !*prog)
        return maya_error("no command to run: expected maya run [OPTIONS] -- CMD [ARGS...]");
    if (strchr(prog, '/')) {
        if (executable(prog) < 0)
            return maya_error("cannot execute %s: %m", prog);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char dir[PATH_MAX], full[PATH_MAX * 2];
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len < sizeof dir) {
            memcpy(dir, p, len);
            dir[len] = 0;
            snprintf(full, sizeof full, "%s/%s", len ? dir : ".", prog);
            if (executable(full) == 0)
                return 0;
        }
        p += len + (end ? 1 : 0);
        if (!end)
            break;
    }
    return maya_error("cannot execute %s: no such program on PATH", prog);
}

uint64_t run_mem_available(void)
{
    FILE *fp = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (fp)
        fclose(fp);
    return (uint64_t)kb << 10;
}

/* How many more tasks this user may start: RLIMIT_NPROC and the kernel's
 * threads-max, less the tasks already running (counted from /proc/loadavg's
 * total, which is every user's: a bound on the safe side). */
static uint64_t tasks_left(void)
{
    uint64_t limit = UINT64_MAX;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        limit = rl.rlim_cur;
    FILE *fp = fopen("/proc/sys/kernel/threads-max", "r");
    unsigned long long tmax = 0;
    if (fp && fscanf(fp, "%llu", &tmax) == 1 && tmax < limit)
        limit = tmax;
    if (fp)
        fclose(fp);
    unsigned long long running = 0, total = 0;
    fp = fopen("/proc/loadavg", "r");
    if (fp && fscanf(fp, "%*f %*f %*f %llu/%llu", &running, &total) != 2)
        total = 0;
    if (fp)
        fclose(fp);
    return limit == UINT64_MAX ? UINT64_MAX : limit > total ? limit - total : 0;
}

int run_proc_usage(pid_t pid, uint64_t *ticks, uint64_t *rss_bytes)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    const char *p = maya_proc_stat_fields(path, buf, sizeof buf);
    unsigned long long ut = 0, st = 0;
    long rss_pages = 0;
    /* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
       cutime cstime priority nice threads itrealvalue starttime vsize rss */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d "
                            "%*u %*u %ld", &ut, &st, &rss_pages) != 3)
        return -1;
    *ticks = ut + st;
    *rss_bytes = rss_pages > 0 ? (uint64_t)rss_pages * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
    return 0;
}

int run_check_size(int nprocs, int cpus)
{
    cpu_set_t set;
    if (cpus <= 0 && sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    uint64_t mem = run_mem_available(), tasks = tasks_left();
    uint64_t by_mem = mem ? mem / RANK_MIN_BYTES : UINT64_MAX;
    uint64_t by_tasks = tasks == UINT64_MAX ? UINT64_MAX : tasks / RANK_MIN_TASKS;
    uint64_t by_cpus = cpus > 0 ? (uint64_t)cpus * RANKS_PER_CPU : UINT64_MAX;
    uint64_t fit = MAYA_MIN(by_mem, MAYA_MIN(by_tasks, by_cpus));
    if ((uint64_t)nprocs <= fit)
        return 0;
    char m[64] = "unknown", t[64] = "no limit", c[64] = "unknown";
    if (mem)
        snprintf(m, sizeof m, "%.1f GiB available, %llu at %llu MiB each", mem / 1073741824.0,
                 (unsigned long long)by_mem, RANK_MIN_BYTES >> 20);
    if (tasks != UINT64_MAX)
        snprintf(t, sizeof t, "%llu more tasks, %llu at %d each", (unsigned long long)tasks,
                 (unsigned long long)by_tasks, RANK_MIN_TASKS);
    if (cpus > 0)
        snprintf(c, sizeof c, "%d, %llu at %d per CPU", cpus, (unsigned long long)by_cpus, RANKS_PER_CPU);
    return maya_error("%d processes do not fit this machine: at most %llu would (memory: %s; process limit: %s; "
                      "CPUs: %s). Emulate fewer ranks (-g GPUxN with a smaller N, or -n), or run under Slurm "
                      "across nodes (maya-srun(1)), or declare the job's replicas so that duplicate-rank "
                      "elimination emulates only the ranks that differ (--replicas, docs/dedup.md)", nprocs, (unsigned long long)fit, m, t, c);
}

int run_trace_errors(const char *dir, int nprocs, char *why, size_t size)
{
    int found = 0;
    why[0] = 0;
    for (int i = 0; i < nprocs; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/traces/rank-%d.mtrace.tail", dir, i);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct maya_trace_tail t;
        struct maya_trace_status st;
        if (fd < 0)
            continue;
        if (pread(fd, &t, sizeof t, 0) == (ssize_t)sizeof t && t.magic == MAYA_TRACE_TAIL_MAGIC &&
            pread(fd, &st, sizeof st, (off_t)(MAYA_TRACE_TAIL_SLOTS * (sizeof t + (uint64_t)t.slot_bytes))) ==
                (ssize_t)sizeof st &&
            st.magic == MAYA_TRACE_STATUS_MAGIC && st.write_errno > 0) {
            maya_warn("rank %d could not write its trace: %s (traces/rank-%d.mtrace.tmp holds what was written "
                      "before, the tail its last records)", i, strerror(st.write_errno), i);
            if (!found++)
                snprintf(why, size, "rank %d could not write its trace: %s", i, strerror(st.write_errno));
        }
        close(fd);
    }
    return found;
}
