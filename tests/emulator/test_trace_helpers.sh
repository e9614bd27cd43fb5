#!/usr/bin/env bash
# A process a rank starts with the rank's environment (PyTorch's compile
# workers) and that uses CUDA writes its own trace beside the rank's, as
# rank-N.mtrace.pid-P.aux, instead of writing over the rank's trace; the
# rank's trace stays whole, and a trace left half-written by a crashed run
# does not stop the next run from taking the name.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/tr
mkdir -p "$d"
echo "left by a crashed run" > "$d/rank-0.mtrace.tmp"
RANK=0 emu "$d" python3 - "$MAYA_LIBS" > "$TEST_TMP/out" 2>&1 <<'PYEOF' || { cat "$TEST_TMP/out"; fail "rank with a helper failed"; }
import ctypes, os, subprocess, sys
rt = ctypes.CDLL(sys.argv[1] + "/libcudart.so.13")
n = ctypes.c_int()
assert rt.cudaGetDeviceCount(ctypes.byref(n)) == 0 and n.value > 0
# The helper: the same environment, its own CUDA use, done while we run.
helper = "import ctypes, sys; rt = ctypes.CDLL(sys.argv[1] + '/libcudart.so.13'); " \
         "n = ctypes.c_int(); assert rt.cudaGetDeviceCount(ctypes.byref(n)) == 0; print('helper', __import__('os').getpid())"
print(subprocess.run([sys.executable, "-c", helper, sys.argv[1]], check=True, capture_output=True, text=True).stdout.strip())
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 4096) == 0
print("rank", os.getpid())
PYEOF
helper=$(sed -n 's/^helper //p' "$TEST_TMP/out") rank=$(sed -n 's/^rank //p' "$TEST_TMP/out")
[ -n "$helper" ] && [ -n "$rank" ] || fail "expected both processes to report: $(cat "$TEST_TMP/out")"
[ -f "$d/rank-0.mtrace" ] || fail "no rank-0.mtrace: $(ls "$d")"
[ -f "$d/rank-0.mtrace.pid-$helper.aux" ] || fail "no helper trace rank-0.mtrace.pid-$helper.aux: $(ls "$d")"
[ ! -e "$d/rank-0.mtrace.tmp" ] || fail "the crashed run's rank-0.mtrace.tmp should have been taken over"
expect_no_grep 'cannot rename' "$TEST_TMP/out"
dump "$d/rank-0.mtrace" > "$TEST_TMP/rank.dump"
dump "$d/rank-0.mtrace.pid-$helper.aux" > "$TEST_TMP/helper.dump"
expect_grep "^header .* pid=$rank " "$TEST_TMP/rank.dump"
expect_grep '^alloc .*api=cudaMalloc ' "$TEST_TMP/rank.dump" "the rank's own work is in its trace"
expect_grep "^header .* pid=$helper " "$TEST_TMP/helper.dump"
expect_no_grep '^alloc ' "$TEST_TMP/helper.dump"
