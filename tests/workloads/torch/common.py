"""What the PyTorch workloads share: process-group set-up from the torchrun
environment (which `maya run` gives each rank), a small GPT model, the
training loop with CUDA-event timings, and the one result line each script
prints for the tests to read.

The scripts are ordinary PyTorch programs: they run the same on real GPUs
(torchrun --nproc-per-node=N script.py) as under maya.
"""
import json
import math
import os
import resource
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def setup(backend="nccl"):
    """Pick this rank's GPU and, with more than one rank, join the process
    group. Returns (rank, world_size, device)."""
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group(backend, device_id=device)
    return rank, world, device


def teardown():
    if dist.is_initialized():
        dist.destroy_process_group()
    # PyTorch's autograd device thread drops its last reference to a finished
    # graph task (and a Python object with it) just after backward() returns.
    # If that thread has not run by the time the interpreter finalizes, the
    # process aborts ("terminate called without an active exception"): a
    # PyTorch race at exit, rare on a GPU machine but common when several
    # emulated ranks share a few cores. Give it time before exiting.
    time.sleep(0.5)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.head_dim = dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def attention(self, x):
        b, t, _ = x.shape
        # Heads from the width q/k/v have here, so that a tensor-parallel
        # shard (a part of the heads per rank) works unchanged.
        q, k, v = (lin(x).reshape(b, t, -1, self.head_dim).transpose(1, 2) for lin in (self.q, self.k, self.v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, -1))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=1024, dim=256, heads=4, layers=2, seq=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def gpt_config():
    """Model size from the environment (MAYA_GPT=vocab,dim,heads,layers,seq),
    small by default so that the tests stay quick."""
    spec = os.environ.get("MAYA_GPT", "1024,256,4,2,128")
    vocab, dim, heads, layers, seq = (int(v) for v in spec.split(","))
    return dict(vocab=vocab, dim=dim, heads=heads, layers=layers, seq=seq)


def train(model, make_batch, loss_fn, optimizer, steps, rank, autocast_dtype=None):
    """Run `steps` training steps; return per-step GPU times (ms, from CUDA
    events) and host times (s). The process's CPU seconds per step (all its
    threads) are kept in train.cpu_s."""
    gpu_ms, host_s = [], []
    train.cpu_s = []
    for step in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x, y = make_batch(step)
        with torch.autocast("cuda", dtype=autocast_dtype, enabled=autocast_dtype is not None):
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        end.record()
        end.synchronize()
        gpu_ms.append(start.elapsed_time(end))
        host_s.append(time.perf_counter() - t0)
        train.cpu_s.append(time.process_time() - c0)
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f} gpu {gpu_ms[-1]:.3f} ms host {host_s[-1]:.3f} s",
                  flush=True)
    return gpu_ms, host_s


def token_batches(cfg, batch, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)

    def make(step):
        idx = torch.randint(0, cfg["vocab"], (batch, cfg["seq"] + 1), generator=g)
        idx = idx.to(device, non_blocking=True)
        return idx[:, :-1], idx[:, 1:]

    return make


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def report(name, rank, world, gpu_ms, host_s, **extra):
    """Print the result line the tests read: MAYA_RESULT {json}."""
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    res = dict(workload=name, rank=rank, world_size=world, steps=len(gpu_ms), gpu_ms=gpu_ms, host_s=host_s,
               max_memory_allocated=torch.cuda.max_memory_allocated(),
               max_memory_reserved=torch.cuda.max_memory_reserved(),
               mem_free=free, mem_total=total, device=torch.cuda.get_device_name(),
               cpu_s=getattr(train, "cpu_s", []),
               max_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra)
    assert all(math.isfinite(v) and v >= 0 for v in gpu_ms), gpu_ms
    print("MAYA_RESULT " + json.dumps(res), flush=True)
