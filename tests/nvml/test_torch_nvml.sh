#!/usr/bin/env bash
# PyTorch with maya's NVML: the caching allocator with expandable segments
# (which calls NVML without checking that it loaded: without a
# libnvidia-ml.so.1 it crashed) initialises CUDA and allocates; NVML answers
# what torch asks (GPU by PCI bus id, fabric info) and is traced;
# torch.cuda.device_count() counts through NVML without initialising CUDA;
# the UUIDs NVML gives match the device properties; an out-of-memory message
# names the memory this process uses (torch reads it from NVML); torch's
# NVLink detector (symmetric memory) sees the node as it is built.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

# torch_emu NAME [VAR=VALUE...]: run the Python on stdin under the emulator
torch_emu() {
    local name=$1
    shift
    mkdir -p "$TEST_TMP/$name"
    env "$@" RANK=0 LD_LIBRARY_PATH=$MAYA_LIBS MAYA_TRACE_DIR=$TEST_TMP/$name MAYA_QUIET=1 \
        "$PY" - "$TEST_TMP/$name" > "$TEST_TMP/$name.out" 2>&1 || fail "$name failed: $(tail -20 "$TEST_TMP/$name.out")"
}

torch_emu expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True <<'EOF'
import torch
torch.cuda.init()
small = torch.ones(1 << 10, device="cuda")          # small pool (2 MiB segments)
large = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")  # large pool
print("allocated", torch.cuda.memory_allocated(), "small_sum", int(small.sum().item()) if small.numel() <= 65536 else -1)
EOF
expect_grep "^allocated $(((64 << 20) + 4096)) " "$TEST_TMP/expandable.out"
dump "$TEST_TMP/expandable/rank-0.mtrace" > "$TEST_TMP/expandable.dump"
expect_grep "^call .* api=nvmlDeviceGetHandleByPciBusId_v2 result=0$" "$TEST_TMP/expandable.dump"
expect_grep "^call .* api=nvmlDeviceGetGpuFabricInfoV result=0$" "$TEST_TMP/expandable.dump"
expect_no_grep "api=nvml.* UNSUPPORTED" "$TEST_TMP/expandable.dump"

# Before CUDA starts, torch counts GPUs with NVML (so that a fork stays
# possible): the visible ones of the node's 8, and no trace yet.
torch_emu count CUDA_VISIBLE_DEVICES=6,1,3 <<'EOF'
import os, sys, torch
n = torch.cuda.device_count()
print("count", n, "initialized", torch.cuda.is_initialized(), "traces", len(os.listdir(sys.argv[1])))
print("node", torch.cuda._raw_device_count_nvml())
uuids = torch.cuda._raw_device_uuid_nvml()
torch.cuda.init()
for i in range(n):
    u = "GPU-" + str(torch.cuda.get_device_properties(i).uuid)
    print("cuda", i, "nvml", uuids.index(u) if u in uuids else -1)
EOF
o=$TEST_TMP/count.out
expect_grep "^count 3 initialized False traces 0$" "$o"
expect_grep "^node 8$" "$o"
expect_grep "^cuda 0 nvml 6$" "$o"
expect_grep "^cuda 1 nvml 1$" "$o"
expect_grep "^cuda 2 nvml 3$" "$o"

# The out-of-memory message lists this process's use (from NVML).
torch_emu oom <<'EOF'
import torch
a = torch.empty(60 << 30, dtype=torch.uint8, device="cuda")
try:
    torch.empty(40 << 30, dtype=torch.uint8, device="cuda")
except torch.OutOfMemoryError as e:
    print("oom:", str(e))
EOF
expect_grep "^oom: .*this process has 60\.00 GiB memory in use" "$TEST_TMP/oom.out"
dump "$TEST_TMP/oom/rank-0.mtrace" > "$TEST_TMP/oom.dump"
expect_grep "^call .* api=nvmlDeviceGetComputeRunningProcesses result=0$" "$TEST_TMP/oom.dump"

# NVLink connectivity as torch's detector counts it from NVML: 18 links
# between every pair on an NVSwitch node, within bridged pairs only on a
# pairwise one.
for intra in nvswitch pairwise; do
    torch_emu "links-$intra" MAYA_GPUS_PER_NODE=4 MAYA_INTRA_NODE=$intra <<'EOF'
import torch
from torch._C._distributed_c10d import _detect_dma_connectivity
print("matrix", _detect_dma_connectivity(torch._C._autograd.DeviceType.CUDA, "nvlink").matrix)
EOF
done
expect_grep '^matrix \[\[0, 18, 18, 18\], \[18, 0, 18, 18\], \[18, 18, 0, 18\], \[18, 18, 18, 0\]\]$' "$TEST_TMP/links-nvswitch.out"
expect_grep '^matrix \[\[0, 18, 0, 0\], \[18, 0, 0, 0\], \[0, 0, 0, 18\], \[0, 0, 18, 0\]\]$' "$TEST_TMP/links-pairwise.out"
