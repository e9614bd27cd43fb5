#!/usr/bin/env bash
# maya search over the bundled GPT workload (tests/workloads/minigpt.cu) on 2
# emulated H100s: a grid over tensor (tp) and pipeline (pp) degrees of a model
# that does not fit one GPU unsplit (20 layers, width 4096: tp=1 pp=1 runs out
# of memory) and where tp x pp must divide the 2 GPUs (tp=3 and tp=2 pp=2
# fail). Every trial must score what a separate `maya run` of its
# configuration gives, the best row must be the fastest valid one, a second
# search must answer from its cache, and bad parameters are usage errors.
#
# Host gaps are measured, so they vary from run to run; this model is large
# enough that the GPUs, not the host, set the iteration time (repeated runs
# agree within 1e-4, on either host clock), so a separate run must agree
# within 1e-3 while the configurations differ by about 10%. The separate runs
# measure on the cpu clock, as trials run 2 at a time do, so that other work
# on the machine does not stretch their host gaps.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/search
model=(--iters 3 --hidden 4096 --heads 32 --layers 20 --seq 2048)
search() {
    "$MAYA" search -g h100x2 -o "$d" "$@" --param tp=1,2,3 --param pp=1,2 -- \
        "$WORKLOADS/minigpt" --tp {tp} --pp {pp} "${model[@]}"
}

search -j 2 > "$TEST_TMP/out1" 2> "$TEST_TMP/err1" ||
    fail "maya search failed: $(tail -20 "$TEST_TMP/err1")"
cat "$TEST_TMP/out1"
cmp -s "$TEST_TMP/out1" "$d/search.txt" || fail "stdout and search.txt differ"
expect_count 6 '^ +[0-9]+  [0-9]   [0-9] ' "$d/search.txt"
expect_grep '^ +1  2   1  .* ok$' "$d/search.txt" "tp=2 pp=1 is not the fastest row"
expect_grep '^ +[0-9]+  1   1  +- +[0-9.]+ GiB  [0-9a-f]{12}  oom: out of GPU memory \(peak [0-9.]+ GiB of 79\.18 GiB\)' "$d/search.txt" \
    "tp=1 pp=1 is not reported oom"
# minigpt's rank 0 says why; when rank 1 fails first, maya run stops rank 0,
# maybe before it said it (then rank 1's status is all there is to say)
expect_count 3 'failed: rank [01] exit 2((: | \(rank 0: )minigpt: TP x PP x DP must equal WORLD_SIZE \(WORLD_SIZE 2, .*)?$' \
    "$d/search.txt"
expect_grep '^best: tp=2 pp=1 \([0-9.]+ ms per iteration, [0-9.]+ GiB peak; trials/[0-9a-f]{12}\)$' "$d/search.txt"

# The same numbers as the trials' own reports and as separate runs.
python3 - "$d" > "$TEST_TMP/configs" <<'PY' || fail "search.json is wrong (above)"
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "search.json")))
assert s["combinations"] == 6 and s["duplicates"] == 0 and s["trials_run"] == 6, s
t = s["trials"]
assert [x["status"] for x in t] == ["ok", "ok", "oom", "failed", "failed", "failed"], t
ok = [x for x in t if x["status"] == "ok"]
assert ok == sorted(ok, key=lambda x: x["iteration_time_s"]), ok
assert s["best"] == t[0] and s["best"]["iteration_time_s"] == min(x["iteration_time_s"] for x in ok)
for x in t:
    r = json.load(open(os.path.join(d, x["dir"], "report.json")))
    assert x["peak_memory_bytes"] == r["peak_memory_bytes"], (x, r["peak_memory_bytes"])
    if x["status"] == "ok":
        assert x["iteration_time_s"] == r["iteration_time_s"] and not r["oom"], (x, r)
    else:
        assert x["iteration_time_s"] is None and x["reason"], x
    if x["status"] == "oom":
        assert r["oom"] and x["params"] == {"tp": "1", "pp": "1"}, (x, r)
    if x["status"] != "failed":
        print(x["params"]["tp"], x["params"]["pp"], x["iteration_time_s"] or "oom")
