"""The GPT-style model of train_ddp_gpt.py trained with FSDP2 (fully_shard
on every block and the root), bf16 parameters for compute with fp32
gradient reduction, and a fused AdamW on the sharded parameters.

    torchrun --nproc-per-node=4 train_fsdp_gpt.py [STEPS]
    maya run -g h100x4 -- python train_fsdp_gpt.py [STEPS]
"""
import sys

import torch
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

import common


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rank, world, device = common.setup()
    torch.manual_seed(0)
    cfg = common.gpt_config()
    with device:  # parameters made on the GPU: a model too large for it fails there
        model = common.GPT(**cfg)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for blk in model.blocks:
        fully_shard(blk, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    batches = common.token_batches(cfg, batch=8, device=device, seed=rank)
    gpu_ms, host_s = common.train(model, batches, common.lm_loss, opt, steps, rank)
    common.report("fsdp_gpt", rank, world, gpu_ms, host_s)
    common.teardown()


if __name__ == "__main__":
    main()
