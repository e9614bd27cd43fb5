#!/usr/bin/env bash
# Kernels priced from the work their code does (docs/kernel-cost.md), on the
# kernels of tests/workloads/kernel_work.cu, whose work is known by hand:
# the work read from each kernel's PTX matches it (bytes, FLOPs), and each
# predicted time lies within physical bounds: no faster than its DRAM bytes
# at the datasheet bandwidth or its FLOPs at the datasheet peak, no slower
# than every byte the code touches at half the datasheet bandwidth (or a
# small share of the peak for compute). The trace alone is enough: the
# estimate reads no binary. With MAYA_KERNEL_WORK=0 the kernels have no
# code, and the report counts them as priced by the fallback rule.
. "$MAYA_TOP/tests/lib.sh"

t=$TEST_TMP/kw
RANK=0 emu "$t" "$WORKLOADS/kernel_work" > "$TEST_TMP/out" 2>&1 || fail "kernel_work failed: $(cat "$TEST_TMP/out")"
expect_grep "kernel_work: ok" "$TEST_TMP/out"
# the program's own event timing of its WMMA GEMM: below the tensor-core peak
tf=$(sed -n 's/^wmma_gemm: \([0-9.]*\) TFLOP\/s$/\1/p' "$TEST_TMP/out")
[ -n "$tf" ] || fail "kernel_work printed no TFLOP/s: $(cat "$TEST_TMP/out")"
awk -v t="$tf" 'BEGIN { exit !(t > 10 && t < 989.4) }' || fail "the program measured $tf TFLOP/s (H100 peak 989.4)"
dump "$t/rank-0.mtrace" > "$TEST_TMP/dump"
expect_count 6 '^kernel .* work=ptx sm=90 ' "$TEST_TMP/dump"
expect_no_grep 'loop_unresolved|truncated|work=damaged' "$TEST_TMP/dump" "a kernel whose loops were not all read"
expect_grep '^launch .*kernel="saxpy_grid.* extents=param@8:1073741824,param@16:1073741824$' "$TEST_TMP/dump" \
    "the launch records how far each pointer reaches"

# the trace, moved away from the program: nothing else is read
mkdir -p "$TEST_TMP/elsewhere"
cp "$t/rank-0.mtrace" "$TEST_TMP/elsewhere/"

# field NAME FILE: the value of NAME=... in FILE
field() {
    grep -oE "(^| )$1=[^ ]+" "$2" | head -1 | sed -E "s/^ ?$1=//"
}

# within LO VALUE HI WHAT
within() {
    awk -v lo="$1" -v v="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
        fail "$4: $2 is not within [$1, $3]"
}

# near GOT WANT WHAT: within 1 %
near() {
    awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 0.01 * w) }' ||
        fail "$3: $1, expected $2 (within 1%)"
}

# check KERNEL DRAM_BYTES FLOPS LO_US HI_US [GPU]: estimate one launch
check() {
    local o=$TEST_TMP/$1.${6:-h100}
    "$MAYA" estimate launch "$TEST_TMP/elsewhere" "$1" gpu="${6:-h100}" > "$o" 2>&1 ||
        fail "maya estimate launch $1: $(cat "$o")"
    cat "$o"
    expect_grep '^code=ptx ' "$o" "$1: priced from its code"
    [ "$2" = - ] || near "$(field dram_bytes "$o")" "$2" "$1: DRAM bytes"
    [ "$3" = - ] || near "$(field flops "$o")" "$3" "$1: FLOPs"
    within "$4" "$(field device_us "$o")" "$5" "$1: predicted microseconds on ${6:-h100}"
}

GiB=1073741824
hbm=3350e3   # H100 SXM datasheet bytes per microsecond
# row softmax, 16384 x 8192 fp32 (512 MiB): reads the matrix (three passes
# over each row, the later two from cache) and writes it once
check row_softmax "$GiB" - "$(awk "BEGIN{print $GiB/$hbm}")" "$(awk "BEGIN{print 2*$GiB/($hbm/2)}")"
# saxpy over 2^28 elements with a fixed grid (grid-stride loop): x read, y read and written
check saxpy_grid "$((3 * GiB))" "$((2 * 268435456))" "$(awk "BEGIN{print 3*$GiB/$hbm}")" "$(awk "BEGIN{print 3*$GiB/($hbm/2)}")"
check scale_guarded "$((2 * GiB))" "268435456" "$(awk "BEGIN{print 2*$GiB/$hbm}")" "$(awk "BEGIN{print 2*$GiB/($hbm/2)}")"
# Adam over 2^28 parameters: 4 arrays read, 3 written, whatever its seed
check adam_seeded "$((7 * GiB))" - "$(awk "BEGIN{print 7*$GiB/$hbm}")" "$(awk "BEGIN{print 7*$GiB/($hbm/2)}")"
# 2^20 threads x 4096 iterations x 2 FMAs: fp32 at 67 TFLOP/s at best, at least a quarter of it
check fma_chain - "$((1 << 34))" "$(awk "BEGIN{print 2^34/67e6}")" "$(awk "BEGIN{print 4*2^34/67e6}")"
# WMMA GEMM 4096^3, fp16 tensor cores: never above the 989 TFLOP/s peak, and
# a naive kernel (operands from global memory, no shared-memory tiling)
# reaches well above 10
f=$((2 * 4096 * 4096 * 4096))
check wmma_gemm - "$f" "$(awk "BEGIN{print $f/989.4e6}")" "$(awk "BEGIN{print $f/10e6}")"
within 10 "$(field tflops "$TEST_TMP/wmma_gemm.h100")" 989.4 "wmma_gemm TFLOP/s"
# the same trace on an A100 80GB (2039 GB/s datasheet)
check saxpy_grid "$((3 * GiB))" - "$(awk "BEGIN{print 3*$GiB/2039e3}")" "$(awk "BEGIN{print 3*$GiB/(2039e3/2)}")" a100
# the row softmax on a V100 (900 GB/s, 6 MiB of L2): its 640 resident blocks'
# rows (32 KiB each, 20 MiB) overflow the L2, so the two later passes reach
# DRAM again for all but 6 of every 20 MiB: at least 1 GiB + 0.7 GiB of
# DRAM traffic where the H100 and A100 (50 and 40 MB of L2) keep them
check row_softmax "$GiB" - "$(awk "BEGIN{print (1 + (1 - 6/20)) * $GiB/900e3}")" "$(awk "BEGIN{print 2*$GiB/(900e3/2)}")" v100

