"""ResNet-50 v1.5 training as NVIDIA's DeepLearningExamples benchmarks it on one
GPU (PyTorch/Classification/ConvNets, `launch.py --model resnet50 --mode
benchmark_training`): torchvision's resnet50 (v1.5: stride 2 in the 3x3
convolutions, the same network), SGD with momentum 0.875 and weight decay
1/32768, label smoothing 0.1, 224 x 224 images, 1000 classes; mixed
precision (autocast to fp16, a static loss scale of 128, channels-last
tensors) or fp32/tf32. Images come as uint8 from pinned host memory and are
normalised on the GPU on a side stream, as its prefetching loader does; the
data are random (the benchmark's throughput is the GPU's).

An ordinary PyTorch program: on a real GPU `python resnet50_train.py ...`;
under maya, `maya run -g a100x1 -- python resnet50_train.py ...`.

  resnet50_train.py --batch B --steps N [--amp]
"""
import argparse

import torch
import torch.nn.functional as F
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--amp", action="store_true")
    a = ap.parse_args()

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)
    fmt = torch.channels_last if a.amp else torch.contiguous_format
    model = torchvision.models.resnet50(weights=None, num_classes=1000).cuda().to(memory_format=fmt)
    decay = [p for n, p in model.named_parameters() if "bn" not in n and "downsample.1" not in n]
    no_decay = [p for n, p in model.named_parameters() if "bn" in n or "downsample.1" in n]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 1 / 32768}, {"params": no_decay, "weight_decay": 0}],
                          lr=0.256, momentum=0.875)
    scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=1 << 30, enabled=a.amp)
    mean = torch.tensor([0.485 * 255, 0.456 * 255, 0.406 * 255], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229 * 255, 0.224 * 255, 0.225 * 255], device="cuda").view(1, 3, 1, 1)
    images = torch.randint(0, 256, (a.batch, 3, 224, 224), dtype=torch.uint8).pin_memory()
    labels = torch.randint(0, 1000, (a.batch,)).pin_memory()
    side = torch.cuda.Stream()

    def load():
        with torch.cuda.stream(side):
            x = images.cuda(non_blocking=True).float().sub_(mean).div_(std).contiguous(memory_format=fmt)
            y = labels.cuda(non_blocking=True)
        return x, y

    nxt = load()
    for _ in range(a.steps):
        torch.cuda.current_stream().wait_stream(side)
        x, y = nxt
        nxt = load()
        with torch.autocast("cuda", dtype=torch.float16, enabled=a.amp):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
