"""A torchvision model (resnet18, mobilenet_v3_small, ... built with random
weights: nothing is downloaded) trained with DDP on random images, optionally
under torch.compile.

An ordinary PyTorch program: on real GPUs run it with torchrun; under maya,
`maya run -g h100xN -- python torchvision_ddp.py ...`.

  torchvision_ddp.py MODEL STEPS [--compile] [--image PIXELS] [--batch B]
"""
import argparse
import os
import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F

# torchvision's compiled ops (nms, image decoding) are built for another
# torch; its models do not need them (docs/compatibility.md).
warnings.filterwarnings("ignore", message=".*torchvision.*")
import torchvision  # noqa: E402

import fw_common  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("steps", type=int)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--image", type=int, default=32)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--classes", type=int, default=10)
    a = ap.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    torch.manual_seed(0)
    model = torchvision.models.get_model(a.model, weights=None, num_classes=a.classes).cuda()
    nparams, pbytes, bbytes = fw_common.param_sizes(model)
    fbytes = fw_common.float_buffer_bytes(model)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    step_fn = torch.compile(model) if a.compile else model
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(dist.get_rank())
    for _ in range(a.steps):
        x = torch.randn(a.batch, 3, a.image, a.image, generator=g).cuda()
        y = torch.randint(0, a.classes, (a.batch,), generator=g).cuda()
        F.cross_entropy(step_fn(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    fw_common.result(f"torchvision_{a.model}", rank=dist.get_rank(), world_size=dist.get_world_size(), steps=a.steps,
                     params=nparams, param_bytes=pbytes, buffer_bytes=bbytes, float_buffer_bytes=fbytes, compiled=a.compile,
                     torchvision=torchvision.__version__)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
