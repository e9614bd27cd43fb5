# Values a PyTorch program reads back (docs/values.md, docs/kernel-exec.md):
# a tensor copied in and back is right; small kernels (a max, of ints and
# of doubles, a sum of bf16 and of f16, round and floor, a torch.full, torch.unique) are computed from their SASS when
# nvdisasm is there, so what .item() gives is what a GPU gives, and so
# does torch.sort of a small tensor (its bitonic sort); a kernel the executor does not cover is not
# computed and the report counts the read.
# On 2 ranks: rank-id all-gathers of copied and of filled ids, and, with
# --objects, all_gather_object, broadcast_object_list,
# scatter_object_list and send_object_list / recv_object_list between ranks
# 0 and 1 (each sizes its buffers with a .item() of a kernel's result). Prints one line per check: "NAME right|differs".
import os
import sys
import torch
import torch.distributed as dist

rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
objects = "--objects" in sys.argv
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))


def check(name, ok):
    print(name, "right" if ok else "differs", flush=True)


t = torch.tensor([3, 7, 5], device="cuda")
check("roundtrip", t.cpu().tolist() == [3, 7, 5])
check("max", t.max().item() == 7)
check("max_f64", torch.tensor([1.5, -2.0, 3.25], device="cuda", dtype=torch.float64).max().item() == 3.25)
check("sum_bf16", torch.tensor([1.5, -2.0, 3.25], device="cuda", dtype=torch.bfloat16).sum().item() == 2.75)
check("sum_f16", torch.tensor([1.5, -2.0, 3.25], device="cuda", dtype=torch.float16).sum().item() == 2.75)
# an int64 to float64 copy (I2F.F64.S64: 2^53 + 1 ties to 2^53) and a
# float to float16 copy (65520 ties to inf, 1 + 2^-11 to 1)
check("i64_to_f64", torch.tensor([2**53 + 1, -3], device="cuda").double().tolist() == [2.0**53, -3.0])
check("f32_to_f16", torch.tensor([65520.0, 1 + 2**-11], device="cuda").half().tolist() == [float("inf"), 1.0])
# rounding to integral values (FRND, FRND.FLOOR, FRND.F64): ties to even
x = torch.tensor([2.5, -0.5, 1.7, -2.5], device="cuda")
check("round", torch.round(x).tolist() == [2.0, -0.0, 2.0, -2.0])
check("floor", torch.floor(x).tolist() == [2.0, -1.0, 1.0, -3.0])
check("round_f64", torch.tensor([2.5, -1.5], device="cuda", dtype=torch.float64).round().tolist() == [2.0, -2.0])
check("full", torch.full((1,), rank + 2, device="cuda").item() == rank + 2)
check("unique", torch.unique(torch.tensor([3, 1, 3, 2], device="cuda")).tolist() == [1, 2, 3])
check("sort", torch.sort(torch.tensor([3, 1, 2], device="cuda")).values.tolist() == [1, 2, 3])
if world > 1:
    dist.init_process_group("nccl")
    ids = torch.tensor([rank], device="cuda")  # copied in: real
    out = [torch.zeros(1, dtype=ids.dtype, device="cuda") for _ in range(world)]
    dist.all_gather(out, ids)
    check("gather_copied", [int(o.cpu()) for o in out] == list(range(world)))
    ids = torch.full((1,), rank, device="cuda")  # a fill kernel
    dist.all_gather(out, ids)
    check("gather_filled", [int(o.cpu()) for o in out] == list(range(world)))
    if objects:
        got = [None] * world
        # sizes differ by rank: the buffer is sized by the max that a compare kernel picks
        dist.all_gather_object(got, {"rank": rank, "name": "r" * (1 + 40 * rank)})
        check("all_gather_object", got == [{"rank": r, "name": "r" * (1 + 40 * r)} for r in range(world)])
        obj = [{"step": 12, "lr": 0.5}, "cfg"] if rank == 0 else [None, None]
        dist.broadcast_object_list(obj, src=0)
        check("broadcast_object_list", obj == [{"step": 12, "lr": 0.5}, "cfg"])
        part = [None]
        dist.scatter_object_list(part, [["a" * (r + 1)] for r in range(world)] if rank == 0 else None, src=0)
        check("scatter_object_list", part == [["a" * (rank + 1)]])
        # point to point, as torch's pipeline stages infer their shapes: the
        # receiver sizes its buffer with a sum of the sizes it received
        peer = 1 - rank if rank < 2 else rank
        if rank < 2:
            box = [{"shape": [4, 8 * (rank + 1)], "from": rank}, "meta"]
            got = [None, None]
            if rank == 0:
                dist.send_object_list(box, dst=peer)
                dist.recv_object_list(got, src=peer)
            else:
                dist.recv_object_list(got, src=peer)
                dist.send_object_list(box, dst=peer)
            check("send_recv_object_list", got == [{"shape": [4, 8 * (peer + 1)], "from": peer}, "meta"])
    dist.destroy_process_group()
