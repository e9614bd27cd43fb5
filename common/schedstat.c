/* A thread's scheduler statistics (/proc/<pid>/task/<tid>/schedstat, the
 * kernel's CONFIG_SCHED_INFO): three numbers, the thread's time on a CPU in
 * ns (the sum CLOCK_THREAD_CPUTIME_ID reads), its time ready to run but
 * waiting for a CPU in ns (run-queue delay: descheduled, not blocked), and
 * its time slices. The emulator's active host clock (emulator/core/
 * host_clock.c) takes the delay off the wall clock; the launchers ask
 * whether it can be read before they choose that clock.
 * Also a process's /proc/<pid>/stat, read by the launcher and its
 * watchdog (CPU time, state, resident memory). */
#define _GNU_SOURCE
#include "maya/common.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *maya_proc_stat_fields(const char *path, char *buf, size_t size)
{
    FILE *fp = fopen(path, "r");
    size_t n = fp ? fread(buf, 1, size - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] ? p : NULL;
}

int maya_schedstat_read(int fd, uint64_t *run_ns, uint64_t *delay_ns)
{
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *end;
    unsigned long long run = strtoull(buf, &end, 10);
    if (end == buf || *end != ' ')
        return -1;
    const char *p = end + 1;
    unsigned long long delay = strtoull(p, &end, 10);
    if (end == p)
        return -1;
    *run_ns = run;
    *delay_ns = delay;
    return 0;
}

int maya_schedstat_readable(void)
{
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    uint64_t run, delay;
    int ok = maya_schedstat_read(fd, &run, &delay) == 0;
    close(fd);
    return ok;
}
