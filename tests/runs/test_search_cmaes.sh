#!/usr/bin/env bash
# maya search --strategy cmaes over a space too large to grid cheaply: the
# bundled bowl workload (tests/workloads/bowl.cu) on one emulated H100 sets
# 1 + (a-6.055)^2 + (b-2.445)^2 + (c-4.715)^2 GiB a step, so its simulated
# iteration time (analytical estimator: bytes over bandwidth) is smallest at
# a=6 b=2 c=5; far corners do not fit the GPU (oom) and c=x fails. The
# centres are off the values' grid so that no two configurations cost the
# same (the closest differ by 0.01 GiB, 5.6 us; host gaps on the cpu clock
# vary by well under 1 us): the ranking, and so the CMA-ES's path, does not
# hang on noise. 10 x 10 x 8 =
# 800 combinations: a full grid must name a=6 b=2 c=5 best, and a CMA-ES in
# another directory must find the same best in at most its default budget of
# 20 x 3 + 20 = 80 trials; the same seed must run the same trials, --trials
# bound the distinct trials, and spaces CMA-ES has nothing to do in run whole.
. "$MAYA_TOP/tests/lib.sh"

space=(--param a=0,1,2,3,4,5,6,7,8,9 --param b=0,1,2,3,4,5,6,7,8,9 --param c=x,0,1,2,3,4,5,6)
search() {
    local dir=$1
    shift
    "$MAYA" search -g h100x1 --estimator analytical -o "$dir" "$@" "${space[@]}" -- \
        "$WORKLOADS/bowl" 6.055:{a} 2.445:{b} 4.715:{c}
}
export MAYA_HOST_CLOCK=cpu
# The trials of DIR/search.json in the order the search drew them.
drawn() {
    python3 -c '
import json, sys
for x in sorted(json.load(open(sys.argv[1]))["trials"], key=lambda x: x["order"]):
    print(x["order"], x["dir"])' "$1/search.json"
}
best='^best: a=6 b=2 c=5 \(0\.[0-9]+ ms per iteration, 1\.[0-9]+ GiB peak; trials/[0-9a-f]{12}\)$'

# The grid: every combination, the optimum best, oom and failures among them.
search "$TEST_TMP/grid" -q -j 2 > "$TEST_TMP/grid.out" 2>&1 || fail "grid search failed: $(tail "$TEST_TMP/grid.out")"
expect_grep "$best" "$TEST_TMP/grid.out" "the grid's best"
expect_count 100 ' failed: rank 0 exit 2: bowl: "4\.715:x": expected C:V' "$TEST_TMP/grid.out"
expect_grep ' oom: out of GPU memory' "$TEST_TMP/grid.out"

# CMA-ES: the same best, in its own directory, running at most 80 trials.
search "$TEST_TMP/cma" --strategy cmaes -j 2 > "$TEST_TMP/cma.out" 2> "$TEST_TMP/cma.err" ||
    fail "cmaes search failed: $(tail "$TEST_TMP/cma.err")"
cat "$TEST_TMP/cma.err" "$TEST_TMP/cma.out"
expect_grep '^maya search: cmaes, at most 80 trials run \(800 combinations\), 2 at a time' "$TEST_TMP/cma.err"
expect_grep "$best" "$TEST_TMP/cma.out" "the CMA-ES's best"
cmp -s "$TEST_TMP/cma.out" "$TEST_TMP/cma/search.txt" || fail "stdout and search.txt differ"
python3 - "$TEST_TMP/grid/search.json" "$TEST_TMP/cma/search.json" > "$TEST_TMP/cma.order" <<'PY' ||
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:])
assert g["strategy"] == "grid" and g["trials_run"] == 800, (g["strategy"], g["trials_run"])
assert c["strategy"] == "cmaes" and c["trials_budget"] == 80 and c["population"] == 7, c
t = c["trials"]
assert c["trials_run"] == len(t) <= 80 and c["trials_cached"] == 0, (c["trials_run"], len(t))
assert len({x["dir"] for x in t}) == len(t), "a configuration ran twice"
assert sorted(x["order"] for x in t) == list(range(1, len(t) + 1)), "orders"
assert c["best"]["params"] == g["best"]["params"] == {"a": "6", "b": "2", "c": "5"}, (c["best"], g["best"])
# every trial scored as the grid scored it (same directory name, same
# result, the same time but for host gaps)
gt = {x["dir"]: x for x in g["trials"]}
for x in t:
    y = gt[x["dir"]]
    assert (x["params"], x["status"]) == (y["params"], y["status"]), (x, y)
    assert x["status"] != "ok" or abs(x["iteration_time_s"] - y["iteration_time_s"]) <= 1e-3 * y["iteration_time_s"], (x, y)
# ranks: valid fastest first, then oom, then failed
rank = {"ok": 0, "oom": 1, "failed": 2}
assert [rank[x["status"]] for x in t] == sorted(rank[x["status"]] for x in t), "table order"
for x in sorted(t, key=lambda x: x["order"]):
    print(x["order"], x["dir"])
print("best found at trial", min(x["order"] for x in t if x["params"] == c["best"]["params"]), "of", len(t),
      "(grid: 800)", file=sys.stderr)
PY
    fail "the CMA-ES's search.json is wrong (above)"

# The same seed runs the same trials in the same order, one at a time or two.
search "$TEST_TMP/cma2" --strategy cmaes > "$TEST_TMP/cma2.out" 2> "$TEST_TMP/cma2.err" ||
    fail "second cmaes search failed: $(tail "$TEST_TMP/cma2.err")"
