#!/usr/bin/env bash
# libnvidia-ml.so.1 exports every NVML function (nvml.symbols), unversioned
# under the real soname, and answers for the emulated node as a real one
# does: every GPU of the node whatever CUDA_VISIBLE_DEVICES says, the same
# names, UUIDs and PCI bus ids as the CUDA runtime, memory as cudaMemGetInfo
# says, this process among a GPU's users, NVLinks as the node is built
# (NVSwitch, bridged pairs, PCIe only), figures from the hwspec. Loading the
# library without calling it starts nothing.
. "$MAYA_TOP/tests/lib.sh"

lib=$MAYA_LIBS/libnvidia-ml.so.1
symbols=$MAYA_TOP/emulator/nvml/nvml.symbols
[ -f "$lib" ] || fail "no $lib"
readelf -d "$lib" | grep -q 'Library soname: \[libnvidia-ml.so.1\]' || fail "soname is not libnvidia-ml.so.1"
if readelf -V "$lib" | grep -q 'Version definition'; then
    fail "libnvidia-ml.so.1 defines symbol versions; the real library's symbols are unversioned"
fi
nm -D --defined-only "$lib" | awk '$2 ~ /[TW]/ {print $3}' | sort > "$TEST_TMP/ours"
grep -v '^#' "$symbols" | grep -v '^$' | sort > "$TEST_TMP/list"
diff "$TEST_TMP/list" "$TEST_TMP/ours" > "$TEST_TMP/diff" || fail "exports differ from nvml.symbols: $(head "$TEST_TMP/diff")"
[ "$(wc -l < "$TEST_TMP/list")" -gt 400 ] || fail "nvml.symbols lists too few functions"
# what torch 2.15's c10 looks up (TORCH_INTERNAL_ASSERT when one is missing)
for f in nvmlInit_v2 nvmlDeviceGetHandleByPciBusId_v2 nvmlDeviceGetNvLinkRemoteDeviceType \
         nvmlDeviceGetNvLinkRemotePciInfo_v2 nvmlDeviceGetComputeRunningProcesses \
         nvmlSystemGetCudaDriverVersion_v2 nvmlDeviceGetGpuFabricInfoV; do
    grep -qx "$f" "$TEST_TMP/ours" || fail "libnvidia-ml.so.1 does not export $f"
done
# every name the library defines for real (not a not-supported stub) is strong
nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' > "$TEST_TMP/strong"
for f in nvmlInit_v2 nvmlErrorString nvmlDeviceGetMemoryInfo nvmlDeviceGetGpuFabricInfoV; do
    grep -qx "$f" "$TEST_TMP/strong" || fail "$f is only a not-supported stub"
done

# query LABEL [VAR=VALUE...]: run the workload on an emulated node
query() {
    local label=$1
    shift
    mkdir -p "$TEST_TMP/$label"
    env "$@" RANK=0 LD_LIBRARY_PATH=$MAYA_LIBS MAYA_TRACE_DIR=$TEST_TMP/$label \
        "$WORKLOADS/nvml_query" "$symbols" > "$TEST_TMP/$label.out" 2> "$TEST_TMP/$label.err" ||
        fail "nvml_query ($label: $*) failed: $(cat "$TEST_TMP/$label.err" "$TEST_TMP/$label.out" | tail -5)"
    expect_grep "^nvml ok$" "$TEST_TMP/$label.out"
}

# A DGX H100: 8 GPUs on NVSwitch, the process sees two of them (in the order
# CUDA_VISIBLE_DEVICES gives), NVML all eight.
query h100 MAYA_GPU=h100 CUDA_VISIBLE_DEVICES=5,2
o=$TEST_TMP/h100.out
expect_grep "^symbols=$(wc -l < "$TEST_TMP/list") nvml_gpus=8 cuda_gpus=2 driver=580\.65\.06 nvml=13\.580\.65\.06 cuda=13000$" "$o"
expect_grep "^cuda 0 = nvml 5$" "$o"
expect_grep "^cuda 1 = nvml 2$" "$o"
expect_count 8 '^gpu [0-7] name="NVIDIA H100 80GB HBM3" .* arch=9 cores=16896 power_limit_mw=700000 power_mw=70000 sm_mhz=1980 mem_mhz=2619 pcie=gen5\.x16 temp_c=30 util=0 nvlinks=18 nvlink_remote=switch .* fabric=completed$' "$o"
expect_grep '^gpu 0 .* bus=00000000:18:00\.0 ' "$o"
expect_grep '^gpu 7 .* bus=00000000:1F:00\.0 ' "$o"
[ "$(grep -o 'serial=[0-9]*' "$o" | sort -u | wc -l)" = 8 ] || fail "serial numbers are not distinct: $(grep -o 'serial=[0-9]*' "$o")"
expect_grep "nvmlDeviceGetFanSpeed is not supported" "$TEST_TMP/h100.err"
dump "$TEST_TMP/h100/rank-0.mtrace" > "$TEST_TMP/h100.dump"
# NVML calls are traced once CUDA has started the emulator (nvmlInit came first)
expect_no_grep "api=nvmlInit_v2" "$TEST_TMP/h100.dump"
expect_grep "^call .* api=nvmlDeviceGetMemoryInfo result=0$" "$TEST_TMP/h100.dump"
expect_grep "^call .* api=nvmlDeviceGetFanSpeed result=3 UNSUPPORTED$" "$TEST_TMP/h100.dump"
expect_grep "^call .* api=nvmlShutdown result=1$" "$TEST_TMP/h100.dump"
# one unsupported call: the forked child's NVML calls did not reach the trace
expect_grep "^end .* unsupported_calls=1 " "$TEST_TMP/h100.dump"

