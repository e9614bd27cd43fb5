"""FlashAttention-2's forward or backward alone, timed as FlashAttention-3's
benchmark (hopper/benchmark_attn.py) times them: PyTorch's flash
scaled_dot_product_attention (the FlashAttention-2 kernels PyTorch carries)
on B x S = 16,384 tokens and heads x head_dim = 2,048, random inputs. Each
step, between NVTX range_push("step") and range_pop, runs the pass asked for:
the forward, or the backward of one saved forward (torch.autograd.grad, so
that no gradient is accumulated into an earlier one).

An ordinary PyTorch program: on a real GPU `python attention_bench.py ...`;
under maya, `maya run -g h100x1 --iteration-marker step -- python attention_bench.py ...`.

  attention_bench.py --seq S [--head-dim D] [--causal] [--pass fwd|bwd] [--dtype fp16|bf16] [--steps N]
"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--pass", dest="which", choices=("fwd", "bwd"), default="fwd")
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    if 16384 % a.seq or 2048 % a.head_dim:
        ap.error("--seq must divide 16384 and --head-dim 2048")

    dtype = torch.float16 if a.dtype == "fp16" else torch.bfloat16
    shape = (16384 // a.seq, 2048 // a.head_dim, a.seq, a.head_dim)
    torch.manual_seed(0)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
        grad = torch.randn_like(o)
        for _ in range(a.steps):
            torch.cuda.nvtx.range_push("step")
            if a.which == "fwd":
                F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
            else:
                torch.autograd.grad(o, (q, k, v), grad, retain_graph=True)
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
