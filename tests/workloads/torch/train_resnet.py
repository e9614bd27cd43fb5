"""A small ResNet (basic blocks, batch norm) trained with SGD on random
images; on more than one rank with DistributedDataParallel (NCCL).
Convolutions go to cuDNN.

    python train_resnet.py [STEPS]                 one GPU
    torchrun --nproc-per-node=2 train_resnet.py    two GPUs
    maya run -g h100x2 -- python train_resnet.py [STEPS]
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import common


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), classes=100):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            layers += [BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w, 1)]
            cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rank, world, device = common.setup()
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    model = ResNet().to(device)
    if world > 1:
        model = DDP(model, device_ids=[device.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(rank)

    def batch(step):
        x = torch.randn(16, 3, 64, 64, generator=g).to(device, non_blocking=True)
        y = torch.randint(0, 100, (16,), generator=g).to(device, non_blocking=True)
        return x, y

    gpu_ms, host_s = common.train(model, batch, F.cross_entropy, opt, steps, rank)
    common.report("resnet", rank, world, gpu_ms, host_s, cudnn=torch.backends.cudnn.version())
    common.teardown()


if __name__ == "__main__":
    main()
