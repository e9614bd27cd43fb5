#!/usr/bin/env bash
# The runtime API beyond streams and graphs (the workload checks what the
# program sees: initial values of __device__ variables, copies to and from
# symbols, function attributes and occupancy, driver entry points, a library
# from a cubin, peer access, stream attributes, managed-memory hints, pitched
# copies that move bytes, pointer attributes, cudaDeviceReset). The trace has
# the variables' memory, the launch with dynamic shared memory over 48 KiB
# after cudaFuncSetAttribute, the cluster launch, the library kernel, and the
# reset giving back all device memory. A program built for per-thread
# default streams uses a stream per host thread.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/runtime_api" "$WORKLOADS/drv_kernels.cubin" > "$TEST_TMP/out" 2>&1 ||
    fail "runtime_api failed: $(cat "$TEST_TMP/out")"
expect_grep "runtime_api: ok" "$TEST_TMP/out"
d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_grep '^alloc .*api=__cudaRegisterVar result=0 kind=device .*bytes=4194304 ' "$d" "memory of the __device__ array"
expect_grep '^kernel .*name="tiled\(float\*, int\)" .*static_smem=1024 .*launch_bounds=256' "$d"
expect_grep '^call .*api=__cudaLaunchKernel result=9$' "$d" "the launch over the default dynamic shared memory"
expect_grep '^launch .*api=__cudaLaunchKernel result=0 kernel="tiled\(float\*, int\)" .*smem=102400 ' "$d"
expect_grep '^launch .*api=cudaLaunchKernelExC result=0 kernel="tiled\(float\*, int\)" .* cluster=2,1,1 ' "$d"
expect_grep '^launch .*api=cudaLaunchKernel result=0 kernel="scale" grid=512,1,1 block=128,1,1' "$d"
expect_grep '^call .*api=cuDeviceGet result=0' "$d" "the driver function called through its entry point"
expect_no_grep '^call .*api=cuLibrary' "$d" "the runtime's library calls traced twice"
expect_grep '^memcpy .*api=cudaMemcpy3D result=0 .*bytes=2048 .*performed shape=64x8x4' "$d"
expect_grep '^free .*api=cudaDeviceReset result=0 device_sync kind=device ptr=0x0 bytes=[1-9][0-9]* alloc_dev=0 used=0 ' "$d"
expect_grep '^end .*unsupported_calls=0 oom=0' "$d"

RANK=0 emu "$TEST_TMP/pt" "$WORKLOADS/ptds_streams" > "$TEST_TMP/out" 2>&1 || fail "ptds_streams failed: $(cat "$TEST_TMP/out")"
expect_grep "ptds_streams: ok" "$TEST_TMP/out"
dump "$TEST_TMP/pt/rank-0.mtrace" > "$d"
expect_count 2 '^stream .* per_thread$' "$d"
expect_grep '^stream +id=3 dev=0 priority=0 legacy$' "$d"
for tid in 0 1; do
    expect_grep "^launch .*tid=$tid .*api=__cudaLaunchKernel_ptsz result=0 kernel=\"inc" "$d"
    expect_grep "^memcpy .*tid=$tid .*api=cudaMemcpy_ptds result=0 host_waits kind=h2d bytes=4096 .*performed" "$d"
done
# each thread's work on its own stream
s0=$(grep -E '^launch .*tid=0 ' "$d" | sed -E 's/.* stream=([0-9]+) .*/\1/')
s1=$(grep -E '^launch .*tid=1 ' "$d" | sed -E 's/.* stream=([0-9]+) .*/\1/')
[ "$s0" != "$s1" ] || fail "both threads launched on stream $s0"
expect_grep '^memset .*stream=3 api=cudaMemsetAsync_ptsz result=0' "$d" "cudaStreamLegacy from a per-thread build"
