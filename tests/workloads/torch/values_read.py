# Values a PyTorch program reads back (docs/values.md): a tensor copied in
# and back is right; the max of a small tensor and a torch.full are kernels
# (not computed), so what .item() gives is not what a GPU gives and the
# report counts those reads; a rank-id all-gather of ids copied in from the
# host is right (small collectives of real bytes are real), one of ids made
# by torch.full is not. Prints one line per check: "NAME right|differs".
import os
import torch
import torch.distributed as dist

rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
t = torch.tensor([3, 7, 5], device="cuda")
print("roundtrip", "right" if t.cpu().tolist() == [3, 7, 5] else "differs")
print("max", "right" if t.max().item() == 7 else "differs")
print("full", "right" if torch.full((1,), rank + 2, device="cuda").item() == rank + 2 else "differs")
if world > 1:
    dist.init_process_group("nccl")
    ids = torch.tensor([rank], device="cuda")  # copied in: real
    out = [torch.zeros(1, dtype=ids.dtype, device="cuda") for _ in range(world)]
    dist.all_gather(out, ids)
    print("gather_copied", "right" if [int(o.cpu()) for o in out] == list(range(world)) else "differs")
    ids = torch.full((1,), rank, device="cuda")  # a fill kernel: not real
    dist.all_gather(out, ids)
    print("gather_filled", "right" if [int(o.cpu()) for o in out] == list(range(world)) else "differs")
    dist.destroy_process_group()