# the report: every launch priced from its code
d=$TEST_TMP/run
"$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/kernel_work" 8 > "$TEST_TMP/run.out" 2>&1 ||
    fail "maya run kernel_work failed: $(tail -20 "$TEST_TMP/run.out")"
expect_grep '^kernels +6 launches priced from their code$' "$d/report.txt"
python3 - "$d/report.json" <<'PY' || fail "report.json kernels (above)"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
assert k == {"launches": 6, "priced_from_code": 6, "without_code": 0, "without_code_sass_unread": 0,
            "without_code_by_name": {}}, k
PY

# a run directory: its kernels priced on the GPU the run recorded (gpu.conf,
# here capped at 350 W: lower clocks, a compute-bound kernel runs longer),
# whether TRACE names the run, its traces/ or a trace in it; gpu= overrides
sed -i 's/^\( *power_limit_watts = \)0$/\1350/' "$d/gpu.conf"
grep -q 'power_limit_watts = 350' "$d/gpu.conf" || fail "could not cap the recorded GPU: $(grep -n watts "$d/gpu.conf")"
"$MAYA" estimate launch "$d" fma_chain gpu=h100 > "$TEST_TMP/fma.installed" 2>&1 ||
    fail "estimate launch gpu=h100: $(cat "$TEST_TMP/fma.installed")"
for where in "$d" "$d/traces" "$d/traces/rank-0.mtrace"; do
    "$MAYA" estimate launch "$where" fma_chain > "$TEST_TMP/fma.recorded" 2>&1 ||
        fail "estimate launch $where: $(cat "$TEST_TMP/fma.recorded")"
    awk -v capped="$(field device_us "$TEST_TMP/fma.recorded")" -v full="$(field device_us "$TEST_TMP/fma.installed")" \
        'BEGIN { exit !(capped > 1.1 * full) }' ||
        fail "estimate launch $where: $(field device_us "$TEST_TMP/fma.recorded") us on the recorded 350 W GPU," \
             "$(field device_us "$TEST_TMP/fma.installed") us on the installed H100: expected the cap to slow it"
done
"$MAYA" estimate launch "$d" fma_chain cluster=no_such_node > "$TEST_TMP/bad" 2>&1 && fail "an unknown cluster accepted"
expect_grep 'cluster "no_such_node": no such file and no known cluster' "$TEST_TMP/bad"

# without reading code: the fallback rule, flagged kernel by kernel
d=$TEST_TMP/nocode
MAYA_KERNEL_WORK=0 "$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/kernel_work" 8 > "$TEST_TMP/nocode.out" 2>&1 ||
    fail "maya run kernel_work (MAYA_KERNEL_WORK=0) failed: $(tail -20 "$TEST_TMP/nocode.out")"
expect_grep '^kernels +0 launches priced from their code; 6 without code, priced by the fallback rule .*adam_seeded.* x 1' \
    "$d/report.txt"
python3 - "$d/report.json" <<'PY' || fail "report.json kernels without code (above)"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
assert k["launches"] == 6 and k["without_code"] == 6 and len(k["without_code_by_name"]) == 6, k
assert k["without_code_sass_unread"] == 0, k  # not read by choice, not for want of nvdisasm
PY
"$MAYA" estimate launch "$d" adam > "$TEST_TMP/adam.nocode" 2>&1 || fail "estimate launch without code: $(cat "$TEST_TMP/adam.nocode")"
expect_grep '^code=none priced_by=fallback ' "$TEST_TMP/adam.nocode"

# bad input: clear messages
"$MAYA" estimate launch "$TEST_TMP/elsewhere" no_such_kernel > "$TEST_TMP/bad" 2>&1 && fail "a kernel that is not there"
expect_grep 'no launch of a kernel whose name contains "no_such_kernel"' "$TEST_TMP/bad"
"$MAYA" estimate launch "$TEST_TMP/elsewhere" saxpy nth=0 > "$TEST_TMP/bad" 2>&1 && fail "nth=0 accepted"
expect_grep 'nth is "0"; expected a number from 1' "$TEST_TMP/bad"
"$MAYA" estimate launch "$TEST_TMP/elsewhere" saxpy colour=red > "$TEST_TMP/bad" 2>&1 && fail "an unknown key accepted"
expect_grep 'unknown key "colour"' "$TEST_TMP/bad"
"$MAYA" estimate launch "$TEST_TMP/missing" saxpy > "$TEST_TMP/bad" 2>&1 && fail "a missing trace accepted"
expect_grep 'missing: No such file' "$TEST_TMP/bad"
echo "kernel work: ok"
