/* The watchdog of maya run and the Slurm launcher (maya/run_watchdog.h):
 * names the rank that hangs.
 *
 * Each rank's emulator publishes its status in its tail file (trace_format.h,
 * struct maya_trace_status): how many records it has traced, and whether it
 * waits for its peers in a collective (which one, for whom). The watchdog
 * reads that every 0.25 s. The job is hung when at least one rank waits in
 * a collective and, for the whole hang time, no rank has made a call or
 * changed what it waits in, and no rank that does not wait has used CPU
 * (its process group's, so that compile workers count: a rank compiling or
 * loading data for a minute is busy, not hung): then the ranks that do not
 * wait (a process stopped, or blocked outside CUDA) are the ones that hang,
 * and
 * the message names them with the collective the others wait in. When every
 * rank waits, the ranks disagree about their collectives (a deadlock) and
 * each rank's wait is named.
 *
 * Cost: one pread of 128 bytes per rank per look; nothing in the ranks
 * beyond the stores of their status.
 */
#define _GNU_SOURCE
#include "maya/run_watchdog.h"

#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/trace_format.h"
#include "maya/trace_reader.h"

struct rank_watch {
    int fd;                     /* its tail file, -1 until it exists */
    int ended;                  /* its tail was removed: its trace ended normally */
    off_t status_off;
    int have;                   /* st is valid */
    struct maya_trace_status st;
    uint64_t changed_ns;        /* when its status (or its CPU time) last changed */
    uint64_t cpu_ticks;         /* its process group's CPU time when last looked at */
};

struct run_watchdog {
    char dir[4096];
    int n;
    uint64_t hang_ns;
    uint64_t last_look_ns;
    struct rank_watch *r;
};

struct run_watchdog *run_watchdog_new(const char *trace_dir, int n, double hang_s)
{
    struct run_watchdog *w = calloc(1, sizeof *w);
    if (!w || !(w->r = calloc((size_t)MAYA_MAX(n, 1), sizeof *w->r))) {
        free(w);
        return NULL;
    }
    snprintf(w->dir, sizeof w->dir, "%s", trace_dir);
    w->n = n;
    w->hang_ns = (uint64_t)(hang_s * 1e9);
    uint64_t now = maya_mono_ns();
    for (int i = 0; i < n; i++) {
        w->r[i].fd = -1;
        w->r[i].changed_ns = now;
    }
    return w;
}

void run_watchdog_free(struct run_watchdog *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n; i++)
        if (w->r[i].fd >= 0)
            close(w->r[i].fd);
    free(w->r);
    free(w);
}

/* Read rank i's status (opening its tail file once it exists). */
static void look(struct run_watchdog *w, int i, uint64_t now)
{
    struct rank_watch *r = &w->r[i];
    if (r->fd < 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/rank-%d.mtrace.tail", w->dir, i);
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        struct maya_trace_tail t;
        if (r->fd >= 0 && (pread(r->fd, &t, sizeof t, 0) != (ssize_t)sizeof t || t.magic != MAYA_TRACE_TAIL_MAGIC)) {
            close(r->fd);
            r->fd = -1;
        }
        if (r->fd < 0)
            return;
        r->status_off = (off_t)(MAYA_TRACE_TAIL_SLOTS * (sizeof t + (uint64_t)t.slot_bytes));
    }
    struct stat fst;
    if (fstat(r->fd, &fst) == 0 && fst.st_nlink == 0) {
        r->ended = 1; /* removed at a normal end: the rank is done */
        return;
    }
    struct maya_trace_status st;
    if (pread(r->fd, &st, sizeof st, r->status_off) != (ssize_t)sizeof st || st.magic != MAYA_TRACE_STATUS_MAGIC)
        return;
    if (!r->have || st.records != r->st.records || st.waiting != r->st.waiting || st.seq != r->st.seq ||
        st.comm != r->st.comm)
        r->changed_ns = now;
    r->st = st;
    r->have = 1;
}

/* CPU time (clock ticks) of the processes of process group pgid: a rank
 * and what it started (maya run makes each rank a group). Scans /proc:
 * called only for a rank that has made no call for the hang time. */
