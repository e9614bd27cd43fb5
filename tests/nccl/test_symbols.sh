#!/usr/bin/env bash
# maya's libnccl.so.2 stands in for the real one: same soname, the same
# exported names without symbol versions (ncclX and pncclX), NCCL's version
# and error strings; a call it does not implement returns an NCCL error, is
# reported once on stderr and counted in the trace.
. "$MAYA_TOP/tests/lib.sh"

lib=$MAYA_LIBS/libnccl.so.2
real=${CUDA_HOME:-/usr/local/cuda}/lib64/libnccl.so.2
objdump -p "$lib" | grep -q "SONAME *libnccl.so.2$" || fail "$lib has no soname libnccl.so.2"
objdump -T "$lib" | grep -E ' (p?nccl[A-Za-z]+)$' | grep -v ' Base ' && fail "exports carry symbol versions"
nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$TEST_TMP/ours"
grep -v '^#' "$MAYA_TOP/emulator/nccl/nccl.symbols" | sort > "$TEST_TMP/list"
cmp -s "$TEST_TMP/ours" "$TEST_TMP/list" || fail "exports differ from nccl.symbols: $(diff "$TEST_TMP/list" "$TEST_TMP/ours" | head)"
if [ -f "$real" ]; then
    nm -D --defined-only "$real" | awk '{print $3}' | sort > "$TEST_TMP/real"
    missing=$(comm -23 "$TEST_TMP/real" "$TEST_TMP/ours")
    [ -z "$missing" ] || fail "symbols of the real libnccl missing: $missing"
fi
expect_grep '^pncclAllReduce$' "$TEST_TMP/ours"

mkdir -p "$TEST_TMP/tr"
RANK=0 MAYA_TRACE_DIR=$TEST_TMP/tr python3 - "$lib" > "$TEST_TMP/out" 2> "$TEST_TMP/err" <<'PY' || fail "ctypes calls failed: $(cat "$TEST_TMP/err")"
import ctypes, sys
nccl = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int()
assert nccl.ncclGetVersion(ctypes.byref(v)) == 0
print("version", v.value)
nccl.ncclGetErrorString.restype = ctypes.c_char_p
nccl.pncclGetErrorString.restype = ctypes.c_char_p
print("error6", nccl.ncclGetErrorString(6).decode())
print("perror5", nccl.pncclGetErrorString(5).decode())
for i in range(2):
    print("devcomm", nccl.ncclDevCommCreate(None, None, None))
print("null-destroy", nccl.ncclCommDestroy(None))
print("bad-count", nccl.ncclCommCount(None, ctypes.byref(v)))
nccl.ncclGetLastError.restype = ctypes.c_char_p
print("last", nccl.ncclGetLastError(None).decode())
PY
expect_grep "^version 22809$" "$TEST_TMP/out"
expect_grep "^error6 remote process exited or there was a network error$" "$TEST_TMP/out"
expect_grep "^perror5 invalid usage \(run with NCCL_DEBUG=WARN for details\)$" "$TEST_TMP/out"
expect_count 2 "^devcomm 5$" "$TEST_TMP/out"
expect_grep "^null-destroy 0$" "$TEST_TMP/out"
expect_grep "^bad-count 4$" "$TEST_TMP/out"
expect_grep "^last ncclCommCount: the communicator is NULL or was destroyed$" "$TEST_TMP/out"
expect_count 1 "ncclDevCommCreate is not supported by the emulator" "$TEST_TMP/err"
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
expect_count 2 "^call .*api=ncclDevCommCreate result=5 UNSUPPORTED" "$TEST_TMP/dump"
expect_grep "^end .*unsupported_calls=2 " "$TEST_TMP/dump"
