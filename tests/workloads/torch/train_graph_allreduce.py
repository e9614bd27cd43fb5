"""A whole training step captured into a CUDA graph (torch.cuda.CUDAGraph),
communication included: an all-gather of a flat buffer's shards, an MLP's
forward, backward, one dist.all_reduce per parameter's gradient (no DDP),
a reduce-scatter of the flat buffer and an SGD step, captured
once after a warm-up on a side stream (as PyTorch's CUDA-graph notes
describe) and replayed STEPS times with new inputs copied in.

    torchrun --nproc-per-node=2 train_graph_allreduce.py [STEPS]
    maya run -g h100x2 -- python train_graph_allreduce.py [STEPS]
"""
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import common


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rank, world, device = common.setup()
    torch.manual_seed(0)
    dim = 512
    with device:
        model = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=1e-3)
    x = torch.randn(64, dim, device=device)
    y = torch.randn(64, dim, device=device)
    # an FSDP-style pair on a flat buffer too: all-gather of shards, reduce-scatter of the whole
    shard = torch.randn(dim * dim, device=device)
    full = torch.empty(world * dim * dim, device=device)
    rs_out = torch.empty(dim * dim, device=device)

    def step():
        dist.all_gather_into_tensor(full, shard)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        for p in params:
            dist.all_reduce(p.grad)
        dist.reduce_scatter_tensor(rs_out, full)
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=False)
            step()
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=False)
    with torch.cuda.graph(graph):
        step()

    gpu_ms, host_s = [], []
    for i in range(steps):
        t0 = time.perf_counter()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        x.copy_(torch.randn(64, dim, device=device))
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        gpu_ms.append(start.elapsed_time(end))
        host_s.append(time.perf_counter() - t0)
    common.report("graph_allreduce", rank, world, gpu_ms, host_s, params=len(params))
    common.teardown()


if __name__ == "__main__":
    main()
