#!/usr/bin/env bash
# Runtime errors: non-sticky errors are returned once by cudaGetLastError
# and peeked without clearing; a bad launch configuration is reported; an
# exported call the emulator does not implement returns cudaErrorNotSupported,
# is named once on stderr and counted in the trace. With MAYA_INJECT_FAULT the
# chosen launch faults and the process keeps the sticky error. A bad
# emulator configuration makes every call fail with an initialisation error
# and a message naming the variable.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/errors" > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
    fail "errors failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
expect_grep "errors: non-sticky: ok" "$TEST_TMP/out"
expect_count 1 "cudaMallocArray is not supported by the emulator; it returned 801" "$TEST_TMP/err"
d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_count 2 '^call .*api=cudaMallocArray result=801 UNSUPPORTED' "$d"
expect_grep '^call .*api=__cudaLaunchKernel result=9$' "$d" "the launch with too many threads"
expect_grep '^end .*unsupported_calls=2 ' "$d"

MAYA_INJECT_FAULT=2 RANK=0 emu "$TEST_TMP/sticky" "$WORKLOADS/errors" sticky > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
    fail "errors sticky failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
expect_grep "errors: sticky: ok" "$TEST_TMP/out"
expect_grep "launch 2 faults \(MAYA_INJECT_FAULT\)" "$TEST_TMP/err"
dump "$TEST_TMP/sticky/rank-0.mtrace" > "$d"
expect_count 2 '^launch ' "$d"
expect_grep '^call .*api=cudaDeviceSynchronize result=700' "$d"
expect_grep '^call .*api=cudaMalloc result=700' "$d"

# a configuration error: the program's first call fails, the message says why
MAYA_GPU=NoSuchGPU RANK=0 emu "$TEST_TMP/bad" "$WORKLOADS/vector_add" > "$TEST_TMP/out" 2> "$TEST_TMP/err" &&
    fail "vector_add ran with MAYA_GPU=NoSuchGPU"
expect_grep 'MAYA_GPU="NoSuchGPU" is not a known GPU' "$TEST_TMP/err"
expect_grep "initialization error" "$TEST_TMP/err"
MAYA_INJECT_FAULT=soon RANK=0 emu "$TEST_TMP/bad" "$WORKLOADS/vector_add" > "$TEST_TMP/out" 2> "$TEST_TMP/err" &&
    fail "vector_add ran with MAYA_INJECT_FAULT=soon"
expect_grep 'MAYA_INJECT_FAULT="soon": expected the number of the launch' "$TEST_TMP/err"
exit 0
