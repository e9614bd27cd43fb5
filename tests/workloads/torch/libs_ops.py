"""The operations PyTorch hands to cuBLAS, cuBLASLt and cuDNN, once each:
fp16 and bf16 matmuls, a batched matmul, a linear layer with bias, a
convolution with its backward pass, batch norm in training, and causal
attention forced onto cuDNN's backend, forward and backward.

An ordinary PyTorch program: it runs the same on a real GPU."""
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

dev = torch.device("cuda")
torch.manual_seed(0)

a = torch.randn(256, 512, device=dev, dtype=torch.float16)
b = torch.randn(512, 1024, device=dev, dtype=torch.float16)
c = a @ b                                    # cuBLAS GEMM, fp16
a16 = a.to(torch.bfloat16)
d = a16 @ b.to(torch.bfloat16)               # bf16
e = torch.bmm(torch.randn(12, 64, 32, device=dev, dtype=torch.float16),
              torch.randn(12, 32, 48, device=dev, dtype=torch.float16))  # strided batched
lin = torch.nn.Linear(512, 384).to(dev, torch.float16)
y = lin(a)                                   # cuBLASLt with a bias epilogue

x = torch.randn(8, 3, 32, 32, device=dev, requires_grad=True)
conv = torch.nn.Conv2d(3, 16, 3, padding=1).to(dev)
bn = torch.nn.BatchNorm2d(16).to(dev)
z = bn(conv(x))                              # cuDNN convolution, batch norm
z.square().mean().backward()                 # backward data and filter

q = torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
k = torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
v = torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
o.float().sum().backward()
torch.cuda.synchronize()
# PyTorch's autograd device thread drops its last reference to a finished
# graph task (a Python object with it) just after backward() returns; if the
# interpreter is already finalizing by then, the process aborts ("terminate
# called without an active exception"). Give it a moment before exiting.
time.sleep(0.2)
print("libs_ops: ok", tuple(c.shape), tuple(d.shape), tuple(e.shape), tuple(y.shape), tuple(o.shape))
