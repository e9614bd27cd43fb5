#!/usr/bin/env bash
# Device memory accounting: on every device the program can see,
# cudaMemGetInfo's total is the GPU's memory and free + allocated == total
# across cudaMalloc, managed and pool allocations and frees (the workload
# checks it). The device count follows MAYA_GPUS_PER_NODE and
# CUDA_VISIBLE_DEVICES as on a real node. An allocation past the capacity
# fails with cudaErrorMemoryAllocation and the trace's end record says oom=1.
. "$MAYA_TOP/tests/lib.sh"

run() { # EXPECTED_DEVICES [ENV=VALUE...]
    local want=$1
    shift
    env "$@" RANK=0 MAYA_TRACE_DIR="$TEST_TMP/tr" LD_LIBRARY_PATH="$MAYA_LIBS" "$WORKLOADS/meminfo" \
        > "$TEST_TMP/out" 2>&1 || fail "meminfo $* failed: $(cat "$TEST_TMP/out")"
    expect_grep "^devices=$want$" "$TEST_TMP/out" "meminfo with $*: $want devices"
    [ "$want" = 0 ] || expect_grep "meminfo: ok" "$TEST_TMP/out"
}
run 8
run 2 MAYA_GPUS_PER_NODE=2
run 4 MAYA_GPUS_PER_NODE=4 MAYA_GPU=A100-SXM4-80GB
run 2 CUDA_VISIBLE_DEVICES=5,2
run 1 CUDA_VISIBLE_DEVICES=3,9,1   # the driver stops at the first invalid entry
run 0 CUDA_VISIBLE_DEVICES=
run 1 MAYA_GPUS_PER_NODE=1

# the peer copy between devices 0 and 1 moved its bytes (checked by the program)
run 2 CUDA_VISIBLE_DEVICES=0,1
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
expect_grep '^memcpy .*api=cudaMemcpyPeer result=0 host_waits kind=peer bytes=128 .* src_dev=0 dst_dev=1 performed' "$TEST_TMP/dump"
expect_grep '^free .*api=cudaStreamSynchronize result=0 kind=async ptr=0x0 bytes=10485760' "$TEST_TMP/dump" \
    "the pool gives its idle memory back at synchronisation"

env RANK=0 MAYA_TRACE_DIR="$TEST_TMP/oom" LD_LIBRARY_PATH="$MAYA_LIBS" MAYA_GPUS_PER_NODE=1 "$WORKLOADS/meminfo" oom \
    > "$TEST_TMP/out" 2>&1 || fail "meminfo oom failed: $(cat "$TEST_TMP/out")"
expect_grep "meminfo: oom reported" "$TEST_TMP/out"
dump "$TEST_TMP/oom/rank-0.mtrace" > "$TEST_TMP/dump"
expect_grep '^alloc .*api=cudaMalloc result=2 kind=device ptr=0x0 bytes=[0-9]+' "$TEST_TMP/dump"
expect_grep '^end .*oom=1 dev0_peak=[0-9]+ dev0_total=85017755648' "$TEST_TMP/dump"
