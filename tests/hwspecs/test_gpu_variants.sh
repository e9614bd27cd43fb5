#!/usr/bin/env bash
# GPU descriptions that are not the installed ones: a GPU under a new name
# keeps the learned models of its architecture (chosen by compute
# capability, scaled by its own figures), another architecture does not
# borrow them, and a description may state a power limit or an SM clock
# limit that the estimator honours (compute peaks scaled to the clock the
# limit allows, man maya-hwspec(5) "Clocks and power"); the report says
# which models served and which clocks. Bad limits are refused.
. "$MAYA_TOP/tests/lib.sh"

est() { "$MAYA" estimate "$@"; }
val() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" | head -1; }

hw=$TEST_TMP/hw
cp -r "$MAYA_BUILD/share/maya/hwspecs" "$hw"
src=$hw/gpus/h100-sxm.conf
# variant NAME ALIAS EXTRA_PERF_LINES: a copy of the H100 under another key
variant() {
    sed -e "s/^gpu \"H100-SXM\"/gpu \"$1\"/" -e "s/aliases = {.*}/aliases = {\"$2\"}/" \
        -e "s/^        tdp_watts = 700\$/        tdp_watts = 700\n$3/" "$src" > "$hw/gpus/$2.conf"
}
variant H100-RENAMED h100-renamed ""
variant H100-500W h100-500w "        power_limit_watts = 500"
variant H100-1500MHZ h100-1500mhz "        sm_clock_limit_mhz = 1500"
# another architecture under the H100's figures: compute capability 7.5 has no models
sed -e 's/^gpu "H100-SXM"/gpu "OTHER-ARCH"/' -e 's/aliases = {.*}/aliases = {"other-arch"}/' \
    -e 's/^        major = 9$/        major = 7/' -e 's/^        minor = 0$/        minor = 5/' "$src" > "$hw/gpus/other.conf"
