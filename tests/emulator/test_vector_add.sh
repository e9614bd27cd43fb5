#!/usr/bin/env bash
# The vector add workload runs under the emulator: its small copies move real
# bytes (the input it reads back from device memory is unchanged), and the
# trace records the allocations, copies, the launch with its grid and block,
# and the frees, with device memory returning to zero.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/vector_add" 4096 > "$TEST_TMP/out" || fail "vector_add failed: $(cat "$TEST_TMP/out")"
expect_grep "vector_add n=4096 blocks=16 threads=256: ok" "$TEST_TMP/out"
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
expect_count 3 "^alloc .*api=cudaMalloc result=0 kind=device .*bytes=16384" "$TEST_TMP/dump"
expect_count 2 "^memcpy .*kind=h2d bytes=16384 .*performed" "$TEST_TMP/dump"
expect_count 1 "^memcpy .*kind=d2h bytes=16384 .*performed" "$TEST_TMP/dump"
expect_count 1 "^memcpy .*kind=d2h bytes=1024 .*performed" "$TEST_TMP/dump"
expect_grep "^launch .*kernel=\"vector_add\(float const\*, float const\*, float\*, int\)\" grid=16,1,1 block=256,1,1" "$TEST_TMP/dump"
expect_grep "^free .*used=0 peak=50176" "$TEST_TMP/dump"
expect_grep "^end .*unsupported_calls=0 oom=0 dev0_peak=50176" "$TEST_TMP/dump"

# MAYA_COPY_THRESHOLD: with 1K, the 16 KiB copies are only recorded; the
# 1 KiB probe still makes its round trip (the program checks it).
MAYA_COPY_THRESHOLD=1K RANK=0 emu "$TEST_TMP/thr" "$WORKLOADS/vector_add" 4096 > "$TEST_TMP/out" ||
    fail "vector_add with MAYA_COPY_THRESHOLD=1K failed: $(cat "$TEST_TMP/out")"
dump "$TEST_TMP/thr/rank-0.mtrace" > "$TEST_TMP/dump"
expect_grep '^process .*copy_threshold=1024 ' "$TEST_TMP/dump"
expect_count 2 "^memcpy .*kind=h2d bytes=16384 .*dst_dev=0$" "$TEST_TMP/dump"
expect_count 1 "^memcpy .*kind=d2h bytes=1024 .*performed" "$TEST_TMP/dump"
