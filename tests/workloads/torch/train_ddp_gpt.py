"""A GPT-style model trained with DistributedDataParallel (NCCL backend),
bf16 autocast and a fused AdamW.

    torchrun --nproc-per-node=4 train_ddp_gpt.py [STEPS]
    maya run -g h100x4 -- python train_ddp_gpt.py [STEPS]
"""
import sys

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import common


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rank, world, device = common.setup()
    torch.manual_seed(0)
    cfg = common.gpt_config()
    with device:  # parameters made on the GPU: a model too large for it fails there
        model = common.GPT(**cfg)
    if world > 1:
        model = DDP(model, device_ids=[device.index])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    batches = common.token_batches(cfg, batch=8, device=device, seed=rank)
    gpu_ms, host_s = common.train(model, batches, common.lm_loss, opt, steps, rank, torch.bfloat16)
    common.report("ddp_gpt", rank, world, gpu_ms, host_s,
                  params=sum(p.numel() for p in model.parameters()))
    common.teardown()


if __name__ == "__main__":
    main()