export MAYA_HWSPEC_DIR=$hw
for f in "$hw"/gpus/*.conf; do
    "$MAYA" hwspecs check "$f" > /dev/null || fail "$f does not parse"
done

# a new name: the H100's learned models, the H100's times
ref=$(est gemm m=4096 n=4096 k=4096 dtype=bf16 gpu=h100)
out=$(est gemm m=4096 n=4096 k=4096 dtype=bf16 gpu=h100-renamed)
echo "$out" | grep -q '^family=gemm gpu=H100-RENAMED model=learned .* extrapolated=0$' || fail "renamed H100's GEMM: $out"
expect_eq "$(echo "$out" | val device_us)" "$(echo "$ref" | val device_us)" "renamed H100's GEMM time"
out=$(est kernel bytes=64M dtype=fp16 class=norm gpu=h100-renamed)
echo "$out" | grep -q 'model=learned .* extrapolated=0$' || fail "renamed H100's norm kernel: $out"
# another architecture: no borrowed model
out=$(est gemm m=4096 n=4096 k=4096 dtype=bf16 gpu=other-arch)
echo "$out" | grep -q 'model=analytical .* extrapolated=1$' || fail "compute capability 7.5 borrowed a model: $out"

# 500 W of 700: clocks x ((500/700 - 0.3) / 0.7)^(1/3) = 0.839590; a
# compute-bound GEMM takes 1/0.839590 = 1.191057 times as long, the
# memory-bound kernel as long as at full power
out=$(est gemm m=8192 n=8192 k=8192 dtype=bf16 gpu=h100-500w)
echo "$out" | grep -q 'model=learned .* extrapolated=0$' || fail "500 W H100's GEMM: $out"
ref=$(est gemm m=8192 n=8192 k=8192 dtype=bf16 gpu=h100)
expect_near "$(echo "$out" | val device_us)" "$(awk -v t="$(echo "$ref" | val device_us)" 'BEGIN { print t * 1.191057 }')" 0.005 \
    "8192^3 bf16 GEMM at 500 W"
for m in analytical learned; do
    a=$(est kernel bytes=1G dtype=fp16 class=norm gpu=h100-500w model=$m | val device_us)
    b=$(est kernel bytes=1G dtype=fp16 class=norm gpu=h100 model=$m | val device_us)
    expect_eq "$a" "$b" "memory-bound kernel at 500 W ($m)"
done
# SM clock locked at 1500 MHz: tensor work x 1830/1500, CUDA-core work x 1980/1500
a=$(est gemm m=8192 n=8192 k=8192 dtype=bf16 gpu=h100-1500mhz model=analytical | val device_us)
b=$(est gemm m=8192 n=8192 k=8192 dtype=bf16 gpu=h100 model=analytical | val device_us)
expect_near "$a" "$(awk -v t="$b" 'BEGIN { print t * 1830 / 1500 }')" 0.005 "bf16 GEMM at 1500 MHz"
a=$(est gemm m=8192 n=8192 k=8192 dtype=fp32 gpu=h100-1500mhz model=analytical | val device_us)
b=$(est gemm m=8192 n=8192 k=8192 dtype=fp32 gpu=h100 model=analytical | val device_us)
expect_near "$a" "$(awk -v t="$b" 'BEGIN { print t * 1980 / 1500 }')" 0.005 "fp32 GEMM at 1500 MHz"

# the report says which models served and which clocks; the run directory
# keeps the limit, so that a re-report without MAYA_HWSPEC_DIR keeps it
d=$TEST_TMP/run
"$MAYA" run -q -g h100-500wx1 -o "$d" -- "$WORKLOADS/gemm_cublas" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run on the 500 W H100 failed: $(cat "$TEST_TMP/out")"
expect_grep "^hardware   GPU H100-500W as the run recorded it \(gpu.conf\), SM clock 1662 MHz of 1980 \(CUDA cores\), 1536 MHz of 1830 \(tensor cores\) under its power limit 500 W of 700 W; " "$d/report.txt"
expect_grep "^models     gemm from H100-SXM \(same compute capability 9.0\); kernel from H100-SXM \(same compute capability 9.0\); " "$d/report.txt"
expect_grep "^        power_limit_watts = 500$" "$d/gpu.conf"
cp "$d/report.json" "$TEST_TMP/first.json"
(unset MAYA_HWSPEC_DIR; "$MAYA" report -q "$d") || fail "maya report of the 500 W run failed"
cmp -s "$d/report.json" "$TEST_TMP/first.json" || fail "re-reported without MAYA_HWSPEC_DIR, the 500 W run changed"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert 'H100-SXM' in r['learned_models'], r" "$d/report.json" ||
    fail "report.json learned_models"
# B200's report: no model of compute capability 10.0
d2=$TEST_TMP/b200
"$MAYA" run -q -g b200x1 -o "$d2" -- "$WORKLOADS/gemm_cublas" > /dev/null 2>&1 || fail "maya run on B200 failed"
expect_grep "^models     no learned model for compute capability 10.0: analytical everywhere$" "$d2/report.txt"

# NVML reports the cap as the enforced limit (the TDP stays the default)
mkdir -p "$TEST_TMP/nvml"
MAYA_GPU=h100-500w MAYA_GPUS_PER_NODE=1 RANK=0 LD_LIBRARY_PATH=$MAYA_LIBS MAYA_TRACE_DIR=$TEST_TMP/nvml \
    "$WORKLOADS/nvml_query" "$MAYA_TOP/emulator/nvml/nvml.symbols" > "$TEST_TMP/nvml.out" 2>&1 ||
    fail "nvml_query on the 500 W H100 failed: $(tail -5 "$TEST_TMP/nvml.out")"
expect_grep '^gpu 0 name="NVIDIA H100 80GB HBM3" .* power_limit_mw=500000 power_mw=70000 sm_mhz=1980 ' "$TEST_TMP/nvml.out"

# bad limits: file:line and what is allowed
bad() {
    sed -e "s/^        tdp_watts = 700\$/        tdp_watts = 700\n$1/" "$MAYA_BUILD/share/maya/hwspecs/gpus/h100-sxm.conf" > "$TEST_TMP/bad.conf"
    "$MAYA" hwspecs check "$TEST_TMP/bad.conf" > "$TEST_TMP/bad.out" 2>&1 && fail "accepted: $1"
    expect_grep "$2" "$TEST_TMP/bad.out"
}
bad "        power_limit_watts = 200" 'bad.conf:[0-9]+: gpu "H100-SXM": perf power_limit_watts = 200: expected more than the power that does not follow the clock \(static_power_share x tdp_watts = 210 W\)'
bad "        power_limit_watts = -1" 'perf power_limit_watts and sm_clock_limit_mhz must not be negative'
bad "        static_power_share = 0.95" 'perf static_power_share is 0.95; expected 0 to 0.9'
bad "        sm_clock_limit_mhz = fast" 'bad.conf:[0-9]+'
exit 0
