"""FlashAttention-2's forward or backward alone, timed as FlashAttention-3's
benchmark (hopper/benchmark_attn.py) times them: the FlashAttention-2
kernels PyTorch carries (its flash scaled_dot_product_attention), on
B x S = 16,384 tokens and heads x head_dim = 2,048, random inputs. Each
step, between NVTX range_push("step") and range_pop, runs the pass asked
for. The passes are called as the aten operators SDPA's flash backend and
its autograd formula call, so that no autograd engine thread takes part:
one still releasing a finished backward when the interpreter exits aborts
the process ("terminate called without an active exception").

An ordinary PyTorch program: on a real GPU `python attention_bench.py ...`;
under maya, `maya run -g h100x1 --iteration-marker step -- python attention_bench.py ...`.

  attention_bench.py --seq S [--head-dim D] [--causal] [--pass fwd|bwd] [--dtype fp16|bf16] [--steps N]
"""
import argparse

import torch


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
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype) for _ in range(3))
    flash = torch.ops.aten._scaled_dot_product_flash_attention
    out, lse, cum_q, cum_k, max_q, max_k, seed, offset, _ = flash(q, k, v, 0.0, a.causal)
    grad = torch.randn_like(out)
    for _ in range(a.steps):
        torch.cuda.nvtx.range_push("step")
        if a.which == "fwd":
            flash(q, k, v, 0.0, a.causal)
        else:
            torch.ops.aten._scaled_dot_product_flash_attention_backward(
                grad, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, 0.0, a.causal, seed, offset)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
