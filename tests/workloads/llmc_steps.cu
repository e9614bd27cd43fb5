// llmc_steps: a training loop shaped as llm.c's train_gpt2.cu drives one:
// each step inside an NVTX range named "Train step N" (llm.c's NvtxRange,
// header-only NVTX v3, which finds its implementation through
// NVTX_INJECTION64_PATH), with nested "forward" and "backward" ranges; an
// upload of a token table whose size differs a little from step to step
// (llm.c's dataloader hands batches of varying length to the copy); a
// forward and a backward of a few kernels, an optimizer update, and the
// loss copied back. Before the loop, a warm-up launches one kernel many
// times (as a benchmark or autotuning would).
//
//   llmc_steps STEPS [graph]
//
// graph: the forward, backward and update are captured once into a CUDA
// graph, and each step launches it (the upload stays outside).
#include <cstring>
#include <string>

#include <nvtx3/nvToolsExt.h>

#include "rt_check.h"

__global__ void embed(const int *tok, float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = (float)tok[i % 64];
}

__global__ void layer(const float *in, float *out, int n, float w)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * w + 1.0f;
}

__global__ void loss(const float *x, float *l, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        l[0] = x[0] + (float)n;
}

__global__ void adamw(float *p, const float *g, int n, float lr)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] -= lr * g[i];
}

struct net {
    int n;
    int *tok;
    float *x, *y, *g, *p, *l;
};

static void forward(const net &m, cudaStream_t s)
{
    int blocks = (m.n + 255) / 256;
    embed<<<blocks, 256, 0, s>>>(m.tok, m.x, m.n);
    for (int k = 0; k < 4; k++)
        layer<<<blocks, 256, 0, s>>>(k % 2 ? m.y : m.x, k % 2 ? m.x : m.y, m.n, 0.5f);
    loss<<<1, 32, 0, s>>>(m.x, m.l, m.n);
}

static void backward(const net &m, cudaStream_t s)
{
    int blocks = (m.n + 255) / 256;
    for (int k = 0; k < 4; k++)
        layer<<<blocks, 256, 0, s>>>(k % 2 ? m.g : m.x, k % 2 ? m.x : m.g, m.n, 2.0f);
}

static void update(const net &m, cudaStream_t s)
{
    adamw<<<(m.n + 255) / 256, 256, 0, s>>>(m.p, m.g, m.n, 1e-3f);
}

int main(int argc, char **argv)
{
    if (argc < 2 || atoi(argv[1]) < 1 || (argc > 2 && strcmp(argv[2], "graph"))) {
        fprintf(stderr, "usage: llmc_steps STEPS [graph]\n");
        return 2;
    }
    int steps = atoi(argv[1]), use_graph = argc > 2;
    net m;
    m.n = 1 << 20;
    const int max_tokens = 70000;
    CHECK(cudaMalloc(&m.tok, max_tokens * sizeof(int)));
    CHECK(cudaMalloc(&m.x, m.n * sizeof(float)));
    CHECK(cudaMalloc(&m.y, m.n * sizeof(float)));
    CHECK(cudaMalloc(&m.g, m.n * sizeof(float)));
    CHECK(cudaMalloc(&m.p, m.n * sizeof(float)));
    CHECK(cudaMalloc(&m.l, sizeof(float)));
    static int tokens[max_tokens];
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));

    // warm-up: one kernel, many times
    for (int i = 0; i < 200; i++)
        layer<<<(m.n + 255) / 256, 256, 0, s>>>(m.x, m.y, m.n, 1.0f);
    CHECK(cudaStreamSynchronize(s));

    cudaGraphExec_t exec = nullptr;
    if (use_graph) {
        cudaGraph_t g;
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        forward(m, s);
        backward(m, s);
        update(m, s);
        CHECK(cudaStreamEndCapture(s, &g));
        CHECK(cudaGraphInstantiate(&exec, g, 0));
    }
    for (int step = 0; step < steps; step++) {
        std::string name = "Train step " + std::to_string(step + 1);
        nvtxRangePushA(name.c_str());
        // a table of slightly different length each step
        int ntok = 65536 + (step * 37) % 512;
        for (int i = 0; i < ntok; i++)
            tokens[i] = (i * 31 + step) % 50257;
        CHECK(cudaMemcpyAsync(m.tok, tokens, ntok * sizeof(int), cudaMemcpyHostToDevice, s));
        if (use_graph) {
            CHECK(cudaGraphLaunch(exec, s));
        } else {
            nvtxRangePushA("forward");
            forward(m, s);
            nvtxRangePop();
            nvtxRangePushA("backward");
            backward(m, s);
            nvtxRangePop();
            update(m, s);
        }
        float l;
        CHECK(cudaMemcpyAsync(&l, m.l, sizeof l, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        nvtxRangePop();
        printf("step %d: %d tokens\n", step + 1, ntok);
    }
    CHECK(cudaGetLastError());
    return 0;
}