PY
while read -r tp pp want; do
    r=$TEST_TMP/run-$tp-$pp
    MAYA_HOST_CLOCK=cpu "$MAYA" run -q -g h100x2 -o "$r" -- "$WORKLOADS/minigpt" --tp "$tp" --pp "$pp" "${model[@]}" \
        > "$TEST_TMP/run.out" 2>&1
    python3 - "$r/report.json" "$want" <<'PY' || fail "maya run --tp $tp --pp $pp disagrees with its trial"
import json, sys
r, want = json.load(open(sys.argv[1])), sys.argv[2]
if want == "oom":
    assert r["oom"], r
else:
    got, want = r["iteration_time_s"], float(want)
    assert not r["oom"] and abs(got - want) <= 1e-3 * want, (got, want)
PY
done < "$TEST_TMP/configs"
expect_eq "$(wc -l < "$TEST_TMP/configs")" 3 "configurations checked against maya run"

# A second search runs nothing: same answer, no trial directory touched.
touch "$TEST_TMP/stamp"
sleep 1
search > "$TEST_TMP/out2" 2> "$TEST_TMP/err2" || fail "second maya search failed: $(cat "$TEST_TMP/err2")"
cmp "$TEST_TMP/out1" "$TEST_TMP/out2" || fail "the second search printed something else"
changed=$(find "$d/trials" -newer "$TEST_TMP/stamp" | head -5)
[ -z "$changed" ] || fail "the second search modified trials: $changed"
expect_grep '6 trials finished \(0 run, 6 from the cache\)' "$TEST_TMP/err2"

# random and --patience draw from the same cache.
search --strategy random --trials 3 --seed 7 > "$TEST_TMP/out3" 2> "$TEST_TMP/err3" ||
    fail "random search failed: $(cat "$TEST_TMP/err3")"
expect_count 3 '^ +[0-9]+  [0-9]   [0-9] ' "$TEST_TMP/out3"
expect_grep '3 trials finished \(0 run, 3 from the cache\)' "$TEST_TMP/err3"
search --strategy random --trials 3 --seed 7 > "$TEST_TMP/out4" 2>/dev/null
cmp -s "$TEST_TMP/out3" "$TEST_TMP/out4" || fail "the same seed drew other trials"
# grid order: 1,1 oom; 1,2 and 2,1 faster each; 2,2 and 3,1 not: stop before 3,2
search --patience 2 > "$TEST_TMP/out5" 2> "$TEST_TMP/err5"
expect_count 5 '^ +[0-9]+  [0-9]   [0-9] ' "$TEST_TMP/out5"
expect_no_grep '^ +[0-9]+  3   2 ' "$TEST_TMP/out5"
expect_grep 'stopped: --patience' "$TEST_TMP/err5"

# One rank: its reason every time, and the trial that fails is never best.
"$MAYA" search -q -g h100x1 -o "$TEST_TMP/one" --param tp=2,1 -- "$WORKLOADS/minigpt" --tp {tp} --iters 2 \
    > "$TEST_TMP/out7" 2>&1 || fail "one-GPU search failed: $(cat "$TEST_TMP/out7")"
expect_grep '^ +1  1   +[0-9.]+ ms .* ok$' "$TEST_TMP/out7"
expect_grep '^ +2  2  +- .* failed: rank 0 exit 2: minigpt: TP x PP x DP must equal WORLD_SIZE \(WORLD_SIZE 1, tp 2' \
    "$TEST_TMP/out7"
expect_grep '^best: tp=1 ' "$TEST_TMP/out7"

# A cached trial is stale once what it ran changed: a rebuilt program, or an
# edited file one of its arguments names.
mkdir -p "$TEST_TMP/bin"
cp "$WORKLOADS/minigpt" "$TEST_TMP/bin/minigpt"
echo one > "$TEST_TMP/input"
one_more() {
    "$MAYA" search -g h100x1 -o "$TEST_TMP/stale" --param tp=1 -- "$TEST_TMP/bin/minigpt" --tp {tp} --iters 2 \
        --help-not "$TEST_TMP/input" > /dev/null 2> "$TEST_TMP/stale.err"
}
# (minigpt refuses the unknown option: each trial fails, quickly, which is
# enough to see whether it ran)
one_more; expect_grep '1 trial finished \(1 run, 0 from the cache\)' "$TEST_TMP/stale.err"
one_more; expect_grep '1 trial finished \(0 run, 1 from the cache\)' "$TEST_TMP/stale.err"
touch -d '+1 minute' "$TEST_TMP/bin/minigpt"
one_more; expect_grep '1 trial finished \(1 run, 0 from the cache\)' "$TEST_TMP/stale.err" "a rebuilt program reran"
echo two >> "$TEST_TMP/input"
one_more; expect_grep '1 trial finished \(1 run, 0 from the cache\)' "$TEST_TMP/stale.err" "an edited input reran"

