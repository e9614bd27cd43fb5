// bowl: a workload whose simulated iteration time is a known function of its
// arguments, for maya search's tests. Each argument C:V (numbers) adds
// (V - C)^2 units of work: every iteration sets 1 + sum (V - C)^2 GiB of
// device memory (--unit MiB: MiB) with cudaMemsetAsync and waits for it, so
// the iteration time grows with the squared distance from the centre (C, ...)
// and is smallest there. The buffer is that large too: far enough from the
// centre it does not fit the GPU, cudaMalloc fails and the run is out of
// memory. Centres off the grid of values (6.055:V) keep two configurations
// from costing the same.
//
//   maya run -g h100x1 --estimator analytical -- bowl 3:5 2:2     (5 GiB a step)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: bowl [--iters N] [--unit GiB|MiB] C:V [C:V ...]\n"
               "Sets 1 + sum (V - C)^2 units of device memory per iteration (default 4 iterations\n"
               "of GiB units).\n");
}

static int number(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && (*end == 0 || *end == ':');
}

int main(int argc, char **argv)
{
    double iters = 4, units = 1;
    size_t unit = (size_t)1 << 30;
    int terms = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double c, v;
        if (!strcmp(a, "--iters") && i + 1 < argc && number(argv[i + 1], &iters) && iters >= 1) {
            i++;
        } else if (!strcmp(a, "--unit") && i + 1 < argc && (!strcmp(argv[i + 1], "GiB") ||
                                                             !strcmp(argv[i + 1], "MiB"))) {
            unit = (size_t)1 << (strcmp(argv[++i], "GiB") ? 20 : 30);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (strchr(a, ':') && number(a, &c) && number(strchr(a, ':') + 1, &v)) {
            units += (v - c) * (v - c);
            terms++;
        } else {
            fprintf(stderr, "bowl: \"%s\": expected C:V (numbers), --iters N or --unit GiB|MiB\n", a);
            return 2;
        }
    }
    if (terms == 0) {
        fprintf(stderr, "bowl: expected at least one C:V\n");
        return 2;
    }
    size_t bytes = (size_t)(units * unit);
    void *buf;
    cudaError_t e = cudaMalloc(&buf, bytes);
    if (e != cudaSuccess) {
        fprintf(stderr, "bowl: cudaMalloc(%.3f units of %zu bytes): %s\n", units, unit, cudaGetErrorString(e));
        return 1;
    }
    for (int it = 0; it < (int)iters && e == cudaSuccess; it++) {
        e = cudaMemsetAsync(buf, it & 1, bytes, 0);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
    }
    if (e != cudaSuccess) {
        fprintf(stderr, "bowl: %s\n", cudaGetErrorString(e));
        return 1;
    }
    cudaFree(buf);
    printf("bowl: %.3f units, %d iterations\n", units, (int)iters);
    return 0;
}
