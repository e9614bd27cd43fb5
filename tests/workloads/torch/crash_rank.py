"""Data-parallel steps (a matmul and an all-reduce each) in which rank 1
raises an exception at step 5, for tests/torch/test_crash.sh: the report
must be headlined by the exception, and simulate the steps before it."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.ones(1024, device="cuda")
w = torch.ones(1024, 1024, device="cuda")
for step in range(20):
    y = x @ w
    dist.all_reduce(y)
    if rank == 1 and step == 5:
        raise ValueError("bad batch at step 5")
print(y.sum().item())
dist.destroy_process_group()
