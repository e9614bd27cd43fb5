"""PyTorch's scaled_dot_product_attention with one backend (its others
switched off), forward and backward, with and without a causal mask, bf16:
    attention_ops.py [BACKEND [B H S D]]
BACKEND flash (default: 1 x 8 heads x 2048 tokens x 128) or efficient (the
memory-efficient kernels SDPA runs with an attention mask or fp32 inputs).
The kernels' work depends on the mask and on the GPU's code (sm_80, sm_90),
so maya's tests run it on both.

PyTorch's autograd device thread drops its last reference to a finished
graph task (a Python object with it) just after backward() returns; if
the interpreter is already finalizing by then, the process aborts
("terminate called without an active exception"), on any GPU, more often
on a loaded machine. As libs_ops.py does, it gives the thread a moment
before exiting. It chooses the backend with torch.backends.cuda's
switches rather than the sdpa_kernel context, with which the abort was
seen more often.

An ordinary PyTorch program: it runs the same on a real GPU."""
import sys
import time

import torch
import torch.nn.functional as F

backend = sys.argv[1] if len(sys.argv) > 1 else "flash"
if backend not in ("flash", "efficient"):
    sys.exit("attention_ops.py: backend %r: expected flash or efficient" % backend)
b, h, s, d = (int(v) for v in sys.argv[2:6]) if len(sys.argv) >= 6 else (1, 8, 2048, 128)
torch.backends.cuda.enable_cudnn_sdp(False)
torch.backends.cuda.enable_math_sdp(False)
torch.backends.cuda.enable_flash_sdp(backend == "flash")
torch.backends.cuda.enable_mem_efficient_sdp(backend == "efficient")
q, k, v = (torch.empty(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
for causal in (True, False):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    o.backward(torch.empty_like(o))
torch.cuda.synchronize()
time.sleep(0.2)
print("attention_ops: ok")
