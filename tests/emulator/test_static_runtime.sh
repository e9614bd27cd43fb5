#!/usr/bin/env bash
# A program linked with the static CUDA runtime (nvcc's default) reaches the
# driver through private export tables that maya does not emulate: every
# CUDA call fails. Under the emulator and under maya run, the user is told
# why and how to build the program (nvcc -cudart shared), once, the call is
# counted as unsupported in the trace, and maya run exits non-zero (with -q
# too, saying so in one line).
. "$MAYA_TOP/tests/lib.sh"

prog=$WORKLOADS/vector_add_static
nm "$prog" | grep -q cudart || fail "$prog does not carry the static runtime"
out=$TEST_TMP/out
if RANK=0 emu "$TEST_TMP/tr" "$prog" > "$out" 2>&1; then
    fail "a static-runtime program ran to success: $(cat "$out")"
fi
expect_count 1 "links the CUDA runtime statically" "$out"
expect_grep "build the program with nvcc -cudart shared" "$out"
d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_grep '^call .*api=cuGetExportTable result=801 UNSUPPORTED' "$d"

if "$MAYA" run -g h100x1 -o "$TEST_TMP/run" -- "$prog" > "$TEST_TMP/run.out" 2>&1; then
    fail "maya run of a static-runtime program exited 0: $(cat "$TEST_TMP/run.out")"
fi
expect_grep "nvcc -cudart shared" "$TEST_TMP/run.out" "maya run shows the reason"
expect_grep "^status +FAILED" "$TEST_TMP/run.out"
# -q keeps one line: that it failed, and where the reason is
rc=0
"$MAYA" run -q -g h100x1 -o "$TEST_TMP/runq" -- "$prog" > "$TEST_TMP/runq.out" 2>&1 || rc=$?
expect_eq 1 "$rc" "maya run -q exit status"
expect_grep "the workload failed \\(rank 0 exited 1\\); the ranks' output is in $TEST_TMP/runq/logs" "$TEST_TMP/runq.out"
expect_grep "nvcc -cudart shared" "$TEST_TMP/runq/logs/rank-0.err"
