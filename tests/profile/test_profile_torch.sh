#!/usr/bin/env bash
# maya profile on PyTorch (the project's .venv), forwarding to maya's
# emulator libraries in place of a GPU: libs_ops.py hands cuBLAS, cuBLASLt
# and cuDNN its matmuls, a convolution with both backward passes (cuDNN's
# backend graphs), batch norm (the legacy API) and causal attention
# forward and backward (backend graphs), besides PyTorch's own kernels.
# The profile holds the device ops an emulated run records, each measured;
# maya profile --compare matches every op of maya run's prediction.
# torch.compile (train_compiled.py): Inductor's Triton kernels, loaded as
# modules and launched through the driver functions PyTorch binds with
# dlsym on libcuda.so.1, autotuning included, are in the profile as in the
# emulated run, each measured. (Each run compiles from nothing, so that
# both take the same path; and the emulator under the profiler writes a
# trace too, so that its device clock times the autotuner's events with
# the estimator's durations, as in the emulated run: both pick the same
# configurations.)
# test: alone
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/profile/profile_lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

script=$TORCH_WORKLOADS/libs_ops.py
RANK=0 emu "$TEST_TMP/emu" "$PY" "$script" > "$TEST_TMP/emu.out" 2>&1 ||
    fail "libs_ops.py under the emulator failed: $(tail -20 "$TEST_TMP/emu.out")"
RANK=0 profile_run "$TEST_TMP/prof" "$PY" "$script" > "$TEST_TMP/prof.out" 2>&1 ||
    fail "libs_ops.py under the profiler failed: $(tail -20 "$TEST_TMP/prof.out")"
expect_grep "^libs_ops: ok " "$TEST_TMP/prof.out"
same_ops "$TEST_TMP/emu/rank-0.mtrace" "$TEST_TMP/prof/rank-0.mtrace" "libs_ops.py"
# cuDNN's backend graphs, with their shapes
d='^dnn +api=cudnnBackendExecute result=0'
expect_grep "$d op=conv_fwd pad=1,1 .* x=dtype0\[8,3,32,32\]" "$TEST_TMP/same.p.ops"
expect_grep "$d op=conv_bwd_data " "$TEST_TMP/same.p.ops"
expect_grep "$d op=conv_bwd_filter " "$TEST_TMP/same.p.ops"
expect_grep "$d op=sdpa_fwd causal=1 scale=0.125 .* q=dtype9\[2,8,256,64\]" "$TEST_TMP/same.p.ops"
expect_grep "$d op=sdpa_bwd causal=1 scale=0.125 " "$TEST_TMP/same.p.ops"
expect_count 5 "$d " "$TEST_TMP/same.p.ops"

# maya profile and maya run of the same script: every predicted op matched
run=$TEST_TMP/run prof=$TEST_TMP/pdir
"$MAYA" run -q -g h100x1 -o "$run" -- "$PY" "$script" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run libs_ops.py failed: $(tail -20 "$TEST_TMP/out")"
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -q -o "$prof" -- "$PY" "$script" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile libs_ops.py failed: $(tail -20 "$TEST_TMP/out")"
"$MAYA" profile --compare "$prof" "$run" > "$TEST_TMP/cmp" 2>&1 || fail "maya profile --compare failed: $(tail -20 "$TEST_TMP/cmp")"
python3 - "$run/compare.json" <<'PY' || fail "not every op of the run was matched (above)"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["device_ops"] >= 46 and c["matched_ops"] == c["device_ops"], (c["device_ops"], c["matched_ops"])
assert c["families"]["conv"]["ops"] == 3 and c["families"]["attention"]["ops"] == 2, c["families"]
PY

# torch.compile; Triton finds the driver it links its launcher with here
export TRITON_LIBCUDA_PATH=$MAYA_LIBS
compiled=$TORCH_WORKLOADS/train_compiled.py
(cd "$TORCH_WORKLOADS" && RANK=0 TORCHINDUCTOR_CACHE_DIR=$TEST_TMP/ind.emu TRITON_CACHE_DIR=$TEST_TMP/tri.emu \
    emu "$TEST_TMP/c.emu" "$PY" "$compiled" 2) > "$TEST_TMP/c.emu.out" 2>&1 ||
    fail "train_compiled.py under the emulator failed: $(tail -20 "$TEST_TMP/c.emu.out")"
(cd "$TORCH_WORKLOADS" && RANK=0 TORCHINDUCTOR_CACHE_DIR=$TEST_TMP/ind.prof TRITON_CACHE_DIR=$TEST_TMP/tri.prof \
    MAYA_TRACE_DIR=$TEST_TMP/c.under profile_run "$TEST_TMP/c.prof" "$PY" "$compiled" 2) > "$TEST_TMP/c.prof.out" 2>&1 ||
    fail "train_compiled.py under the profiler failed: $(tail -20 "$TEST_TMP/c.prof.out")"
same_ops "$TEST_TMP/c.emu/rank-0.mtrace" "$TEST_TMP/c.prof/rank-0.mtrace" "train_compiled.py"
n=$(grep -cE '^launch +api=cuLaunchKernel(Ex)? result=0 kernel="triton_[a-z]+_fused' "$TEST_TMP/same.p.ops" || true)
[ "$n" -ge 6 ] || fail "expected Inductor's Triton kernels launched through the driver each step, found $n"
exit 0