expect_grep "$best" "$TEST_TMP/cma2.out"
drawn "$TEST_TMP/cma2" | cmp -s - "$TEST_TMP/cma.order" || fail "the same seed ran other trials or another order"
# another seed draws others (and from the cache, the trials both drew)
search "$TEST_TMP/cma" --strategy cmaes --seed 2 > "$TEST_TMP/cma3.out" 2> "$TEST_TMP/cma3.err" ||
    fail "cmaes --seed 2 failed: $(tail "$TEST_TMP/cma3.err")"
drawn "$TEST_TMP/cma" | cmp -s - "$TEST_TMP/cma.order" && fail "seeds 1 and 2 drew the same trials"
expect_grep '[1-9][0-9]* from the cache' "$TEST_TMP/cma3.err"

# --trials bounds the trials run; a budget that would not hold 3
# generations of 7 draws 4 a generation (so a short search is not the
# start of a longer one); the same search again runs nothing.
search "$TEST_TMP/cma" --strategy cmaes --trials 12 > "$TEST_TMP/cma4.out" 2> "$TEST_TMP/cma4.err" ||
    fail "cmaes --trials 12 failed: $(tail "$TEST_TMP/cma4.err")"
expect_count 12 '^ +[0-9]+  [0-9]  [0-9]  [0-9x] ' "$TEST_TMP/cma4.out"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); assert c["population"] == 4 and c["trials_run"] + c["trials_cached"] == 12, c' \
    "$TEST_TMP/cma/search.json" || fail "--trials 12: not 12 trials run in generations of 4"
drawn "$TEST_TMP/cma" > "$TEST_TMP/cma4.order"
# The last trials of the budget (at least 5 of 12: a third, one a knob) are
# the polish: each is the fastest trial before it with one knob a value
# step away.
python3 - "$TEST_TMP/cma/search.json" <<'PY' || fail "--trials 12: the last trials are not the fastest's neighbours"
import json, sys
t = sorted(json.load(open(sys.argv[1]))["trials"], key=lambda x: x["order"])
index = lambda x: [int(x["params"]["a"]), int(x["params"]["b"]), -1 if x["params"]["c"] == "x" else int(x["params"]["c"])]
for k in range(len(t) - 3, len(t)):
    best = min((x for x in t[:k] if x["status"] == "ok"), key=lambda x: x["iteration_time_s"])
    steps = sorted(abs(u - v) for u, v in zip(index(t[k]), index(best)))
    assert steps == [0, 0, 1], (t[k]["params"], best["params"])
PY
search "$TEST_TMP/cma" --strategy cmaes --trials 12 > /dev/null 2> "$TEST_TMP/cma4b.err" ||
    fail "cmaes --trials 12 again failed: $(tail "$TEST_TMP/cma4b.err")"
expect_grep '12 trials finished \(0 run, 12 from the cache\)' "$TEST_TMP/cma4b.err"
drawn "$TEST_TMP/cma" | cmp -s - "$TEST_TMP/cma4.order" || fail "--trials 12 again drew other trials"

# --patience stops it.
search "$TEST_TMP/cma" --strategy cmaes --patience 3 > "$TEST_TMP/cma5.out" 2> "$TEST_TMP/cma5.err"
expect_grep 'stopped: --patience trials without a faster one' "$TEST_TMP/cma5.err"

# Nothing to search (one value each), or a space within the budget: every
# combination, as a grid.
"$MAYA" search -g h100x1 --estimator analytical -o "$TEST_TMP/one" --strategy cmaes --param a=6 --param b=2 -- \
    "$WORKLOADS/bowl" 6:{a} 2:{b} > "$TEST_TMP/one.out" 2>&1 || fail "one-point cmaes failed: $(cat "$TEST_TMP/one.out")"
expect_grep 'cmaes: 1 combination, within 20 trials: running every combination \(grid\)' "$TEST_TMP/one.out"
expect_grep '^best: a=6 b=2 ' "$TEST_TMP/one.out"
"$MAYA" search -q -g h100x1 --estimator analytical -o "$TEST_TMP/small" --strategy cmaes --trials 6 \
    --param a=5,6,7 --param b=1,2 -- "$WORKLOADS/bowl" 6:{a} 2:{b} > "$TEST_TMP/small.out" 2>&1 ||
    fail "small cmaes failed: $(cat "$TEST_TMP/small.out")"
expect_count 6 '^ +[0-9]+  [5-7]  [12] ' "$TEST_TMP/small.out"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["strategy"] == "grid"' "$TEST_TMP/small/search.json" ||
    fail "a space within the budget was not run as a grid"

# Bad usage: exit 2, a message.
"$MAYA" search -o "$TEST_TMP/bad" --strategy cma --param a=1 -- echo {a} > "$TEST_TMP/bad.out" 2>&1
expect_eq "$?" 2 "exit status of --strategy cma"
expect_grep '--strategy "cma": expected grid, random or cmaes' "$TEST_TMP/bad.out"
"$MAYA" search -o "$TEST_TMP/bad" --strategy cmaes --trials 0 --param a=1 -- echo {a} > "$TEST_TMP/bad.out" 2>&1
expect_eq "$?" 2 "exit status of --trials 0"
expect_grep '--trials "0": expected a whole number from 1' "$TEST_TMP/bad.out"
[ ! -e "$TEST_TMP/bad" ] || fail "a bad search made its directory"
exit 0
