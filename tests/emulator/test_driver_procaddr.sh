#!/usr/bin/env bash
# cuGetProcAddress resolves API names by CUDA version and stream flavour to
# the driver's own exported functions (cuCtxCreate at 3020/12000/12080 ->
# _v2/_v3/_v4, per-thread -> _ptds/_ptsz, cuGetProcAddress itself), the
# functions work when called, every API name of the symbol list resolves,
# and unknown names or too-old versions fail with the right status. An
# unimplemented entry point returns CUDA_ERROR_NOT_SUPPORTED, is reported
# once on stderr and counted in the trace.
. "$MAYA_TOP/tests/lib.sh"

out=$TEST_TMP/out
RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/drv_procaddr" "$MAYA_TOP/emulator/driver/driver.symbols" > "$out" 2>&1 ||
    fail "drv_procaddr failed: $(cat "$out")"
expect_grep "^drv_procaddr: ok" "$out"
expect_grep "^cuCtxCreate@12080 -> cuCtxCreate_v4$" "$out"
expect_grep "^cuMemcpyHtoD@12030/ptds -> cuMemcpyHtoD_v2_ptds$" "$out"
expect_grep "^calls through cuGetProcAddress: ok$" "$out"
n=$(grep -E '^api names resolved: ' "$out" | awk '{print $4}')
[ "${n:-0}" -gt 400 ] || fail "expected over 400 API names to resolve, got ${n:-none}"
expect_grep "^unimplemented: 801 801$" "$out"
expect_count 1 "cuArrayCreate_v2 is not supported by the emulator" "$out"

d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_count 2 '^call .*api=cuArrayCreate_v2 result=801 UNSUPPORTED' "$d"
expect_grep '^end .*unsupported_calls=2 ' "$d"
expect_grep '^call .*api=cuGetProcAddress result=500' "$d" "a failed lookup is traced"
