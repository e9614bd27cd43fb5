/* Is there a GPU for maya profile? The real CUDA runtime is asked in a child
 * process, so that maya itself never holds a CUDA context (GPU memory)
 * while the workload runs, and a driver that hangs cannot hang maya. */
#define _GNU_SOURCE
#include "profile.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "maya/common.h"

#define PROBE_TIMEOUT_MS 60000

/* In the child: fill p from the runtime at path. */
static void ask(const char *path, struct profile_probe *p)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(p->why, sizeof p->why, "cannot load the CUDA runtime %.3000s: %.1000s", path, dlerror());
        return;
    }
    cudaError_t (*count)(int *) = (cudaError_t (*)(int *))dlsym(h, "cudaGetDeviceCount");
    const char *(*errstr)(cudaError_t) = (const char *(*)(cudaError_t))dlsym(h, "cudaGetErrorString");
    /* CUDA 12 headers name it _v2; CUDA 13 has the plain name only */
    void *pf = dlsym(h, "cudaGetDeviceProperties");
    if (!pf)
        pf = dlsym(h, "cudaGetDeviceProperties_v2");
    cudaError_t (*props)(struct cudaDeviceProp *, int) = (cudaError_t (*)(struct cudaDeviceProp *, int))pf;
    Dl_info info;
    if (count && dladdr((void *)count, &info) && info.dli_fname)
        snprintf(p->lib, sizeof p->lib, "%s", info.dli_fname);
    else
        snprintf(p->lib, sizeof p->lib, "%s", path);
    if (!count || !props) {
        snprintf(p->why, sizeof p->why, "%.4000s is not a CUDA runtime (it lacks cudaGetDeviceCount or "
                 "cudaGetDeviceProperties)", p->lib);
        return;
    }
    int n = 0;
    cudaError_t e = count(&n);
    if (e != cudaSuccess || n <= 0) {
        snprintf(p->why, sizeof p->why, "cudaGetDeviceCount of %.4000s returned %d (%s) with %d devices", p->lib,
                 (int)e, errstr ? errstr(e) : "?", e == cudaSuccess ? n : 0);
        return;
    }
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    if ((e = props(&prop, 0)) != cudaSuccess) {
        snprintf(p->why, sizeof p->why, "cudaGetDeviceProperties of %.4000s returned %d (%s)", p->lib, (int)e,
                 errstr ? errstr(e) : "?");
        return;
    }
    p->count = n;
    snprintf(p->name, sizeof p->name, "%s", prop.name);
    p->total_mem = prop.totalGlobalMem;
    p->major = prop.major;
    p->minor = prop.minor;
}

int profile_probe(const char *real_libdir, struct profile_probe *out)
{
    char path[PATH_MAX];
    memset(out, 0, sizeof *out);
    if (real_libdir && *real_libdir)
        snprintf(path, sizeof path, "%s/libcudart.so.13", real_libdir);
    else
        snprintf(path, sizeof path, "libcudart.so.13");
    int fd[2];
    if (pipe(fd) < 0)
        return maya_error("cannot make a pipe for the GPU probe: %m");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return maya_error("cannot start the GPU probe: %m");
    }
    if (pid == 0) {
        close(fd[0]);
        struct profile_probe p;
        memset(&p, 0, sizeof p);
        ask(path, &p);
        ssize_t w = write(fd[1], &p, sizeof p);
        _exit(w == (ssize_t)sizeof p ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    int rc = 0;
    uint64_t deadline = maya_mono_ns() + (uint64_t)PROBE_TIMEOUT_MS * 1000000u;
    while (got < sizeof *out) {
        struct pollfd pf = { fd[0], POLLIN, 0 };
        int left = (int)((deadline - MAYA_MIN(deadline, maya_mono_ns())) / 1000000u);
        int pr = poll(&pf, 1, left);
        if (pr == 0) {
            kill(pid, SIGKILL);
            rc = maya_error("the GPU probe (cudaGetDeviceCount with %s) did not answer within %d s", path,
                            PROBE_TIMEOUT_MS / 1000);
            break;
        }
        if (pr < 0 && errno == EINTR)
            continue;
        ssize_t n = pr < 0 ? -1 : read(fd[0], (char *)out + got, sizeof *out - got);
        if (n <= 0) {
            rc = maya_error("the GPU probe (cudaGetDeviceCount with %s) ended without an answer "
                            "(it crashed in the CUDA runtime?)", path);
            break;
        }
        got += (size_t)n;
    }
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return rc;
}
