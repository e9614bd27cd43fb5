#!/usr/bin/env bash
# Iterations found on a program shaped as llm.c drives its training loop
# (tests/workloads/llmc_steps.cu): a warm-up of 200 launches of one kernel,
# then steps that each upload a table of a slightly different size, inside
# NVTX ranges "Train step N" with nested "forward" and "backward". Without a
# marker the 8 steps are found (not the warm-up's 200 launches, not broken
# by the sizes); the NVTX ranges are traced (maya run points NVTX v3 at the
# emulator's injection library) and a glob over their names marks the same
# steps; steps that launch a CUDA graph are found too; the first step is
# left out of the steady state, and the breakdown adds up to its iteration.
. "$MAYA_TOP/tests/lib.sh"

# check_report DIR STEPS MARKER: report.json's iterations and breakdown.
check_report() {
    python3 - "$1/report.json" "$2" "$3" <<'PY' || fail "$1/report.json is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
steps, marker = int(sys.argv[2]), sys.argv[3] or None
it = r["iterations"]
assert r["simulated"] and len(it) == steps, [x["time_s"] for x in it]
assert r["iteration_marker"] == marker, r["iteration_marker"]
assert [x["steady"] for x in it] == [False] + [True] * (steps - 1), it
assert it[0]["left_out"] == "warm-up" and r["steady_iterations"] == steps - 1, it
# the warm-up's 200 launches come before the first iteration
assert r["warmup_ops"] >= 200, r["warmup_ops"]
# a step: the upload, the forward's 6 and backward's 4 kernels, the update,
# the loss copied back: tens of microseconds on an H100, not one kernel's few
steady = sorted(x["time_s"] for x in it[1:])
assert steady[0] > 20e-6, steady
b = r["breakdown"]
total = b["compute_s"] + b["exposed_communication_s"] + b["exposed_copy_s"] + b["idle_s"]
assert abs(total - b["iteration_s"]) < 1e-9 * max(1, b["iteration_s"]), b
assert b["iterations"] == steps - 1 and b["compute_s"] > 0, b
assert abs(b["iteration_s"] - sum(x["time_s"] for x in it[1:]) / (steps - 1)) < 1e-9, (b, it)
# each iteration ends where the next one's time starts, within the job
for p, q in zip(it, it[1:]):
    assert abs(q["end_s"] - p["end_s"] - q["time_s"]) < 1e-9, (p, q)
assert 0 < it[0]["end_s"] and it[-1]["end_s"] <= r["makespan_s"] + 1e-9, (it, r["makespan_s"])
PY
}

d=$TEST_TMP/steps
"$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/llmc_steps" 8 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run llmc_steps failed: $(tail -20 "$TEST_TMP/out")"
check_report "$d" 8 ""
expect_grep '^found +8 iterations from the repeating sequence of ops' "$d/report.txt"
expect_grep '^warm-up +[0-9]+ ops before the first iteration' "$d/report.txt"
expect_grep '^left out +iteration 1 \(warm-up' "$d/report.txt"
dump "$d/traces/rank-0.mtrace" > "$TEST_TMP/dump"
expect_count 8 'api=nvtxRangePushA .*marker=push name="Train step [1-8]"$' "$TEST_TMP/dump"
expect_count 8 'api=nvtxRangePop .*marker=pop name="Train step [1-8]"$' "$TEST_TMP/dump"
expect_count 8 'marker=pop name="backward"$' "$TEST_TMP/dump"
# the uploads differ in size from step to step
[ "$(grep -c '^memcpy .*kind=h2d' "$TEST_TMP/dump")" -ge 8 ] || fail "expected the steps' uploads"
[ "$(grep '^memcpy .*kind=h2d' "$TEST_TMP/dump" | grep -o 'bytes=[0-9]*' | sort -u | wc -l)" -ge 7 ] ||
    fail "the uploads were expected to differ in size"

# the same steps by their NVTX ranges, by a glob over the numbered names
"$MAYA" report --iteration-marker 'Train step*' "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report --iteration-marker failed: $(cat "$TEST_TMP/out")"
check_report "$d" 8 'Train step*'
expect_grep '^found +8 iterations starting at each op or NVTX range matching "Train step\*"' "$d/report.txt"
# a kernel by its short name: the loss kernel, once a step
"$MAYA" report --iteration-marker loss "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report --iteration-marker loss failed: $(cat "$TEST_TMP/out")"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert len(r["iterations"]) == 8, r["iterations"]' \
    "$d/report.json" || fail "8 iterations from the loss kernel expected"

# steps that launch a CUDA graph
g=$TEST_TMP/graph
"$MAYA" run -q -g h100x1 -o "$g" -- "$WORKLOADS/llmc_steps" 8 graph > "$TEST_TMP/out" 2>&1 ||
    fail "maya run llmc_steps graph failed: $(tail -20 "$TEST_TMP/out")"
check_report "$g" 8 ""
expect_count 8 '^graph .*api=cudaGraphLaunch .* begin nodes=11$' <(dump "$g/traces/rank-0.mtrace")

# a user's own NVTX injection library stands
NVTX_INJECTION64_PATH=/nonexistent/libnvtx.so "$MAYA" run -q -g h100x1 -o "$TEST_TMP/own" -- \
    "$WORKLOADS/llmc_steps" 2 > "$TEST_TMP/out" 2>&1 || fail "maya run with NVTX_INJECTION64_PATH set failed"
expect_no_grep 'marker=push' <(dump "$TEST_TMP/own/traces/rank-0.mtrace") "the user's NVTX_INJECTION64_PATH was replaced"
echo "iterations: ok"
