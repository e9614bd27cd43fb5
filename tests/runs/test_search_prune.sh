#!/usr/bin/env bash
# maya search's pruning, flags, expressions, what-if table and trace reuse,
# over the bundled GPT (tests/workloads/minigpt.cu) on 2 emulated H100s
# (their usage errors are checked in test_search.sh).
#
# Pruning is measured, not trusted: the same space is searched in full
# (no rules) and with rules declared (micro-batch size memory-up, tensor
# parallelism memory-down, recompute memory-down and prefer-earlier); the
# pruned search must pick the full grid's best, every trial it marked oom
# without running must be oom in the full grid, and every trial it skipped
# as dominated must be slower there than the trial that dominated it.
# The global batch stays 8 sequences per data-parallel group x DP: the
# micro-batch count is the expression {=8 * tp / mbs} (DP = 2 / tp).
# Whether pruning dropped the best is judged on the full grid's own
# figures (the best of the full grid must be among the trials the pruned
# search ran), so that host-timing noise between the two searches cannot
# decide it; both measure host gaps on the cpu clock.
. "$MAYA_TOP/tests/lib.sh"
export MAYA_HOST_CLOCK=cpu

model=(--iters 3 --hidden 6144 --heads 32 --layers 8 --seq 2048)
space=(--param tp=1,2 --param mbs=1,2,4,8 --param recompute=none,selective,full)
cmd=("$WORKLOADS/minigpt" --tp {tp} --micro-batch-size {mbs} --micro-batches '{=8 * tp / mbs}'
     --recompute {recompute} "${model[@]}")
"$MAYA" search -g h100x2 -o "$TEST_TMP/full" "${space[@]}" -- "${cmd[@]}" > "$TEST_TMP/full.out" 2> "$TEST_TMP/full.err" ||
    fail "the full grid failed: $(tail -5 "$TEST_TMP/full.err")"
cat "$TEST_TMP/full.out"
"$MAYA" search -g h100x2 -o "$TEST_TMP/pruned" "${space[@]}" --prune mbs=memory-up --prune tp=memory-down \
    --prune recompute=memory-down,prefer-earlier -- "${cmd[@]}" > "$TEST_TMP/pruned.out" 2> "$TEST_TMP/pruned.err" ||
    fail "the pruned grid failed: $(tail -5 "$TEST_TMP/pruned.err")"
cat "$TEST_TMP/pruned.out"
expect_grep '^ +[0-9]+ .* oom: pruned \(memory rules\): needs no less memory than trials/[0-9a-f]{12} \(.*\), which ran out of memory$' \
    "$TEST_TMP/pruned.out"
expect_grep '^ +[0-9]+ .* pruned: pruned \(prefer-earlier recompute\): recompute=(none|selective) is valid \(trials/[0-9a-f]{12}, [0-9.]+ ms\)$' \
    "$TEST_TMP/pruned.out"
expect_grep '^pruned: [0-9]+ trials not run' "$TEST_TMP/pruned.out"
python3 - "$TEST_TMP/full/search.json" "$TEST_TMP/pruned/search.json" <<'PY' || fail "pruning changed the answer (above)"
import json, sys
full, pr = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda t: tuple(sorted(t["params"].items()))
grid = {key(t): t for t in full["trials"]}
assert full["trials_pruned"] == 0 and len(grid) == 24, full["trials_pruned"]
best = key(full["best"])
ran = {key(t): t for t in pr["trials"] if not t["pruned_by"]}
assert best in ran and ran[best]["status"] == "ok", (full["best"], ran.get(best))
# and the pruned search's own best is the full grid's best, or one within its noise of it
mine = grid[key(pr["best"])]
assert mine["status"] == "ok" and mine["iteration_time_s"] <= 1.01 * full["best"]["iteration_time_s"], (pr["best"], mine)
byid = {t["dir"][7:]: t for t in pr["trials"]}
kinds = set()
for t in pr["trials"]:
    if not t["pruned_by"]:
        assert not t["reason"] or "pruned" not in t["reason"], t
        continue
    g, by = grid[key(t)], byid[t["pruned_by"]]
    if t["status"] == "oom":
        assert by["status"] == "oom" and g["status"] == "oom", (t, g)
    else:
        assert t["status"] == "pruned" and by["status"] == "ok", t
        assert g["status"] != "ok" or g["iteration_time_s"] > grid[key(by)]["iteration_time_s"], (t, g, by)
    kinds.add(t["status"])
assert kinds == {"oom", "pruned"}, kinds
run = pr["trials_run"]
assert pr["trials_pruned"] == sum(1 for t in pr["trials"] if t["pruned_by"]) and run + pr["trials_pruned"] == 24
print(f"pruned {pr['trials_pruned']} of 24 (ran {run}); best {pr['best']['params']} as the full grid's")
PY
# --replay: random and CMA-ES over the full grid, running nothing; each
# answer is the grid's, and the budget counts only trials that would run
# (pruned and invalid ones are free)
for strat in random cmaes; do
    "$MAYA" search -q -g h100x2 -o "$TEST_TMP/replay-$strat" --replay "$TEST_TMP/full" "${space[@]}" --prune mbs=memory-up \
        --prune tp=memory-down --prune recompute=memory-down,prefer-earlier --strategy $strat --trials 6 --seed 3 -- \
        "${cmd[@]}" > "$TEST_TMP/replay-$strat.out" 2> "$TEST_TMP/replay-$strat.err" ||
        fail "--replay --strategy $strat failed: $(tail -5 "$TEST_TMP/replay-$strat.err")"
    expect_eq "$(ls "$TEST_TMP/replay-$strat/trials" | wc -l)" 0 "trial directories a replay made"
    python3 - "$TEST_TMP/full/search.json" "$TEST_TMP/replay-$strat/search.json" <<'PY' || fail "--replay $strat disagrees with the grid"
