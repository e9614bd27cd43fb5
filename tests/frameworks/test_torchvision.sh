#!/usr/bin/env bash
# torchvision's ResNet-18 (random weights, nothing downloaded) trains with
# DDP and SGD on 2 emulated H100s under `maya run`, unmodified: nothing is
# unsupported, all 20 convolutions go to cuDNN forward each step, DDP
# all-reduces exactly the parameters' bytes each step and broadcasts
# BatchNorm's running statistics from rank 0 before each forward, and the
# peak memory is what the weights, gradients and momentum need plus torch's
# allocations. ResNet-50 in fp32 on an A100 gets an MFU over TF32's peak.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=2
d=$TEST_TMP/resnet18
torch_run "$d" h100x$world torchvision_ddp.py resnet18 $steps
check_run "$d" $world $steps
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    dump=$d/dump-$r
    pbytes=$(result "$out" param_bytes) fbytes=$(result "$out" float_buffer_bytes)
    expect_count $((20 * steps)) '^dnn .*result=0 op=conv_fwd ' "$dump"
    expect_eq "$(coll_bytes "$dump" ncclAllReduce 1024)" $((steps * pbytes)) \
        "rank $r: DDP all-reduce bytes over $steps steps"
    # At the start the parameters and float buffers; before each forward
    # the float buffers again (broadcast_buffers). Below 4 KiB: the shapes
    # DDP checks first (int64s) and BatchNorm's step counters.
    expect_eq "$(coll_bytes "$dump" ncclBcast 4096)" $((pbytes + (steps + 1) * fbytes)) \
        "rank $r: DDP broadcast bytes"
    # fp32 weights, gradients and SGD's momentum.
    check_peak "$d" $r $((3 * pbytes))
done
echo "torchvision resnet18: ok"

# ResNet-50 as DeepLearningExamples benchmarks it (fidelity/single_gpu.sh),
# fp32 data on one A100: cuDNN's float convolutions run on TF32 tensor cores,
# as the estimator prices them, so the MFU divides their FLOPs by the TF32
# peak and stays below the share of the iteration the GPU computes (over
# FP32's, 8 times smaller, it came out at 146 % at batch 256).
d=$TEST_TMP/resnet50
torch_run "$d" a100x1 resnet50_train.py --batch 32 --steps 4
check_report "$d"
"$PY" - "$d/report.json" <<'PY' || fail "resnet50: the MFU is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
share = r["compute_time_s"] / r["iteration_time_s"]
print("resnet50 fp32 on A100: MFU %.3f, compute %.3f of the iteration" % (r["mfu"], share))
assert 0.02 < r["mfu"] <= share, (r["mfu"], share)
PY
echo "torchvision resnet50: ok"
