"""The GPT-style model of train_ddp_gpt.py with tensor parallelism
(torch.distributed.tensor.parallel): attention q/k/v and the first MLP layer
column-wise, the attention projection and second MLP layer row-wise, so each
block does one all-reduce forward and one backward per sublayer.

    torchrun --nproc-per-node=2 train_tp_gpt.py [STEPS]
    maya run -g h100x2 -- python train_tp_gpt.py [STEPS]
"""
import sys

import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import common


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rank, world, device = common.setup()
    mesh = init_device_mesh("cuda", (world,))
    torch.manual_seed(0)
    cfg = common.gpt_config()
    with device:  # parameters made on the GPU: a model too large for it fails there
        model = common.GPT(**cfg)
    plan = {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(),
            "proj": RowwiseParallel(), "fc": ColwiseParallel(), "out": RowwiseParallel()}
    for blk in model.blocks:
        parallelize_module(blk, mesh, plan)
    # Sharded (DTensor) and replicated (plain) parameters in separate groups:
    # the multi-tensor optimizer steps each group as one batch of one kind.
    sharded = [p for p in model.parameters() if isinstance(p, DTensor)]
    plain = [p for p in model.parameters() if not isinstance(p, DTensor)]
    opt = torch.optim.AdamW([{"params": sharded}, {"params": plain}], lr=3e-4, foreach=True)
    # Every rank trains on the same batch, as tensor parallelism requires.
    batches = common.token_batches(cfg, batch=8, device=device, seed=0)
    gpu_ms, host_s = common.train(model, batches, common.lm_loss, opt, steps, rank, torch.bfloat16)
    common.report("tp_gpt", rank, world, gpu_ms, host_s)
    common.teardown()


if __name__ == "__main__":
    main()
