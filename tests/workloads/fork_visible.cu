// Two facts about a process's view of the emulated node:
//   fork_visible list    prints each visible device's ordinal, PCI bus and UUID
//                        (so a test can select devices by UUID in CUDA_VISIBLE_DEVICES)
//   fork_visible fork    starts CUDA, forks; the child calls CUDA (which must fail,
//                        as after fork on a GPU) including a call the emulator does
//                        not support, then exits; the parent goes on using CUDA.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

static int list(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("count %d %s\n", n, cudaGetErrorName(e));
    for (int i = 0; i < n; i++) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess)
            return 1;
        const unsigned char *u = (const unsigned char *)p.uuid.bytes;
        printf("device %d bus %d uuid GPU-", i, p.pciBusID);
        for (int b = 0; b < 16; b++)
            printf("%02x%s", u[b], b == 3 || b == 5 || b == 7 || b == 9 ? "-" : "");
        printf("\n");
    }
    return 0;
}

static int fork_child(void)
{
    void *p;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        int n = -1;
        cudaError_t e = cudaGetDeviceCount(&n);
        void *q;
        cudaError_t m = cudaMalloc(&q, 4096);
        // not supported by the emulator: must not reach the parent's trace,
        // even when there are enough of them to fill several trace chunks
        cudaError_t u = cudaSuccess;
        for (int i = 0; i < 300000; i++)
            u = cudaGraphicsUnregisterResource(NULL);
        printf("child: cudaGetDeviceCount=%s cudaMalloc=%s unsupported=%s\n", cudaGetErrorName(e),
               cudaGetErrorName(m), cudaGetErrorName(u));
        fflush(stdout);
        _exit(e == cudaErrorInitializationError && m == cudaErrorInitializationError ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (cudaFree(p) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "list"))
        return list();
    if (argc == 2 && !strcmp(argv[1], "fork"))
        return fork_child();
    fprintf(stderr, "usage: fork_visible list|fork\n");
    return 2;
}