# Equal command lines run once; no valid trial: exit 1; the report's error
# is the reason.
"$MAYA" search -o "$TEST_TMP/dup" --param a=1,11 --param b=1,11 -- echo {a}{b} > "$TEST_TMP/out6" 2>&1
expect_eq "$?" 1 "exit status of a search with no valid trial"
expect_grep '3 trials \(4 combinations, 1 duplicate\)' "$TEST_TMP/out6"
expect_grep '^best: none of the 3 trials was valid$' "$TEST_TMP/out6"
expect_count 3 'failed: collation: .*/dup/trials/[0-9a-f]{12}/traces holds no trace' "$TEST_TMP/out6"
expect_eq "$(ls "$TEST_TMP/dup/trials" | wc -l)" 3 "trial directories of 3 distinct commands"

# Bad usage: exit 2, a message, nothing run.
bad() {
    local want=$1
    shift
    "$MAYA" search -o "$TEST_TMP/bad" "$@" > "$TEST_TMP/bad.out" 2>&1
    expect_eq "$?" 2 "exit status of maya search $*"
    expect_grep "$want" "$TEST_TMP/bad.out"
    [ ! -e "$TEST_TMP/bad" ] || fail "maya search $* made its directory"
}
bad '\{pp\} in "\{pp\}" is not a declared parameter; expected --param pp=' --param tp=1 -- echo {tp} {pp}
bad '--param pp is not used: expected \{pp\}' --param tp=1 --param pp=1,2 -- echo {tp}
bad 'expected NAME=V1,V2' --param tp -- echo {tp}
bad 'an empty value in "1,,2"' --param tp=1,,2 -- echo {tp}
bad 'value "1" is listed twice' --param tp=1,2,1 -- echo {tp}
bad '--param tp is declared twice' --param tp=1 --param tp=2 -- echo {tp}
bad 'no --param' -- echo x
bad '--strategy "best": expected grid, random or cmaes' --strategy best --param tp=1 -- echo {tp}
bad 'only --strategy random or cmaes runs a number of trials' --trials 2 --param tp=1 -- echo {tp}
# test_search_prune's options: pruning rules, flags, expressions, the what-if
bad '--prune "tq=memory-up": expected NAME=RULE\[,RULE\] with NAME a --param or --flag declared before it' \
    --param tp=1 --prune tq=memory-up -- echo {tp}
bad '--prune tp: unknown rule "faster"; expected memory-up, memory-down or prefer-earlier' \
    --param tp=1 --prune tp=faster -- echo {tp}
bad '--prune tp: memory-up and memory-down contradict each other' --param tp=1 --prune tp=memory-up,memory-down -- echo {tp}
bad '\{sp\} in "x\{sp\}": a --flag stands for whole arguments' --flag sp=--sequence-parallel -- echo x{sp}
bad '"\{=tp \* \}": expected a number or a declared parameter' --param tp=1 -- echo '{=tp * }'
bad '"\{=pp\}": expected a number or a declared parameter at "pp\}"' --param tp=1 -- echo {tp} '{=pp}'
bad '--price "0": expected the cost of one GPU-hour' --price 0 --param tp=1 -- echo {tp}
bad '--param gpus and -g both give the trials' -g h100x1 --param gpus=h100x2 -- echo x
bad '--sbatch --time=5: sbatch options apply with --slurm only' --sbatch --time=5 --param tp=1 -- echo {tp}
bad '--srun-nodes 2: spreading a trial.s ranks over nodes needs --slurm' --srun-nodes 2 --param tp=1 -- echo {tp}
bad '--srun-nodes: "--dedup" is a maya run option, which srun --maya-emulate does not take' --slurm --srun-nodes 2 \
    --run-option --dedup --param tp=1 -- echo {tp}
