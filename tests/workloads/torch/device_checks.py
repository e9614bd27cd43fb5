"""What a program learns about its GPU through PyTorch: device count and
properties, free/total memory, caching-allocator statistics for known
allocations, CUDA-event timings and synchronisation. Prints one
MAYA_RESULT line of JSON for the tests to compare with the emulated GPU.

    python device_checks.py
"""
import json

import torch


def main():
    assert torch.cuda.is_available()
    dev = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(dev)
    free0, total = torch.cuda.mem_get_info(dev)

    # Known allocations: 64 MiB and 3 x 1 MiB (the allocator rounds each to
    # 512 bytes and carves the small ones out of one 2 MiB segment).
    big = torch.empty(64 << 20, dtype=torch.uint8, device=dev)
    small = [torch.empty(1 << 20, dtype=torch.uint8, device=dev) for _ in range(3)]
    torch.cuda.synchronize()
    allocated = torch.cuda.memory_allocated(dev)
    free1, _ = torch.cuda.mem_get_info(dev)
    del small
    big2 = torch.empty(32 << 20, dtype=torch.uint8, device=dev)  # reuses nothing: a new segment
    peak = torch.cuda.max_memory_allocated(dev)

    # A timed matrix multiply: events give the GPU time between them.
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        c = a @ b
    end.record()
    torch.cuda.synchronize()
    mm_ms = start.elapsed_time(end)
    del big, big2, a, b, c

    res = dict(count=torch.cuda.device_count(), name=props.name, total_memory=props.total_memory,
               sms=props.multi_processor_count, major=props.major, minor=props.minor,
               l2=props.L2_cache_size, warp=props.warp_size,
               max_threads_per_sm=props.max_threads_per_multi_processor,
               mem_total=total, free_before=free0, free_after=free1, allocated=allocated,
               max_allocated=peak,
               capability=list(torch.cuda.get_device_capability(dev)), bf16=torch.cuda.is_bf16_supported(),
               mm_ms=mm_ms, mm_tflops=10 * 2 * 4096 ** 3 / (mm_ms * 1e-3) / 1e12 if mm_ms > 0 else 0,
               end_max_allocated=torch.cuda.max_memory_allocated(dev),
               end_max_reserved=torch.cuda.max_memory_reserved(dev))
    print("MAYA_RESULT " + json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
