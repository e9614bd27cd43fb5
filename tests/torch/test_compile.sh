#!/usr/bin/env bash
# torch.compile under `maya run`: Inductor's Triton kernels are compiled by
# Triton's bundled ptxas for the emulated GPU, loaded as modules (Inductor's
# static launcher: cuModuleLoad of the cubin file; Triton's own launcher:
# cuModuleLoadData), launched through the driver API and traced with name,
# grid and static features, PTX instruction counts among them; nothing is
# unsupported. Each Triton kernel's work is read from its own PTX, and every
# launch is priced from it (docs/kernel-cost.md). Its iterations are found
# without a marker: the first step's compilation and autotuning (thousands
# of kernel launches) is warm-up before them, not the loop.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

# maya run sets TRITON_LIBCUDA_PATH: Triton links its launcher against the emulated driver.
unset TRITON_LIBCUDA_PATH
steps=4
d=$TEST_TMP/compiled
torch_run "$d" h100x1 train_compiled.py $steps
check_rank_traces "$d" 1
check_report "$d"
dump=$d/dump-0
expect_eq "$(result "$d/logs/rank-0.out" steps)" $steps "steps trained"
expect_grep 'api=cuModuleLoad(Data)? result=0' "$dump" "the Triton kernels' cubins are loaded as modules"
# Inductor's kernels are named triton_<kind>_fused_...; each launch carries its grid.
n=$(grep -cE '^launch .*api=cuLaunchKernel(Ex)? result=0 kernel="triton_[a-z]+_fused[^"]*" grid=[1-9][0-9]*,1,1 ' "$dump" || true)
[ "$n" -ge $((3 * steps)) ] || fail "expected Triton kernels launched through the driver every step, found $n launches"
# Layer norm (a reduction: shuffles or shared memory) and GELU (exp2 in erf's
# approximation or tanh): what their PTX says they do.
expect_grep '^kernel .*name="triton_per_fused_native_layer_norm[^"]*" .* regs=[1-9][0-9]* .* ptx\.insts=[1-9][0-9]* ptx\.mma=0 ptx\.ld_global=[1-9]' "$dump" \
    "the layer-norm kernel traced with registers and PTX instruction counts"
expect_grep '^kernel .*name="triton_poi_fused_gelu[^"]*" .* ptx\.fma=[1-9]' "$dump" "the GELU kernel's FMAs"
n=$(grep -cE '^kernel .*name="triton_[^"]*" .* work=ptx sm=90 ' "$dump" || true)
t=$(grep -cE '^kernel .*name="triton_' "$dump" || true)
[ "$n" -ge 1 ] && [ "$n" -eq "$t" ] || fail "$n of $t Triton kernels carry a work summary read from their PTX"
# PyTorch's own kernels (the optimizer's) are SASS only: read through nvdisasm when present
if [ -x "${MAYA_NVDISASM:-}" ]; then
    expect_grep '^kernels +[1-9][0-9]* launches priced from their code$' "$d/report.txt" "every launch priced from its code"
else
    echo "no nvdisasm (scripts/nvdisasm.sh): PyTorch's SASS-only kernels are priced by the fallback rule"
    "$PY" - "$d/report.json" <<'PY' || fail "Triton kernels priced by the fallback rule (above)"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
bad = [n for n in k["without_code_by_name"] if n.startswith("triton_")]
assert k["priced_from_code"] > 0 and not bad, (k["priced_from_code"], bad)
PY
fi
"$MAYA" estimate launch "$d" triton_per_fused_native_layer_norm > "$TEST_TMP/ln.est" 2>&1 ||
    fail "maya estimate launch of the layer norm: $(cat "$TEST_TMP/ln.est")"
expect_grep '^code=ptx ' "$TEST_TMP/ln.est" "the layer norm priced from its PTX"
# the steps after the first (which compiles) are the iterations
expect_eq "$(report_field "$d" "len(r['iterations'])")" $((steps - 1)) "iterations found without a marker"
expect_eq "$(report_field "$d" "r['warmup_ops'] > 1000")" true "compilation and autotuning before the first iteration"
echo "torch.compile: ok"
