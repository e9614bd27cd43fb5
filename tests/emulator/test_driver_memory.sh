#!/usr/bin/env bash
# Driver-API memory: small copies and memsets (linear, 2D, 3D) move real
# bytes, pointer attributes answer for device and pinned memory and refuse
# plain host memory (Triton's check), streams/events/host functions are
# traced with the runtime's records, and the virtual memory API behaves as
# PyTorch's expandable segments need: reservations cost nothing, physical
# allocations count against capacity and run out at it, mapped ranges are
# device memory. drv_memory checks the values; this checks the trace.
. "$MAYA_TOP/tests/lib.sh"

out=$TEST_TMP/out
RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/drv_memory" > "$out" 2>&1 || fail "drv_memory failed: $(cat "$out")"
expect_grep "^drv_memory: ok" "$out"
expect_grep "^memset d8=ab d16=1234 d32=deadbeef$" "$out"
expect_grep "^memcpy2d corner=5a last=5a$" "$out"
expect_grep "^streams priority=-3 id_nonzero=1$" "$out"
expect_grep "^vmm charged=23068672$" "$out" "2 MiB + 20 MiB of physical memory charged"

d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_grep '^memcpy .*api=cuMemcpyHtoD result=0 host_waits kind=h2d bytes=256 .*performed' "$d"
expect_grep '^memcpy .*api=cuMemcpyHtoD result=1 .*\[alloc#[0-9]+\+4000\]' "$d" "a copy past its allocation fails"
expect_grep '^memset .*api=cuMemsetD32 result=0 bytes=16 .*value=3735928559 elem=4 performed' "$d"
expect_grep '^memcpy .*api=cuMemcpy3D result=0 host_waits kind=h2d bytes=32 .*performed shape=8x2x2' "$d"
expect_grep '^event_record .*stream=([0-9]+) api=cuEventRecord result=0 event=2 version=1' "$d"
expect_grep '^stream_wait .*api=cuStreamWaitEvent result=0 event=2 version=1' "$d"
expect_grep '^host_func .*api=cuLaunchHostFunc result=0' "$d"
expect_grep '^sync .*api=cuCtxSynchronize result=0 sync=device' "$d"
# virtual memory
expect_grep '^alloc .*api=cuMemAddressReserve result=0 kind=vmm_reserve .*bytes=95646908416 .*used=0 ' "$d" \
    "9/8 of the device memory reserved"
expect_grep '^alloc .*api=cuMemCreate result=0 kind=vmm_physical ptr=0x1 bytes=2097152 alloc_dev=0 used=2097152 ' "$d"
expect_grep '^alloc .*api=cuMemMap result=0 kind=vmm_map ptr=0x[0-9a-f]+ bytes=20971520 alloc_dev=0 used=23068672 ' "$d"
expect_grep '^memcpy .*api=cuMemcpyHtoD result=0 .*dst=0x[0-9a-f]+\[alloc#[0-9]+\+1048576\] .*performed' "$d" \
    "a copy into a mapped range"
expect_grep '^alloc .*api=cuMemCreate result=2 kind=vmm_physical' "$d" "physical memory past capacity"
expect_grep '^alloc .*api=cuMemAlloc result=2 kind=device' "$d" "cuMemAlloc when VMM holds the memory"
expect_count 2 '^free .*api=cuMemUnmap result=0 kind=vmm_map' "$d"
# small, large and the one that ran out; releasing a retained handle is a call
expect_count 3 '^free .*api=cuMemRelease result=0 kind=vmm_physical' "$d"
expect_grep '^free .*api=cuMemRelease result=0 kind=vmm_physical ptr=0x2 bytes=20971520 alloc_dev=0 used=0 ' "$d" \
    "all physical memory given back"
expect_grep '^free .*api=cuMemAddressFree result=0 kind=vmm_reserve' "$d"
expect_grep '^end .*unsupported_calls=0 oom=1 ' "$d"