static uint64_t group_cpu_ticks(pid_t pgid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    uint64_t total = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        const char *p = maya_proc_stat_fields(path, buf, sizeof buf);
        long pgrp;
        unsigned long long ut, st;
        /* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
        if (p && sscanf(p + 2, "%*c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &pgrp, &ut, &st) == 3 &&
            pgrp == (long)pgid)
            total += ut + st;
    }
    if (d)
        closedir(d);
    return total;
}

/* "stopped" when the kernel says the process is stopped (SIGSTOP, a
 * debugger), else "" (running or sleeping). */
static const char *proc_state(pid_t pid)
{
    char path[64], buf[512];
    if (pid <= 0)
        return ""; /* started elsewhere: its state is not ours to see */
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    const char *p = maya_proc_stat_fields(path, buf, sizeof buf);
    if (p && (p[2] == 'T' || p[2] == 't'))
        return " (its process is stopped)";
    return "";
}

/* The rank of a process, by the pid this launcher started it as or, for
 * ranks started elsewhere, the one its status gives (pids are per host:
 * a remote match may be wrong only if two hosts reuse a pid). */
static int rank_of_pid(const struct run_watchdog *w, const pid_t *pids, int pid)
{
    for (int i = 0; pid > 0 && i < w->n; i++)
        if (pids[i] == pid || (pids[i] < 0 && w->r[i].have && (int)w->r[i].st.pid == pid))
            return i;
    return -1;
}

static void describe_wait(const struct run_watchdog *w, const struct maya_trace_status *st, const pid_t *pids,
                          char *buf, size_t size)
{
    int who = rank_of_pid(w, pids, st->awaits_pid);
    char whom[48] = "";
    if (who >= 0)
        snprintf(whom, sizeof whom, " (for rank %d)", who);
    snprintf(buf, size, "%s #%llu on communicator 0x%llx%s", maya_coll_op_name(st->op),
             (unsigned long long)st->seq, (unsigned long long)st->comm, whom);
}

/* Is rank i still running (as far as this process can tell)? */
static int watched(const struct run_watchdog *w, const pid_t *pids, int i)
{
    return pids[i] != 0 && !w->r[i].ended;
}

static int rank_of_first_idle(const struct run_watchdog *w, const pid_t *pids)
{
    for (int i = 0; i < w->n; i++)
        if (watched(w, pids, i) && !(w->r[i].have && w->r[i].st.waiting))
            return i;
    return 0;
}

int run_watchdog_check(struct run_watchdog *w, const pid_t *pids, int *hung, char *why, size_t size)
{
    uint64_t now = maya_mono_ns();
    if (!w || w->n < 2 || now - w->last_look_ns < 250000000ull)
        return 0;
    w->last_look_ns = now;
    int waiting = 0, idle = 0, live = 0;
    for (int i = 0; i < w->n; i++)
        if (pids[i] != 0)
            look(w, i, now);
    for (int i = 0; i < w->n; i++) {
        if (!watched(w, pids, i))
            continue;
        live++;
        struct rank_watch *r = &w->r[i];
        if (now - r->changed_ns < w->hang_ns)
            return 0; /* someone moved within the hang time: not hung (yet) */
        if (pids[i] > 0 && !(r->have && r->st.waiting)) {
            uint64_t ticks = group_cpu_ticks(pids[i]);
            if (ticks != r->cpu_ticks) {
                r->cpu_ticks = ticks;
                r->changed_ns = now; /* busy on the CPU: working */
                return 0;
            }
        }
        if (r->have && r->st.waiting)
            waiting++;
        else
            idle++;
    }
    if (!waiting || !live)
        return 0;
    /* hung: name the idle ranks, then what the others wait in */
    size_t used = 0;
    double secs = w->hang_ns / 1e9;
    why[0] = 0;
    int named = 0;
    for (int i = 0; i < w->n && idle; i++) {
        const struct rank_watch *r = &w->r[i];
        if (!watched(w, pids, i) || (r->have && r->st.waiting))
            continue;
        hung[i] = 1;
        if (named++ < 4)
            used += (size_t)snprintf(why + used, used < size ? size - used : 0, "%srank %d", named > 1 ? ", " : "", i);
    }
    if (idle)
        used += (size_t)snprintf(why + used, used < size ? size - used : 0, "%s hung%s: no call for %.0f s while ",
                                 named > 4 ? ", ..." : "", idle == 1 ? proc_state(pids[rank_of_first_idle(w, pids)]) : "",
                                 secs);
    else
        used += (size_t)snprintf(why + used, used < size ? size - used : 0,
                                 "deadlock: every rank has waited %.0f s in a collective the others do not make: ", secs);
    int shown = 0;
    for (int i = 0; i < w->n && used < size; i++) {
        const struct rank_watch *r = &w->r[i];
        if (!watched(w, pids, i) || !r->have || !r->st.waiting)
            continue;
        if (shown++ >= 4) {
            used += (size_t)snprintf(why + used, size - used, ", ...");
            break;
        }
        char what[160];
        describe_wait(w, &r->st, pids, what, sizeof what);
        used += (size_t)snprintf(why + used, used < size ? size - used : 0, "%srank %d waits in %s",
                                 shown > 1 ? "; " : "", i, what);
        if (!idle)
            hung[i] = 1;
    }
    return 1;
}