import json, sys
full, rep = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda t: tuple(sorted(t["params"].items()))
grid = {key(t): t for t in full["trials"]}
ran = [t for t in rep["trials"] if not t["pruned_by"]]
assert rep["trials_run"] == len(ran) == 6 and rep["trials_cached"] == 0, (rep["trials_run"], len(ran))
for t in ran:
    g = grid[key(t)]
    assert (t["status"], t["iteration_time_s"], t["trial_wall_s"]) == (g["status"], g["iteration_time_s"], g["trial_wall_s"]), (t, g)
print(f"replayed {rep['strategy']}: {len(ran)} run, {rep['trials_pruned']} pruned, best {rep['best']['params']}")
PY
done
"$MAYA" search -q -g h100x2 -o "$TEST_TMP/replay-bad" --replay "$TEST_TMP/full" --param mbs=1,2 --param tp=1,2 \
    --param recompute=none -- "${cmd[@]}" > /dev/null 2> "$TEST_TMP/replay-bad.err"
expect_eq "$?" 2 "exit status of --replay over another space"
expect_grep 'its parameter 1 is "tp", this search.s is "mbs"' "$TEST_TMP/replay-bad.err"

# the expression's inexact division is a failed trial, never run
"$MAYA" search -q -g h100x2 -o "$TEST_TMP/expr" --param mbs=3 -- "$WORKLOADS/minigpt" --micro-batch-size {mbs} \
    --micro-batches '{=8 / mbs}' "${model[@]}" > "$TEST_TMP/expr.out" 2>&1
expect_eq "$?" 1 "exit status of a search with no valid trial"
expect_grep '^ +1  3  .* failed: \{=...\}: 8 / 3 is not a whole number$' "$TEST_TMP/expr.out"

# What-if over GPU types and counts (a model whose tp=1 does not fit two
# H100s): the B200 trial of each configuration
# re-reports the H100 trial's trace when that one fitted (the same ranks),
# agreeing with an emulated B200 run; one that ran out on an H100 is
# emulated on the larger B200. GPU-hours and cost per 1,000 iterations.
cat > "$TEST_TMP/pod.conf" <<'CONF'
cluster "pod" {
    gpu = "H100-SXM"
    gpus_per_node = 8
    intra_latency_us = 1
    nics_per_node = 8
    nic_gbps = 50
    nic_latency_us = 2
    price_per_gpu_hour = 3
}
CONF
model=(--iters 3 --hidden 4096 --heads 32 --layers 20 --seq 2048)
whatif() {
    "$MAYA" search -o "$TEST_TMP/whatif$1" -g h100x2,b200x2,h100x4 "${@:2}" --param tp=1,2 -- \
        "$WORKLOADS/minigpt" --tp {tp} "${model[@]}" > "$TEST_TMP/whatif$1.out" 2> "$TEST_TMP/whatif$1.err" ||
        fail "the what-if search failed: $(tail -5 "$TEST_TMP/whatif$1.err")"
}
whatif 1 --price 2
cat "$TEST_TMP/whatif1.out"
expect_grep '^   #  tp  gpus     iteration  peak memory  GPU-h/1k it  cost/1k it  trial         status$' "$TEST_TMP/whatif1.out"
expect_grep '^ +[0-9]+  2   b200x2 .* ok: \(re-reported from its trace\)$' "$TEST_TMP/whatif1.out"
expect_grep '^ +[0-9]+  1   b200x2 .* ok$' "$TEST_TMP/whatif1.out" "tp=1 on B200 (oom on H100) was emulated"
expect_grep '6 trials finished \(5 run, 0 from the cache, 0 pruned, 1 re-reported\)' "$TEST_TMP/whatif1.err"
MAYA_HOST_CLOCK=cpu "$MAYA" run -q -g b200x2 -o "$TEST_TMP/b200" -- "$WORKLOADS/minigpt" --tp 2 "${model[@]}" ||
    fail "maya run -g b200x2 failed"
python3 - "$TEST_TMP/whatif1/search.json" "$TEST_TMP/b200/report.json" <<'PY' || fail "the what-if figures are wrong (above)"
import json, sys
s, run = (json.load(open(p)) for p in sys.argv[1:3])
assert s["trials_reused"] == 1, s["trials_reused"]
for t in s["trials"]:
    if t["status"] != "ok":
        continue
    n = int(t["gpus"].split("x")[1])
    assert t["gpu_count"] == n and t["price_per_gpu_hour"] == 2
    h = t["iteration_time_s"] * 1000 * n / 3600
    assert abs(t["gpu_hours_per_1k_iterations"] - h) <= 1e-6 * h and abs(t["cost_per_1k_iterations"] - 2 * h) <= 2e-6 * h
re = [t for t in s["trials"] if t["reused_trace_of"]][0]
assert re["params"] == {"tp": "2", "gpus": "b200x2"}, re
assert abs(re["iteration_time_s"] - run["iteration_time_s"]) <= 1e-3 * run["iteration_time_s"], (re, run["iteration_time_s"])
assert re["peak_memory_bytes"] == run["peak_memory_bytes"]
PY
# the cluster file's price; --no-reuse emulates every trial
whatif 2 --cluster "$TEST_TMP/pod.conf" --no-reuse
expect_grep '6 trials finished \(6 run, 0 from the cache\)' "$TEST_TMP/whatif2.err"
python3 - "$TEST_TMP/whatif2/search.json" <<'PY' || fail "the cluster's price was not used"
import json, sys
s = json.load(open(sys.argv[1]))
assert all(t["price_per_gpu_hour"] == 3 for t in s["trials"]), [t["price_per_gpu_hour"] for t in s["trials"]]
assert s["trials_reused"] == 0
PY

