"""torch.compile of a small MLP block (layer norm, GELU, residual): Inductor
generates Triton kernels, compiled by Triton's bundled ptxas and launched
through the driver API; matrix multiplies stay cuBLAS calls.

    python train_compiled.py [STEPS]
    maya run -g h100x1 -- python train_compiled.py [STEPS]
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import common


class MLP(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.out(F.gelu(self.fc(self.ln(x))))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rank, world, device = common.setup()
    torch.manual_seed(0)
    model = nn.Sequential(MLP(), MLP()).to(device)
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    g = torch.Generator(device="cpu").manual_seed(rank)

    def batch(step):
        x = torch.randn(64, 256, generator=g).to(device)
        return x, torch.zeros_like(x)

    gpu_ms, host_s = common.train(compiled, batch, F.mse_loss, opt, steps, rank)
    common.report("compiled", rank, world, gpu_ms, host_s)
    common.teardown()


if __name__ == "__main__":
    main()
