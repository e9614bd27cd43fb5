#!/usr/bin/env bash
# maya estimate: hand-computed analytical values, the model that answered,
# and strict argument checking with clear errors.
. "$MAYA_TOP/tests/lib.sh"

est() { "$MAYA" estimate "$@"; }
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" | head -1; }

# Copies: perf.kernel_floor_ns + bytes / bandwidth.
# H100 H2D pinned: 1500 ns + 2^30 B / 51 GB/s = 21055.261 us.
out=$(est copy bytes=1G kind=h2d pinned=1 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 21055.261 "h2d pinned 1 GiB on H100"
echo "$out" | grep -q '^family=copy gpu=H100-SXM model=analytical ' || fail "copy line: $out"
# pageable runs at half the pinned rate: 1500 ns + 2^30 / 25.5 GB/s = 42109.023 us
out=$(est copy bytes=1G kind=h2d pinned=0 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 42109.023 "h2d pageable 1 GiB on H100"
# A100 D2H pinned: 2000 ns + 2^28 / 25 GB/s = 10739.418 us
out=$(est copy bytes=256M kind=d2h gpu=a100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 10739.418 "d2h 256 MiB on A100"

# Hand-computed with the calibrated constants of estimator/analytical.c
# (est_calib); update these when `maya-est-train --calibrate` is rerun.
# GEMM 8192^3 bf16 on H100 (132 SMs, 989.4 TFLOP/s, tiles 128x256):
#   2048 tiles in 16 waves -> fill 2048/(16*132) = 0.969697; k/(k+150) = 0.982019
#   efficiency 0.8027 * 0.969697 * 0.982019 = 0.764393; 2*8192^3 / (989.4e12 * 0.764393) = 1453.848 us
#   (memory: 402.7 MB / (2900 GB/s * 0.8164) = 170 us, below)
out=$(est gemm m=8192 n=8192 k=8192 dtype=bf16 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 1453.848 "8192^3 bf16 GEMM on H100"
# Collectives (estimator/collectives.c, NCCL's tuning model), plus the
# kernel's launch (perf.launch_ns: 2.1 us H100, 2.5 us A100). The pipeline
# fill: S bytes over links of B reach S / (S + 68 us x B) of the peak.
# All-reduce of 1 GiB over 8 H100 (dgx-h100: NVLink 450 GB/s per direction,
# 370.8 GB/s for a ring (NCCL's 20.6 GB/s x 18 links), NVLS):
#   NVLS  25 + 2^30 / (370.8e9 * 0.85 * 15/16 * fill(2^30, 370.8e9)) + 2.1 = 3746.308 us (the fastest)
#   ring  8.4 + 14 * 3.4 + 2^30 / (370.8e9 * fill * 8/14) + 2.1 = 5280 us
out=$(est allreduce bytes=1G ranks=8 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 3746.308 "1 GiB all-reduce on 8 x H100"
echo "$out" | grep -q 'algo=nvls proto=Simple' || fail "1 GiB on 8 H100 runs NVLS: $out"
# 8 A100 (dgx-a100: 300 GB/s, a ring 240 (NCCL's 20 GB/s x 12 links), no NVLS):
#   ring Simple 56 + 2^30 / (240e9 * fill * 8/14) + 2.5 = 8006.867 us
out=$(est allreduce bytes=1G ranks=8 gpu=a100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 8006.867 "1 GiB all-reduce on 8 x A100"
echo "$out" | grep -q 'algo=ring proto=Simple' || fail "1 GiB on 8 A100 runs a Simple ring: $out"
# Small messages: ring LL, 6.6 + 14 steps * 1.0 us + 2.1 = 22.700 us (NVLink, 8 B on 8 H100;
# a step as measured, estimator/collectives.c LL_STEP_NVLINK_US)
out=$(est allreduce bytes=8 ranks=8 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 22.700 "8 B all-reduce on 8 x H100"
echo "$out" | grep -q 'algo=ring proto=LL ' || fail "8 B all-reduce runs LL: $out"
# The SMs a collective's NCCL kernel holds (ctas=, one per channel,
# src/enqueue.cc and src/transport/nvls.cc): NVLS 16 on Hopper, 24 on
# Blackwell in a node, 32 across nodes; a ring two per NVLink up to 32 (24
# on an A100's 12), fewer while the bytes are under channels x 512 threads
# x 64 B (Simple) or x 8 B x ranks (a ring's LL): 8 B runs one channel
expect_grep 'algo=nvls .* ctas=16$' <(est allreduce bytes=1G ranks=8 gpu=h100 model=analytical) "NVLS on 8 H100"
expect_grep 'algo=nvls .* ctas=24$' <(est allreduce bytes=1G ranks=8 gpu=b200 model=analytical) "NVLS on 8 B200"
expect_grep 'algo=nvls_tree .* ctas=32$' <(est allreduce bytes=1G ranks=16 nodes=2 gpu=b200 model=analytical) \
    "NVLS tree on 2 nodes of B200"
expect_grep 'algo=ring proto=Simple .* ctas=24$' <(est allreduce bytes=1G ranks=8 gpu=a100 model=analytical) \
    "a Simple ring on 8 A100: 24 channels"
expect_grep 'algo=ring proto=LL .* ctas=1$' <(est allreduce bytes=8 ranks=8 gpu=h100 model=analytical) \
    "8 B on one channel"
# The job's NCCL_ALGO / NCCL_PROTO narrow NCCL's choice (estimator/nccl_env.c).
# NVLS forced for 1 MiB on 8 H100: below the bytes in flight (68 us x 370.8 GB/s)
# a message moves at half of NVLS's 370.8 * 0.85 * 15/16 = 295.48 GB/s:
#   25 + 2^20 / (295.48e3 / 2) + 2.1 = 34.197 us (NCCL's own choice, ring LL, is faster)
out=$(NCCL_ALGO=NVLS est allreduce bytes=1M ranks=8 gpu=h100)
expect_eq "$(echo "$out" | field device_us)" 34.197 "1 MiB all-reduce on 8 x H100, NCCL_ALGO=NVLS"
echo "$out" | tr '\n' ' ' | grep -q 'model=analytical .*algo=nvls proto=Simple' ||
    fail "NCCL_ALGO=NVLS runs NVLS, priced by the model that honours it: $out"
# where the variables leave nothing (no NVLS on A100), NCCL's own choice and
# the learned model stand
out=$(NCCL_ALGO=nvls est allreduce bytes=1M ranks=8 gpu=a100)
echo "$out" | tr '\n' ' ' | grep -q 'model=learned .*algo=ring proto=LL ' || fail "NCCL_ALGO=nvls on A100: $out"
out=$(NCCL_ALGO='^nvls' est allreduce bytes=1G ranks=8 gpu=h100 model=analytical)
echo "$out" | grep -q 'algo=ring proto=Simple' || fail "NCCL_ALGO=^nvls on H100: $out"
out=$(NCCL_PROTO=Simple est allreduce bytes=8 ranks=8 gpu=h100 model=analytical)
echo "$out" | grep -q 'proto=Simple' || fail "NCCL_PROTO=Simple at 8 B: $out"
# per-collective lists: the all-reduce's list replaces the default one
out=$(NCCL_ALGO='ring;allreduce:tree' est allreduce bytes=8 ranks=8 gpu=h100 model=analytical)
echo "$out" | grep -q 'algo=tree ' || fail "NCCL_ALGO=ring;allreduce:tree: $out"
out=$(NCCL_ALGO='ring;allreduce:tree' est allgather bytes=1G ranks=8 gpu=h100 model=analytical)
echo "$out" | grep -q 'algo=ring ' || fail "NCCL_ALGO=ring;allreduce:tree, all-gather: $out"
# a send/recv of 8 B over NVLink: 6.6 + 0.6 + 2.1 us, and 8 B on one
# channel at LL: one way (a send alone in its group) 20.6 / 2 GB/s, 0.0008
# us, = 9.301 us; both ways (its rank also receiving: the channel's warps
# split) 20.6 / 4 GB/s, 0.0016 us, = 9.302 us
out=$(est sendrecv bytes=8 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 9.301 "8 B send/recv on H100"
out=$(est sendrecv bytes=8 gpu=h100 model=analytical both_ways=1)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 9.302 "8 B send/recv both ways on H100"
# Send/recv of 1 GiB between two H100 nodes (one 50 GB/s NIC per GPU, 2 us):
#   8.4 + 14 + 2 + 2^30 / (50e9 * 0.92) + 2.1 = 23368.714 us
out=$(est sendrecv bytes=1G nodes=2 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 23368.714 "1 GiB send/recv between H100 nodes"
# a send/recv inside a node reaches 0.77 of NVLink one way (1 GiB at 346.5
# GB/s), 0.65 both ways (292.5 GB/s)
out=$(est sendrecv bytes=1G gpu=h100 model=analytical)
expect_near "$(echo "$out" | sed -n 's/.*busbw_gbps=\([^ ]*\).*/\1/p')" 345.0 0.01 "1 GiB send/recv over NVLink"
out=$(est sendrecv bytes=1G gpu=h100 model=analytical both_ways=1)
expect_near "$(echo "$out" | sed -n 's/.*busbw_gbps=\([^ ]*\).*/\1/p')" 291.4 0.01 "1 GiB send/recv both ways over NVLink"
# the learned send/recv models saw one-way sends only: both ways, the
# analytical model answers and says the op was outside them
out=$(est sendrecv bytes=32M gpu=h100 both_ways=1)
echo "$out" | grep -q 'model=analytical .*extrapolated=1' || fail "both-ways send/recv with the learned model: $out"
out=$(est sendrecv bytes=32M gpu=h100)
echo "$out" | grep -q 'model=learned .*extrapolated=0' || fail "one-way send/recv with the learned model: $out"
# All-to-all: the count is per peer, so each H100 sends 7 pieces of 128 MiB
# over its NVLink (292.5 GB/s): 11.8 + 7 * 2^27 / 292.5e3 + 2.1 = 3225.948 us,
# busbw = 8 * 2^27 / t * 7/8 = 291.2 GB/s (8 x what counting the buffer as the total gave)
out=$(est alltoall bytes=128M ranks=8 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 3225.948 "all-to-all of 128 MiB per peer on 8 H100"
expect_near "$(echo "$out" | sed -n 's/.*busbw_gbps=\([^ ]*\).*/\1/p')" 291.2 0.001 "all-to-all busbw on 8 H100"
# All-gather: bytes each rank sends; 8 x 1 GiB gathered on 8 H100 run a Simple ring near 369 GB/s
out=$(est allgather bytes=1G ranks=8 gpu=h100 model=analytical)
echo "$out" | grep -q 'algo=ring proto=Simple size_bytes=8589934592 ' || fail "all-gather of 1 GiB per rank: $out"
expect_near "$(echo "$out" | sed -n 's/.*busbw_gbps=\([^ ]*\).*/\1/p')" 367 0.01 "all-gather busbw on 8 H100"
# Between nodes, the NICs of the node's members: a world all-reduce over two
# DGX H100 (8 rails of 46 GB/s each) keeps busbw near the NVLink one, a
# data-parallel pair (one GPU per node, one rail) reaches one NIC's 46 GB/s.
out=$(est allreduce bytes=1G ranks=16 nodes=2 gpu=h100 model=analytical)
awk -v b="$(echo "$out" | sed -n 's/.*busbw_gbps=\([^ ]*\).*/\1/p')" 'BEGIN { exit !(b > 300 && b < 560) }' ||
    fail "1 GiB all-reduce over 2 x 8 H100: $out"
out=$(est allreduce bytes=1G ranks=2 nodes=2 gpu=h100 model=analytical)
awk -v b="$(echo "$out" | sed -n 's/.*busbw_gbps=\([^ ]*\).*/\1/p')" 'BEGIN { exit !(b > 40 && b <= 46) }' ||
    fail "1 GiB all-reduce between 2 H100 nodes, one GPU each: $out"

# A big GEMM runs near the calibrated peak share: 8192^3 bf16 on H100 at
# 989.4 TFLOP/s dense is 1.111 ms at 100%; expect 75-90% of peak.
out=$(est gemm m=8192 n=8192 k=8192 dtype=bf16 gpu=h100 model=analytical)
tf=$(echo "$out" | sed -n 's/.*tflops=\([^ ]*\).*/\1/p')
awk -v t="$tf" 'BEGIN { exit !(t > 742 && t < 890) }' || fail "8192^3 bf16 on H100: $tf TFLOP/s, expected 742..890"
# fp32 without tensor cores is bounded by 67 TFLOP/s
out=$(est gemm m=8192 n=8192 k=8192 dtype=fp32 gpu=h100 model=analytical)
tf=$(echo "$out" | sed -n 's/.*tflops=\([^ ]*\).*/\1/p')
awk -v t="$tf" 'BEGIN { exit !(t > 40 && t < 67) }' || fail "8192^3 fp32 on H100: $tf TFLOP/s, expected 40..67"

# Host costs: a cuBLAS call costs a launch (perf.launch_ns = 2100 on H100) + 1.5 us.
out=$(est gemm m=64 n=64 k=64 gpu=h100 model=analytical)
expect_eq "$(echo "$out" | sed -n 's/.*host_us=\([^ ]*\).*/\1/p')" 3.600 "cuBLAS host cost on H100"

# Every op family answers.
for args in "gemm m=1 n=1 k=1" "batched_gemm m=128 n=128 k=64 batch=32" \
            "conv n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1" "attention batch=4 heads=16 seq=2048 head_dim=128 causal=1" \
            "kernel bytes=64M" "memset bytes=1M" "copy bytes=1M kind=peer" \
            "allreduce bytes=256M ranks=16 nodes=2" "allgather bytes=1M ranks=8" "reducescatter bytes=1M ranks=8" \
            "broadcast bytes=1M ranks=4" "alltoall bytes=1G ranks=16" "sendrecv bytes=1M nodes=2"; do
    # shellcheck disable=SC2086
    out=$(est $args model=analytical) || fail "maya estimate $args failed"
    us=$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')
    awk -v u="$us" 'BEGIN { exit !(u > 0) }' || fail "maya estimate $args: device_us=$us"
done

# Strict arguments: each error names what was expected.
bad() { # bad REGEX ARGS...
    local want=$1
    shift
    if est "$@" > "$TEST_TMP/out" 2>&1; then fail "accepted: maya estimate $*"; fi
    expect_grep "$want" "$TEST_TMP/out" "maya estimate $*: expected an error matching /$want/"
}
bad 'unknown op "gemmm"; expected gemm' gemmm m=1
bad 'm=\.\.\. is required' gemm n=4 k=4
bad 'unknown key "q"; gemm takes m n k dtype' gemm m=4 n=4 k=4 q=1
bad 'dtype is "fp12"; expected fp32, tf32' gemm m=4 n=4 k=4 dtype=fp12
bad 'm is "4x"; expected an integer >= 1' gemm m=4x n=4 k=4
bad 'unknown GPU "h1000"; known: ' gemm m=4 n=4 k=4 gpu=h1000
bad 'model is "neural"; expected analytical, learned or oracle' gemm m=4 n=4 k=4 model=neural
bad 'kind is "x2y"; expected h2d, d2h, d2d, h2h or peer' copy bytes=1 kind=x2y
bad '3 nodes for 2 ranks' allreduce bytes=1M ranks=2 nodes=3
bad 'expected KEY=VALUE, found "m"' gemm m
bad 'm is given twice' gemm m=1 m=2 n=1 k=1
bad 'oracle mode needs a durations file' gemm m=4 n=4 k=4 model=oracle
est --help | grep -q 'usage: maya estimate OP' || fail "--help lacks usage"

# Oracle mode from the command line: by-name rules with units.
cat > "$TEST_TMP/o.txt" <<'EOT'
name=cublasGemmEx device=14ms host=5us   # every GEMM
name=ncclAllReduce device=20ms
EOT
out=$(est gemm m=4 n=4 k=4 model=oracle oracle="$TEST_TMP/o.txt")
echo "$out" | grep -q 'model=oracle device_us=14000.000 host_us=5.000 ' || fail "oracle gemm: $out"
out=$(est allreduce bytes=1M model=oracle oracle="$TEST_TMP/o.txt")
echo "$out" | grep -q 'model=oracle device_us=20000.000 ' || fail "oracle allreduce: $out"
printf 'name=x device=14\n' > "$TEST_TMP/bad.txt"
bad 'bad.txt:1: device duration is "14"; expected a number >= 0 with a unit' gemm m=4 n=4 k=4 model=oracle oracle="$TEST_TMP/bad.txt"

# Learned models (built into build/share/maya/models): they answer where
# they have data, and the analytical model answers, marked extrapolated,
# for a GPU or a setup they never saw.
out=$(est gemm m=4096 n=4096 k=4096 dtype=bf16 gpu=h100)
echo "$out" | grep -q '^family=gemm gpu=H100-SXM model=learned .* extrapolated=0$' || fail "learned gemm: $out"
# XLA measured 783 TFLOP/s for 4096^3 bf16 on H100; the model must be within 10%
tf=$(echo "$out" | sed -n 's/.*tflops=\([^ ]*\).*/\1/p')
expect_near "$tf" 783 0.10 "learned 4096^3 bf16 on H100"
# H200 has no GEMM data of its own: H100-SXM's model serves (the same
# compute capability 9.0 and tensor cores), scaled by H200's own figures
out=$(est gemm m=4096 n=4096 k=4096 dtype=bf16 gpu=h200)
echo "$out" | grep -q 'model=learned .* extrapolated=0$' || fail "H200's GEMM from H100-SXM's model: $out"
tf=$(echo "$out" | sed -n 's/.*tflops=\([^ ]*\).*/\1/p')
expect_near "$tf" 783 0.10 "learned 4096^3 bf16 on H200 (H100-SXM's model, the same peak)"
# The units a GEMM or convolution runs on: fp32 convolutions on a V100 (no
# TF32) on CUDA cores, a 3x3 stride-1 one as Winograd's F(2x2, 3x3); on an
# A100 TF32 tensor cores; fp16 on tensor cores, bf16 on a V100 (none for it)
# on CUDA cores
conv="conv n=16 c=128 h=56 w=56 k=256 r=3 s=3 pad=1 dtype=fp32 model=analytical"
expect_grep ' units=cuda_cores algo=winograd_f2x3$' <(est $conv gpu=v100) "V100 fp32 3x3 conv"
expect_grep ' units=cuda_cores$' <(est $conv gpu=v100 stride=2) "V100 fp32 3x3 conv of stride 2"
expect_grep ' units=tensor_cores$' <(est $conv gpu=a100) "A100 TF32 3x3 conv"
expect_grep ' units=tensor_cores$' <(est gemm m=64 n=64 k=64 dtype=fp16 gpu=v100) "V100 fp16 GEMM"
expect_grep ' units=cuda_cores$' <(est gemm m=64 n=64 k=64 dtype=bf16 gpu=v100) "V100 bf16 GEMM (no bf16 tensor cores)"
expect_no_grep 'units=' <(est kernel bytes=1M gpu=v100) "a kernel has no units line"
# B200 (10.0): no model of its architecture, analytical
out=$(est gemm m=4096 n=4096 k=4096 dtype=bf16 gpu=b200)
echo "$out" | grep -q 'model=analytical .* extrapolated=1$' || fail "B200 has no model of its architecture: $out"
out=$(est allreduce bytes=64M ranks=8 gpu=a100)
echo "$out" | grep -q 'model=learned .* extrapolated=0$' || fail "learned allreduce: $out"
# nccl-tests: 8 x A100 reach 167 GB/s busbw at 64 MiB = 0.703 ms (held out:
# the model is fitted on vidur's all-reduces only)
us=$(echo "$out" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')
expect_near "$us" 703 0.15 "learned 64 MiB all-reduce on 8 x A100"
# memory-bound kernels: the class is part of what the model knows
out=$(est kernel bytes=64M dtype=fp16 class=norm gpu=h100)
echo "$out" | grep -q '^family=kernel gpu=H100-SXM model=learned .* extrapolated=0$' || fail "learned norm kernel: $out"
out=$(est kernel bytes=64M class=softmax gpu=h100)
echo "$out" | grep -q 'model=analytical .* extrapolated=1$' || fail "no softmax data: $out"
out=$(est allreduce bytes=64M ranks=64 nodes=8 gpu=a100)
echo "$out" | grep -q 'model=analytical .* extrapolated=1$' || fail "64 ranks are outside the data: $out"
bad 'models directory .*/nomodels: ' gemm m=4 n=4 k=4 models="$TEST_TMP/nomodels"
mkdir -p "$TEST_TMP/badmodels"
echo 'not json' > "$TEST_TMP/badmodels/gemm-H100-SXM.json"
bad 'gemm-H100-SXM.json: not a model XGBoost can read' gemm m=4 n=4 k=4 models="$TEST_TMP/badmodels"
# sizes no job has: refused, never a saturated time (it printed 18446744073709552 us with exit 0)
bad 'the device estimate is [0-9.e+]+ s, more than an op can take' gemm m=1T n=1T k=1T
bad 'more than an op can take' copy bytes=8000000T
echo ok
