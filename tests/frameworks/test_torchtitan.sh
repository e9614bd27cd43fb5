#!/usr/bin/env bash
# torchtitan 0.3.0's own trainer (tests/workloads/frameworks/torchtitan_llama.py)
# trains its Llama 3 debug model on one emulated H100 under `maya run`: FSDP,
# selective activation checkpointing, FlexAttention compiled and autotuned
# by Inductor, forward and backward captured in a CUDA graph. The report
# finds the steps without a marker: step 1 runs the graph's warm-up eagerly,
# step 2 captures it, steps 3..N replay it, so N - 2 iterations, and
# Inductor's autotuning before them (each candidate kernel benchmarked a
# hundred times between events, thousands of launches) is warm-up, reported
# as emulation time, not predicted time. Nothing is unsupported, the peak
# memory holds the model's state and what torchtitan saw reserved, and
# torchtitan's log says it trained every step.
#
# torchtitan lives in .venv-torchtitan/ (scripts/venv.sh --torchtitan; make
# test and make test-frameworks-long install it); without it the test is
# skipped. Its pipeline-parallel and 3D variants are long tests.
# MAYA_VALUES declares trunc_normal_'s `mask.any()` false: its random values
# are not computed, and undeclared the initialisation loops for ever
# (docs/compatibility.md).
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=6
d=$TEST_TMP/llama
titan_run "$d" h100x1 $steps
check_rank_traces "$d" 1
check_report "$d"

# torchtitan's own log: every step trained, the graph captured once; and
# Inductor's (on stderr): the attention kernels autotuned
out=$d/logs/rank-0.out
expect_count 1 'Training completed' "$out"
expect_count $steps 'step: +[0-9]+ ' "$out"
expect_grep "step: +$steps " "$out"
expect_count 1 'Recorded CUDA graph' "$out"
expect_grep 'AUTOTUNE benchmarking takes' "$d/logs/rank-0.err"

# the steps, not the autotuning's benchmark loops, are the iterations
expect_eq "$(report_field "$d" "r['iterations_found']")" $((steps - 2)) \
    "iterations found for $steps steps (the first two: the CUDA graph's warm-up and capture)"
expect_eq "$(report_field "$d" "r['steady_iterations']")" $((steps - 3)) "steady iterations"
t=$(report_field "$d" "r['iteration_time_s']")
# a replayed step of this model is host-bound at about 12 ms here; one
# autotuning candidate's benchmark, taken for an iteration, is about 2 s
"$PY" -c "import sys; sys.exit(not 0 < float(sys.argv[1]) < 0.2)" "$t" ||
    fail "iteration $t s: not a step of the debug model"
bench=$(grep -c '^launch .*kernel="triton_flex_attention_backward"' "$d/dump-0" || true)
[ "$bench" -ge 100 ] || fail "$bench launches of the autotuned template, expected its benchmarks (at least 100)"
warm=$(report_field "$d" "r['warmup_ops']")
[ "$warm" -gt "$bench" ] || fail "$warm ops of warm-up, fewer than the $bench benchmark launches"
emu=$(report_field "$d" "r['warmup_emulation_s']")
"$PY" -c "import sys; sys.exit(not float(sys.argv[1]) > 1)" "$emu" ||
    fail "warm-up emulated in $emu s: the autotuning alone takes seconds"
expect_grep '^warm-up +[0-9]+ ops before the first iteration' "$d/report.txt"
expect_grep '^ +[0-9.]+ s of emulation on this machine \([a-z]+ clock\), not predicted time' "$d/report.txt"

# memory: the model's state in fp32 (weights, gradients, Adam's two moments:
# 16 bytes a parameter) and what torchtitan saw reserved ("memory: 0.23GiB"),
# and at most 512 MiB above that
params=$(sed -n 's/.*size: \([0-9,]*\) total parameters.*/\1/p' "$out" | tr -d , | head -1)
[ -n "$params" ] || fail "no parameter count in torchtitan's log $out"
gib=$(sed -n 's/.*memory: *\([0-9.]*\)GiB.*/\1/p' "$out" | sort -n | tail -1)
[ -n "$gib" ] || fail "no memory figure in torchtitan's log $out"
peak=$(report_field "$d" "r['ranks'][0]['peak_memory_bytes']")
"$PY" - "$peak" "$params" "$gib" <<'PY' || fail "peak $peak bytes: not within the model state ($params parameters) and torchtitan's ${gib} GiB reserved (+512 MiB)"
import sys
peak, params, gib = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
reserved = (gib - 0.005) * 2**30  # torchtitan prints two decimals
sys.exit(not (peak >= 16 * params and peak >= reserved and peak <= (gib + 0.005) * 2**30 + 512 * 2**20))
PY
echo "torchtitan llama3 debug model: ok ($steps steps, iteration $t s, warm-up $emu s of emulation)"