# Bridged pairs (the cluster's intra_node from MAYA_INTRA_NODE, as maya run
# sets it): each link reaches the partner GPU; an odd GPU out has its links
# down; no NVSwitch fabric.
query pairs MAYA_GPU=h100 MAYA_GPUS_PER_NODE=3 MAYA_INTRA_NODE=pairwise
o=$TEST_TMP/pairs.out
expect_grep '^gpu 0 .* nvlinks=18 nvlink_remote=gpu nvlink_peer=00000000:19:00\.0 fabric=not_supported$' "$o"
expect_grep '^gpu 1 .* nvlinks=18 nvlink_remote=gpu nvlink_peer=00000000:18:00\.0 fabric=not_supported$' "$o"
expect_grep '^gpu 2 .* nvlinks=0 nvlink_remote=down nvlink_peer=none fabric=not_supported$' "$o"

# A PCIe node of A40s (NVLink-capable, not bridged): links down; Ampere has
# no fabric query. An L40S has no NVLink at all. B200 on NVSwitch: fabric.
query a40 MAYA_GPU=a40 MAYA_GPUS_PER_NODE=2 MAYA_INTRA_NODE=pcie
expect_count 2 '^gpu [01] name="NVIDIA A40" .* arch=7 cores=10752 power_limit_mw=300000 .* pcie=gen4\.x16 .* nvlinks=0 nvlink_remote=down nvlink_peer=none fabric=unsupported$' "$TEST_TMP/a40.out"
query l40s MAYA_GPU=l40s MAYA_GPUS_PER_NODE=2
expect_count 2 '^gpu [01] name="NVIDIA L40S" .* arch=8 .* nvlinks=0 nvlink_remote=none nvlink_peer=none fabric=unsupported$' "$TEST_TMP/l40s.out"
query b200 MAYA_GPU=b200 MAYA_GPUS_PER_NODE=2
expect_count 2 '^gpu [01] name="NVIDIA B200" .* arch=10 .* power_limit_mw=1000000 .* nvlinks=18 nvlink_remote=switch .* fabric=completed$' "$TEST_TMP/b200.out"
query v100 MAYA_GPU=v100 MAYA_GPUS_PER_NODE=1
expect_grep '^gpu 0 name="Tesla V100-SXM2-32GB" .* arch=5 cores=5120 .* pcie=gen3\.x16 .* nvlinks=6 .* fabric=unsupported$' "$TEST_TMP/v100.out"

# A bad MAYA_INTRA_NODE: nvmlInit fails (driver not loaded) and says why.
if env MAYA_INTRA_NODE=mesh RANK=0 LD_LIBRARY_PATH=$MAYA_LIBS "$WORKLOADS/nvml_query" "$symbols" > "$TEST_TMP/bad.out" 2>&1; then
    fail "nvml_query succeeded with MAYA_INTRA_NODE=mesh"
fi
expect_grep 'MAYA_INTRA_NODE="mesh": expected nvswitch, pairwise or pcie' "$TEST_TMP/bad.out"
expect_grep 'nvmlInit_v2.* returned 9' "$TEST_TMP/bad.out"

# Loaded, never called: no emulator, no trace.
mkdir -p "$TEST_TMP/load"
RANK=0 LD_LIBRARY_PATH=$MAYA_LIBS MAYA_TRACE_DIR=$TEST_TMP/load "$WORKLOADS/nvml_query" load > "$TEST_TMP/load.out" 2>&1 ||
    fail "nvml_query load failed: $(cat "$TEST_TMP/load.out")"
expect_grep "^loaded$" "$TEST_TMP/load.out"
[ -z "$(ls "$TEST_TMP/load")" ] || fail "loading libnvidia-ml.so.1 started a trace: $(ls "$TEST_TMP/load")"

# NVML does not initialise CUDA (torch.cuda.device_count() asks NVML so as
# not to): the process that only used NVML writes no trace, and a child it
# forks can use CUDA (its own trace, named by its pid).
mkdir -p "$TEST_TMP/nvml-only"
LD_LIBRARY_PATH=$MAYA_LIBS MAYA_TRACE_DIR=$TEST_TMP/nvml-only "$WORKLOADS/nvml_query" nvml-only > "$TEST_TMP/nvml-only.out" 2>&1 ||
    fail "nvml_query nvml-only failed: $(cat "$TEST_TMP/nvml-only.out")"
expect_grep "^nvml_gpus=8 child_cuda=ok$" "$TEST_TMP/nvml-only.out"
[ "$(ls "$TEST_TMP/nvml-only" | wc -l)" = 1 ] || fail "expected the child's trace only, found: $(ls "$TEST_TMP/nvml-only")"
dump "$TEST_TMP/nvml-only"/pid-*.mtrace > "$TEST_TMP/nvml-only.dump"
expect_grep "^alloc .*api=cudaMalloc result=0" "$TEST_TMP/nvml-only.dump"
