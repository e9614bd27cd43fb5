"""A small GPT trained with NVTX ranges marking each step, as profiling
with Nsight Systems asks programs to do: torch.cuda.nvtx.range_push("step N")
around a step, with nested "forward" and "backward" ranges. Under maya, the
ranges are in the trace (maya run sets NVTX_INJECTION64_PATH), and
`--iteration-marker "step*"` starts an iteration at each step's range.

    python train_nvtx.py [STEPS]
    maya run -g h100x1 --iteration-marker "step*" -- python train_nvtx.py [STEPS]
"""
import sys

import torch

import common


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rank, world, device = common.setup()
    torch.manual_seed(0)
    cfg = common.gpt_config()
    model = common.GPT(**cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    batches = common.token_batches(cfg, batch=8, device=device, seed=rank)
    for step in range(steps):
        torch.cuda.nvtx.range_push(f"step {step}")
        x, y = batches(step)
        torch.cuda.nvtx.range_push("forward")
        loss = common.lm_loss(model(x), y)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        loss.backward()
        torch.cuda.nvtx.range_pop()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    common.teardown()


if __name__ == "__main__":
    main()
