#!/usr/bin/env bash
# The stand-in runtime works through LD_PRELOAD as through LD_LIBRARY_PATH
# (the same ops are traced), exports every symbol of the real libcudart
# with its version, and a process that loads the libraries but never calls
# CUDA writes no trace and prints nothing: a program that only registers
# its kernels, /bin/true and a shell.
. "$MAYA_TOP/tests/lib.sh"

# every symbol of cudart.symbols, versioned like the real one
nm -D --defined-only "$MAYA_LIBS/libcudart.so.13" | awk '{print $3}' | grep '@@libcudart.so.13$' |
    sed 's/@.*//' | sort -u > "$TEST_TMP/ours"
grep -v '^#' "$MAYA_TOP/emulator/cudart/cudart.symbols" | grep -v '^$' | sort -u > "$TEST_TMP/want"
missing=$(comm -23 "$TEST_TMP/want" "$TEST_TMP/ours")
[ -z "$missing" ] || fail "libcudart.so.13 lacks: $missing"
objdump -p "$MAYA_LIBS/libcudart.so.13" | grep -q 'SONAME *libcudart.so.13' || fail "soname is not libcudart.so.13"

RANK=0 emu "$TEST_TMP/lib" "$WORKLOADS/vector_add" 4096 > "$TEST_TMP/out" || fail "vector_add (LD_LIBRARY_PATH) failed"
RANK=0 MAYA_TRACE_DIR="$TEST_TMP/pre" LD_PRELOAD="$MAYA_LIBS/libcudart.so.13" "$WORKLOADS/vector_add" 4096 \
    > "$TEST_TMP/out2" 2> "$TEST_TMP/err2" || fail "vector_add (LD_PRELOAD) failed: $(cat "$TEST_TMP/err2")"
expect_grep "vector_add n=4096 blocks=16 threads=256: ok" "$TEST_TMP/out2"
[ -s "$TEST_TMP/err2" ] && fail "LD_PRELOAD run printed: $(cat "$TEST_TMP/err2")"
ops() { dump "$1" | grep -E '^(alloc|free|memcpy|memset|launch|sync) ' | sed -E 's/ seq=.* api=/ api=/; s/0x[0-9a-f]+//g'; }
ops "$TEST_TMP/lib/rank-0.mtrace" > "$TEST_TMP/ops1"
ops "$TEST_TMP/pre/rank-0.mtrace" > "$TEST_TMP/ops2"
[ -s "$TEST_TMP/ops1" ] || fail "no ops traced"
diff "$TEST_TMP/ops1" "$TEST_TMP/ops2" || fail "LD_PRELOAD and LD_LIBRARY_PATH traced different ops"

# no CUDA calls, no trace
no_trace() { # WHAT CMD...
    local what=$1 dir=$TEST_TMP/none
    shift
    rm -rf "$dir" && mkdir -p "$dir"
    RANK=0 MAYA_TRACE_DIR="$dir" "$@" > "$TEST_TMP/out" 2> "$TEST_TMP/err" || fail "$what failed: $(cat "$TEST_TMP/err")"
    [ -s "$TEST_TMP/err" ] && fail "$what printed on stderr: $(cat "$TEST_TMP/err")"
    [ -z "$(ls -A "$dir")" ] || fail "$what left a trace: $(ls "$dir")"
}
no_trace "no_cuda_calls" env LD_LIBRARY_PATH="$MAYA_LIBS" "$WORKLOADS/no_cuda_calls"
expect_grep "no_cuda_calls: done" "$TEST_TMP/out"
no_trace "no_cuda_calls (preload)" env LD_PRELOAD="$MAYA_LIBS/libcudart.so.13" "$WORKLOADS/no_cuda_calls"
no_trace "/bin/true" env LD_PRELOAD="$MAYA_LIBS/libcudart.so.13:$MAYA_LIBS/libcuda.so.1" /bin/true
no_trace "a shell" env LD_PRELOAD="$MAYA_LIBS/libcudart.so.13:$MAYA_LIBS/libcuda.so.1" sh -c 'echo hi; ls / >/dev/null'
expect_grep "^hi$" "$TEST_TMP/out"