bad '--srun-nodes "0": expected a whole number from 1' --slurm --srun-nodes 0 --param tp=1 -- echo {tp}
bad '--replay .*/none: cannot open .*/none/search.txt' --replay "$TEST_TMP/none" --param tp=1 -- echo {tp}
bad '--require "tq > 1": expected a number or a declared parameter at "tq > 1' --require 'tq > 1' --param tp=1 -- echo {tp}
bad '--require "tp >": expected a number or a declared parameter' --require 'tp >' --param tp=1 -- echo {tp}

# --require: a combination whose expression is 0 (a --flag is 0 off, 1 on)
# is failed without running, named by the rule, and costs no trial; a
# comparison is 1 or 0 in the command too.
"$MAYA" search -g h100x1 -o "$TEST_TMP/req" --require 'a > f' --require 'a * 2 != 6' --param a=1,2,3 --flag f=--x -- \
    sh -c 'exit $0' '{=a > 1}' {f} > "$TEST_TMP/req.out" 2>&1
cat "$TEST_TMP/req.out"
expect_grep '^ +[0-9]+  1  on  +- .*failed: refused by --require "a > f"$' "$TEST_TMP/req.out"
expect_count 2 'failed: refused by --require "a \* 2 != 6"$' "$TEST_TMP/req.out"
python3 - "$TEST_TMP/req/search.json" <<'PY' || fail "the --require search is wrong (above)"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["trials_run"] == 3, s["trials_run"]
ran = {(t["params"]["a"], t["params"]["f"]): t for t in s["trials"] if t["trial_wall_s"] is not None}
assert sorted(ran) == [("1", "off"), ("2", "off"), ("2", "on")], sorted(ran)
# sh -c 'exit $0' {=a > 1}: a=1 exits 0 (no GPU work: failed, no report), a=2 exits 1
assert "exit 1" in ran["2", "off"]["reason"] and "exit 1" not in ran["1", "off"]["reason"], ran
assert ran["2", "on"]["command"][-1] == "--x", ran["2", "on"]
PY

# A report whose steady iterations are not alike (cut at the wrong places)
# fails its trial instead of ranking it by a wrong time; read through
# --replay of a search directory written here, in maya's report format.
mkdir -p "$TEST_TMP/odd/trials/0000000000aa" "$TEST_TMP/odd/trials/0000000000bb"
printf '   #  a   iteration  peak memory  trial         status\n   1  1   14.7 ms  1.00 GiB  0000000000aa  ok\n   2  2  250.0 ms  1.00 GiB  0000000000bb  ok\n' \
    > "$TEST_TMP/odd/search.txt"
report() { # DIR ITERATION_S FIRST SECOND THIRD
    cat > "$1/report.json" <<JSON
{"workload_ok": true, "simulated": true, "error": null, "iteration_time_s": $2, "peak_memory_bytes": 1073741824,
 "gpu_memory_bytes": 85017755648, "oom": false,
 "iterations": [{"index": 1, "time_s": $3, "steady": false}, {"index": 2, "time_s": $4, "steady": true},
                {"index": 3, "time_s": $5, "steady": true}]}
JSON
}
report "$TEST_TMP/odd/trials/0000000000aa" 0.0147 1.42 0.0020 0.0274
report "$TEST_TMP/odd/trials/0000000000bb" 0.25 0.26 0.2490 0.2510
"$MAYA" search -q -g h100x1 -o "$TEST_TMP/odd-replay" --replay "$TEST_TMP/odd" --param a=1,2 -- echo {a} > "$TEST_TMP/odd.out" 2>&1 ||
    fail "the replay of crafted reports failed: $(cat "$TEST_TMP/odd.out")"
cat "$TEST_TMP/odd.out"
expect_grep '^ +2  1 .* failed: its steady iterations are not alike \(2\.000 to 27\.400 ms\), so the iteration time \(14\.700 ms\) cannot be trusted' \
    "$TEST_TMP/odd.out"
expect_grep '^best: a=2 \(250\.000 ms per iteration' "$TEST_TMP/odd.out"
bad 'unknown GPU' -g h100x2,nonex2 --param tp=1 -- echo {tp}
exit 0
