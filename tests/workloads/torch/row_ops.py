"""Row-wise and elementwise operations at training sizes, once each, on
PyTorch's own kernels (SASS only in its CUDA wheels): LayerNorm over
8192 x 4096 bf16, softmax over 64 x 2048 x 2048 bf16, an elementwise
multiply over 8192 x 4096 bf16, the log-softmax of a cross-entropy over
8192 x 51200 fp32 logits, and column sums of 8192 x 4096 fp32.

An ordinary PyTorch program: it runs the same on a real GPU."""
import torch
import torch.nn.functional as F

dev = torch.device("cuda")
x = torch.empty(8192, 4096, device=dev, dtype=torch.bfloat16)
ln = torch.nn.LayerNorm(4096, device=dev, dtype=torch.bfloat16)
y = ln(x)                                    # 64 MiB read, 64 MiB written
s = torch.empty(64, 2048, 2048, device=dev, dtype=torch.bfloat16)
p = torch.softmax(s, dim=-1)                 # 512 MiB read, 512 MiB written
g = x * 2                                    # 64 MiB read, 64 MiB written
logits = torch.empty(8192, 51200, device=dev, dtype=torch.float32)
t = torch.zeros(8192, device=dev, dtype=torch.long)
loss = F.cross_entropy(logits, t)            # log-softmax: 1600 MiB read, 1600 MiB written
xf = torch.empty(8192, 4096, device=dev, dtype=torch.float32)
cs = xf.sum(dim=0)                           # column sums: 128 MiB read
torch.cuda.synchronize()
print("row_ops: ok")
