"""PyTorch's flash attention (scaled_dot_product_attention with its other
backends switched off), forward and backward, with and without a causal
mask: 1 x 8 heads x 2048 tokens x 128, bf16.
The kernels' work depends on the mask and on the GPU's code (sm_80, sm_90),
so maya's tests run it on both.

It chooses the backend with torch.backends.cuda's switches, not with
torch.nn.attention.sdpa_kernel: with
that context in a program, PyTorch's autograd thread may still hold a
Python object from it while the interpreter exits, and the process aborts
("terminate called without an active exception"), on any GPU, more often
the slower the machine.

An ordinary PyTorch program: it runs the same on a real GPU."""
import torch
import torch.nn.functional as F

torch.backends.cuda.enable_cudnn_sdp(False)
torch.backends.cuda.enable_mem_efficient_sdp(False)
torch.backends.cuda.enable_math_sdp(False)
b, h, s, d = 1, 8, 2048, 128
q, k, v = (torch.empty(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
for causal in (True, False):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    o.backward(torch.empty_like(o))
torch.cuda.synchronize()
print("attention_ops: ok")
