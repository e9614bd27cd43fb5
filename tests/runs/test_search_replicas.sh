#!/usr/bin/env bash
# maya search --replicas: maya run --replicas per trial, its data-parallel
# degree computed from the trial's knobs. minigpt on 8 emulated H100s over
# tp=1,2,8 and pp=1,2 (GPU-bound: repeated runs agree within 1e-4) with
# --replicas '{=8 / (tp * pp)}:{tp}' (minigpt puts tp innermost, then the
# data-parallel ranks): each trial emulates two of its replicas, a trial of
# data-parallel degree 1 gets no --replicas (maya run takes N of 2 or more),
# tp=8 pp=2 (8 / 16) is failed without running, and every other trial
# predicts what the same search without --replicas predicts, within 0.5 %.
# A templated --run-option takes the trial's values the same way. Bad
# templates are usage errors. The trials take the cluster with host time a
# tenth as long (fast_host_cluster in tests/lib.sh): at tp=8 host work is
# 63 % of the iteration, and a busy host's 2-fold longer CPU time made it
# the critical path in one search and not the other.
# test: alone
. "$MAYA_TOP/tests/lib.sh"
cluster=$(fast_host_cluster dgx-h100)

model=(--iters 4 --hidden 4096 --heads 32 --seq 1024 --layers 4)
search() {
    "$MAYA" search -q -g h100x8 --cluster "$cluster" -j 2 -o "$TEST_TMP/$1" "${@:2}" --param tp=1,2,8 --param pp=1,2 -- \
        "$WORKLOADS/minigpt" --tp {tp} --pp {pp} "${model[@]}" > "$TEST_TMP/$1.out" 2>&1
    [ $? = 0 ] || fail "maya search $* failed: $(tail -20 "$TEST_TMP/$1.out")"
}
search full
search repl --replicas '{=8 / (tp * pp)}:{tp}'
search opt --run-option --replicas --run-option '{=8 / (tp * pp)}:{tp}'
cat "$TEST_TMP/repl.out"

python3 - "$TEST_TMP" <<'PY' || fail "the --replicas search is wrong (above)"
import json, os, re, sys
top = sys.argv[1]
def trials(name):
    s = json.load(open(os.path.join(top, name, "search.json")))
    return {(int(t["params"]["tp"]), int(t["params"]["pp"])): t for t in s["trials"]}
full, repl = trials("full"), trials("repl")
assert sorted(full) == sorted(repl) == [(1, 1), (1, 2), (2, 1), (2, 2), (8, 1), (8, 2)], sorted(repl)
for (tp, pp), t in repl.items():
    dp = 8 // (tp * pp) if 8 % (tp * pp) == 0 else 0
    if not dp:
        assert t["status"] == "failed" and "8 / 16 is not a whole number" in t["reason"], t
        continue
    f = full[tp, pp]
    assert t["status"] == f["status"] == "ok", (t, f)
    d = t["iteration_time_s"] / f["iteration_time_s"] - 1
    print(f"tp={tp} pp={pp} dp={dp}: {t['iteration_time_s'] * 1e3:.3f} ms, {d:+.4%} from the full run")
    assert abs(d) <= 0.005, (tp, pp, d)
    conf = open(os.path.join(top, "repl", t["dir"], "run.conf")).read()
    # the ranks whose data-parallel digit is 2 or more are not emulated
    missing = sorted(int(r) for r in re.findall(r"^rank\.(\d+)\.note=a replica, not emulated", conf, re.M))
    want = sorted(r for r in range(8) if (r // tp) % dp >= 2) if dp >= 2 else []
    assert missing == want, (tp, pp, missing, want)
    # degree 1: the same trial as without --replicas (same key, same directory)
    assert (t["dir"] == f["dir"]) == (dp == 1), (tp, pp, t["dir"], f["dir"])
opt = trials("opt")
for k, t in opt.items():
    if k == (8, 1):  # --replicas 1:8, which maya run refuses
        assert t["status"] == "failed" and "N of 2 or more" in t["reason"], t
    elif t["status"] == "ok":
        assert abs(t["iteration_time_s"] / repl[k]["iteration_time_s"] - 1) <= 0.005, (k, t, repl[k])
    else:
        assert k == (8, 2) and "8 / 16 is not a whole number" in t["reason"], t
PY

bad() {
    local want=$1
    shift
    "$MAYA" search -o "$TEST_TMP/bad" "$@" > "$TEST_TMP/bad.out" 2>&1
    expect_eq "$?" 2 "exit status of maya search $*"
    expect_grep "$want" "$TEST_TMP/bad.out"
}
bad '\{dp\} in "\{dp\}:1" is not a declared parameter' --replicas '{dp}:1' --param tp=1 -- echo {tp}
bad '--run-option "\{=tp \* \}": expected a number or a declared parameter' --run-option '{=tp * }' --param tp=1 -- echo {tp}
bad '--replicas "\{sp\}": \{sp\} is a --flag' --replicas '{sp}' --flag sp=--sequence-parallel -- echo {sp}
bad '--srun-nodes: "--replicas" is a maya run option' --slurm --srun-nodes 2 --replicas '2:1' --param tp=1 -- echo {tp}
exit 0
