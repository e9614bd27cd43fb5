/* Benchmarks measure a phase in a child process of its own, so that its
 * peak memory (ru_maxrss) and CPU time are the phase's alone. */
#ifndef MAYA_BENCH_CHILD_H
#define MAYA_BENCH_CHILD_H

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "maya/common.h"

/* Run fn(arg, out) in a child; the size bytes it leaves in out come back
 * through a pipe. 0, or -1 with a message naming what. */
static inline int bench_in_child(int (*fn)(void *arg, void *out), void *arg, void *out, size_t size,
                                 const char *what)
{
    int fd[2];
    if (pipe(fd) < 0)
        return maya_error("pipe: %m");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return maya_error("fork: %m");
    if (pid == 0) {
        close(fd[0]);
        memset(out, 0, size);
        if (fn(arg, out) < 0 || write(fd[1], out, size) != (ssize_t)size)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], out, size);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)size || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return maya_error("%s failed", what);
    return 0;
}

#endif
