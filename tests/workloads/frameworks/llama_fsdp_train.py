"""Llama 3.1 8B trained with FSDP2 as torchtitan trained it for its published
H100 throughput (docs/performance.md of torchtitan at the end of 2024, table 1:
"1D Parallelism (FSDP). Llama 3.1 8B model. 8 GPUs. Local batch size 2 ...
Selective activation checkpointing", eager): plain PyTorch, no torchtitan.

The model as torchtitan's llama3 of that time: dim 4096, 32 layers, 32 query
and 8 key/value heads, SwiGLU feed-forward of 14336, vocabulary 128256,
RMSNorm computed in fp32, rotary embeddings as complex products, causal
scaled_dot_product_attention, an untied output layer. Its training as
torchtitan's defaults for it: fully_shard on every block (the last one not
resharded after the forward) and on the root, bf16 parameters with fp32
gradient reduction; per-op selective activation checkpointing (every block
saves the outputs of its attention and of every other matrix multiply and
recomputes the rest in the backward); the cross-entropy on fp32 logits;
gradient norm clipping at 1; AdamW (foreach) with weight decay 0.1. Random
tokens stand in for the C4 dataset.

    torchrun --nproc-per-node=8 llama_fsdp_train.py [--steps N] [--layers N] [--seq N] [--batch N]
                                                    [--attention flash|cudnn]
    maya run -g h100x8 -- python llama_fsdp_train.py

Prints a MAYA_RESULT line (tests/workloads/torch/common.py's report) from
every rank, with tokens per step and GPU.
"""
import argparse
import os
import sys
from collections import defaultdict
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import common  # noqa: E402


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return y.type_as(x) * self.weight


def rotary(dim, seq, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(seq).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)  # complex64 (seq, dim / 2)


def apply_rotary(x, freqs):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs.view(1, x.shape[1], 1, -1)).flatten(3).type_as(x)


# The attention kernels the published run had: PyTorch's flash attention (its
# SDPA preferred it to cuDNN's on H100 at the end of 2024; --attention cudnn
# for today's choice).
ATTENTION = [SDPBackend.FLASH_ATTENTION]


class Attention(nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False)

    def forward(self, x, freqs):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim)
        k = self.wk(x).view(b, s, self.kv_heads, self.head_dim)
        v = self.wv(x).view(b, s, self.kv_heads, self.head_dim)
        q, k = apply_rotary(q, freqs), apply_rotary(k, freqs)
        rep = self.heads // self.kv_heads  # grouped-query attention: each key/value head serves rep heads
        k = k[:, :, :, None, :].expand(b, s, self.kv_heads, rep, self.head_dim).reshape(b, s, self.heads, -1)
        v = v[:, :, :, None, :].expand(b, s, self.kv_heads, rep, self.head_dim).reshape(b, s, self.heads, -1)
        with sdpa_kernel(ATTENTION):
            y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(dim, heads, kv_heads)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward(dim, hidden)

    def forward(self, x, freqs):
        h = x + self.attention(self.attention_norm(x), freqs)
        return h + self.feed_forward(self.ffn_norm(h))


# Per-op selective checkpointing, torchtitan's policy: keep what is expensive
# to recompute (attention, every other matrix multiply), recompute the rest.
SAVE = {torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_flash_attention.default,
        torch.ops.aten._scaled_dot_product_efficient_attention.default,
        torch.ops.aten._scaled_dot_product_cudnn_attention.default, torch.ops.aten.max.default,
        torch.ops._c10d_functional.reduce_scatter_tensor.default}


def selective_contexts():
    counts = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func == torch.ops.aten.mm.default:
            counts[mode] += 1
        keep = func in SAVE and not (func == torch.ops.aten.mm.default and counts[mode] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class Llama(nn.Module):
    def __init__(self, vocab, dim, layers, heads, kv_heads, hidden, seq):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, heads, kv_heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("freqs", rotary(dim // heads, seq), persistent=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = checkpoint(layer, h, self.freqs, use_reentrant=False, context_fn=selective_contexts,
                           preserve_rng_state=False)
        return self.output(self.norm(h))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=2, help="sequences per rank and step")
    ap.add_argument("--attention", choices=["flash", "cudnn"], default="flash")
    a = ap.parse_args()
    ATTENTION[:] = [SDPBackend.FLASH_ATTENTION if a.attention == "flash" else SDPBackend.CUDNN_ATTENTION]
    rank, world, device = common.setup()
    torch.manual_seed(0)
    vocab, dim = 128256, 4096
    with torch.device("meta"):
        model = Llama(vocab, dim, a.layers, 32, 8, 14336, a.seq)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for i, layer in enumerate(model.layers):
        fully_shard(layer, mp_policy=mp, reshard_after_forward=i < len(model.layers) - 1)
    fully_shard(model, mp_policy=mp)
    model.to_empty(device=device)
    with torch.no_grad():  # values do not matter for the timing; normal_ reads nothing back
        for p in model.parameters():
            p.normal_(0, 0.02)
        model.freqs = rotary(dim // 32, a.seq).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)
    g = torch.Generator().manual_seed(rank)

    def batch(step):
        idx = torch.randint(0, vocab, (a.batch, a.seq + 1), generator=g).pin_memory().to(device, non_blocking=True)
        return idx[:, :-1], idx[:, 1:]

    def loss_fn(logits, labels):
        return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))

    def clip(*_):  # torchtitan clips the gradients' norm before each step
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)

    opt.register_step_pre_hook(clip)

    gpu_ms, host_s = common.train(model, batch, loss_fn, opt, a.steps, rank)
    common.report("llama_fsdp", rank, world, gpu_ms, host_s, tokens_per_step_per_gpu=a.batch * a.seq)
    common.teardown()


if __name__ == "__main__":
    main()
