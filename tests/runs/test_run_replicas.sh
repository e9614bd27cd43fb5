#!/usr/bin/env bash
# Ranks that never start (maya run --replicas, docs/dedup.md): minigpt TP2 x
# PP2 x DP4 on 16 emulated H100s (two nodes), GPU-bound. --replicas 4:2,2:1
# declares DP (4 replicas, stride 2) and TP (2, stride 1): the ranks whose DP
# and TP digits are 0 or 1 run (8 of 16), the other 8 stop at their first
# NCCL call and are rebuilt from the rank with their digits above 1 made 1
# (DP replica 1 of their TP rank and stage: never rank 0, whose host work is
# often its own); the
# communicators the running ranks make hold the missing ones (the world,
# the DP groups); the prediction is the full run's to within 0.5 %, with and
# without --dedup on top (which stops ranks 2-3 and 9-11 too). The same
# layout, taken from an 8-rank --dedup run (--replicas-like), predicts the
# same, and so does the layout maya finds itself from runs of 4 and 8
# ranks (--replicas auto). Bad layouts are refused before anything starts.
# A start-up that waits for every rank, not PyTorch's, starts the replicas
# a few at a time until all have joined.
# The runs whose predictions are compared take the cluster with host time a
# tenth as long (fast_host_cluster in tests/lib.sh): the check is on what
# the missing ranks do on the GPUs and the network, not on this machine's
# CPU time, which a busy host stretches in one run and not in the next.
# test: alone
. "$MAYA_TOP/tests/lib.sh"
cluster=$(fast_host_cluster dgx-h100)

mg="$WORKLOADS/minigpt --tp 2 --pp 2 --iters 6 --hidden 4096 --heads 32 --seq 1024 --layers 4"
run() {
    local name=$1
    shift
    "$MAYA" run -q "$@" -g h100x16 --cluster "$cluster" -o "$TEST_TMP/$name" -- $mg > "$TEST_TMP/$name.out" 2>&1 ||
        fail "maya run $* minigpt failed: $(tail -20 "$TEST_TMP/$name.out")"
}
run full
run repl --replicas 4:2,2:1
run both --replicas 4:2,2:1 --dedup

d=$TEST_TMP/repl
for r in 4 5 6 7 12 13 14 15; do
    src=$((r - ((r / 2) % 4 - 1) * 2))
    expect_grep "^rank\.$r\.note=a replica, not emulated \\(--replicas\\), rebuilt from rank $src\$" "$d/run.conf" \
        "rank $r's note"
    expect_grep "^how=declared\$" "$d/traces/rank-$r.eliminated" "rank $r's elimination note"
    "$MAYA" trace dump "$d/traces/rank-$r.mtrace" > "$TEST_TMP/r$r.dump" || fail "dump rank $r"
    expect_count 0 '^coll ' "$TEST_TMP/r$r.dump"
    expect_count 0 '^comm ' "$TEST_TMP/r$r.dump"
    expect_grep "^eliminated +source=$src how=declared stop_op=0 " "$TEST_TMP/r$r.dump" "rank $r stopped at once"
done
for r in 0 1 2 3 8 9 10 11; do
    expect_no_grep "^rank\.$r\.note=" "$d/run.conf" "rank $r ran"
done
"$MAYA" trace dump "$d/traces/rank-0.mtrace" > "$TEST_TMP/r0.dump" || fail "dump rank 0"
# the world and rank 0's DP group hold ranks that never started
expect_grep '^comm_members .*nranks=16 ranks=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15$' "$TEST_TMP/r0.dump" \
    "rank 0's world communicator"
expect_grep '^comm_members .*nranks=4 ranks=0,2,4,6$' "$TEST_TMP/r0.dump" "rank 0's DP communicator"
expect_grep '^comm_members .*nranks=2 ranks=0,1$' "$TEST_TMP/r0.dump" "rank 0's TP communicator"

"$MAYA" trace dump "$d/job.mtrace" > "$TEST_TMP/job.dump" || fail "dump the job"
expect_count 16 '^rank_begin' "$TEST_TMP/job.dump"
expect_count 8 '^rank_rebuilt .* how=declared' "$TEST_TMP/job.dump"
python3 - "$TEST_TMP/job.dump" <<'PY' || fail "the job's communicators are wrong (above)"
import re, sys
members = {}
for line in open(sys.argv[1]):
    if line.startswith('job_comm'):
        m = re.search(r'nranks=(\d+) .* members=(\S+)', line)
        members.setdefault(int(m.group(1)), []).append(sorted(int(x.split('@')[0]) for x in m.group(2).split(',')))
# as the full job makes them: the world; 8 TP pairs and 8 PP pairs; 4 DP
# groups of 4 and 4 model-parallel groups of 4 (minigpt's mp_comm)
two, four = members[2], members[4]
assert members[16] == [list(range(16))], members[16]
assert len(two) == 16 and len(four) == 8 and len({tuple(x) for x in two + four}) == 24, (two, four)
assert [0, 2, 4, 6] in four and [9, 11, 13, 15] in four, four   # DP groups, replicas in them
assert [4, 5, 12, 13] in four, four                             # the MP group of replicas only
assert [4, 5] in two and [14, 15] in two and [6, 14] in two, two # TP and PP pairs of replicas only
print("communicators ok")
PY

python3 - "$TEST_TMP"/full/report.json "$TEST_TMP"/repl/report.json "$TEST_TMP"/both/report.json <<'PY' ||
import json, sys
f, r, b = (json.load(open(x)) for x in sys.argv[1:4])
for x in (f, r, b):
    assert x["simulated"] and x["workload_ok"] and len(x["iterations"]) == 6 and x["world_size"] == 16, x["error"]
assert f["idle_time_s"] < 0.05 * f["iteration_time_s"]
for name, x in (("--replicas", r), ("--replicas --dedup", b)):
    err = abs(x["iteration_time_s"] - f["iteration_time_s"]) / f["iteration_time_s"]
    print("%s: %.6f s against %.6f s (%.3f %%)" % (name, x["iteration_time_s"], f["iteration_time_s"], 100 * err))
    assert err < 0.005, err
PY
    fail "the predictions differ (above)"
# --dedup on top stops duplicates among the emulated ranks; which of them
# depends on when the verdict reaches each (a rank that runs ahead may end
# first and simply runs on, docs/dedup.md "Limits"), so at least two of the
# candidates (ranks 2-3, 9-11) must be stopped, each rebuilt from rank 1 or 8
stopped=$(grep -cE '^rank\.(2|3|9|10|11)\.note=eliminated, rebuilt from rank (1|8)$' "$TEST_TMP/both/run.conf")
[ "$stopped" -ge 2 ] || fail "--dedup on top stopped $stopped of ranks 2-3 and 9-11: $(grep note= "$TEST_TMP/both/run.conf")"
expect_no_grep "^rank\.[01]\.note=" "$TEST_TMP/both/run.conf" "ranks 0 and 1 run on"

# The job trace holds the rebuilt ranks as references to their sources'
# sections (docs/trace-format.md, "Rebuilt ranks"); collated as full copies
# instead (MAYA_REBUILT_COPY=1), the same traces give the same report, field
# for field, and a larger job trace.
# Replicas of one source with the same communicators' shapes take a copy
# of the first one's loaded work, on their own GPU: in repl, the replicas
# of DP replica 1 on GPUs 4-7 of each node (4 of the 8 copied); in wide,
# DP8 on 32 GPUs (four nodes), those on the same GPU of other nodes.
mg_wide="$WORKLOADS/minigpt --tp 2 --pp 2 --iters 4 --hidden 4096 --heads 32 --seq 1024 --layers 4"
"$MAYA" run -q --replicas 8:2,2:1 -g h100x32 -o "$TEST_TMP/wide" -- $mg_wide > "$TEST_TMP/wide.out" 2>&1 ||
    fail "maya run --replicas 8:2,2:1 minigpt failed: $(tail -20 "$TEST_TMP/wide.out")"
for name in repl both wide; do
    case $name in repl) min_copied=4 ;; wide) min_copied=8 ;; *) min_copied=0 ;; esac
    "$MAYA" trace dump "$TEST_TMP/$name/job.mtrace" > "$TEST_TMP/$name.job.dump" || fail "dump $name's job"
    refs=$(grep -c '^rank_rebuilt .* ref$' "$TEST_TMP/$name.job.dump")
    all=$(grep -c '^rank_rebuilt ' "$TEST_TMP/$name.job.dump")
    [ "$refs" -ge 8 ] && [ "$refs" -eq "$all" ] || fail "$name: $refs of $all rebuilt ranks are references"
    cp -r "$TEST_TMP/$name" "$TEST_TMP/$name.copy"
    MAYA_REBUILT_COPY=1 "$MAYA" report -q "$TEST_TMP/$name.copy" > "$TEST_TMP/$name.copy.out" 2>&1 ||
        fail "maya report with full copies failed: $(tail -5 "$TEST_TMP/$name.copy.out")"
    "$MAYA" trace dump "$TEST_TMP/$name.copy/job.mtrace" > "$TEST_TMP/$name.copy.dump" || fail "dump the copies"
    expect_count 0 '^rank_rebuilt .* ref$' "$TEST_TMP/$name.copy.dump"
    expect_count "$all" '^rank_rebuilt ' "$TEST_TMP/$name.copy.dump"
    python3 "$MAYA_TOP/tests/runs/same_report.py" "$TEST_TMP/$name/report.json" "$TEST_TMP/$name.copy/report.json" \
        ${min_copied:-0} || fail "$name: references and copies differ (above)"
    sa=$(stat -c %s "$TEST_TMP/$name/job.mtrace")
    sb=$(stat -c %s "$TEST_TMP/$name.copy/job.mtrace")
    [ "$sa" -lt "$sb" ] || fail "$name: the job trace with references ($sa bytes) is not smaller than with copies ($sb)"
done

# Folding on the real run (a NIC per GPU): every replica's copy folds into
# its proxy, on its own node too (the TP copy of a stage into its TP rank
# 1), so that only the 8 emulated ranks are replayed; the report is the one
# replaying all 16, field for field but for the simulator's own counts.
cp -r "$TEST_TMP/repl" "$TEST_TMP/repl.nofold"
"$MAYA" report -q --fold no "$TEST_TMP/repl.nofold" > "$TEST_TMP/repl.nofold.out" 2>&1 ||
    fail "maya report --fold no failed: $(tail -5 "$TEST_TMP/repl.nofold.out")"
python3 - "$TEST_TMP/repl/report.json" "$TEST_TMP/repl.nofold/report.json" <<'PY' || fail "folding the replicas changed the report (above)"
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
assert a["simulator"]["replayed_ranks"] == 8 and b["simulator"]["replayed_ranks"] == 16, (a["simulator"], b["simulator"])
for k in ("iteration_time_s", "first_iteration_time_s", "makespan_s", "compute_time_s", "communication_time_s",
          "exposed_communication_time_s", "idle_time_s", "peak_memory_bytes", "iterations", "ranks"):
    assert a[k] == b[k], (k, a[k], b[k])
PY

# --replicas-like: the layout an 8-rank (DP2) --dedup run showed, its DP
# dimension grown to DP4: the declared one, predicting what the full run
# does
"$MAYA" run -q --dedup -g h100x8 --cluster "$cluster" -o "$TEST_TMP/small" -- $mg > "$TEST_TMP/small.out" 2>&1 ||
    fail "maya run --dedup on 8 ranks failed: $(tail -20 "$TEST_TMP/small.out")"
expect_grep '^world=8$' "$TEST_TMP/small/traces/dedup-classes" "the classes' world"
expect_grep '^classes=0 0 0 0 4 4 4 4$' "$TEST_TMP/small/traces/dedup-classes" "the classes: one per stage"
expect_grep '^comm=0 2$' "$TEST_TMP/small/traces/dedup-classes" "rank 0's DP group"
expect_grep "^same work  layout --replicas 2:1,2:2 .*maya run --replicas-like $TEST_TMP/small\$" \
    "$TEST_TMP/small/report.txt" "the report's layout"
expect_grep '"replicas_layout": "2:1,2:2"' "$TEST_TMP/small/report.json" "report.json's layout"
expect_no_grep '^same work' "$TEST_TMP/full/report.txt" "no layout without --dedup"
# (the larger run makes its TP, DP, PP and model-parallel communicators
# with ncclCommInitRank, as PyTorch's new_group does, not by splitting the
# world's: the rendezvous completes without the members that never start)
"$MAYA" run --tee none --replicas-like "$TEST_TMP/small" -g h100x16 --cluster "$cluster" -o "$TEST_TMP/like" -- $mg \
    --comm-init init-rank > "$TEST_TMP/like.out" 2>&1 ||
    fail "maya run --replicas-like failed: $(tail -20 "$TEST_TMP/like.out")"
expect_grep "^maya: --replicas-like $TEST_TMP/small: --replicas 2:1,4:2 \\(its 8 ranks showed 2:1,2:2\\)\$" \
    "$TEST_TMP/like.out" "the layout taken"
expect_grep '^replicas=2:1,4:2$' "$TEST_TMP/like/traces/rank-4.eliminated" "rank 4, a replica"
"$MAYA" trace dump "$TEST_TMP/like/traces/rank-1.mtrace" > "$TEST_TMP/like1.dump" || fail "dump rank 1"
expect_grep '^comm_members .*nranks=4 ranks=1,3,5,7$' "$TEST_TMP/like1.dump" "rank 1's DP communicator (init-rank)"
expect_grep '^comm_members .*nranks=4 ranks=0,1,8,9$' "$TEST_TMP/like1.dump" "rank 1's MP communicator (init-rank)"
python3 - "$TEST_TMP"/full/report.json "$TEST_TMP"/like/report.json <<'PY' || fail "--replicas-like predicts otherwise (above)"
import json, sys
f, b = (json.load(open(x)) for x in sys.argv[1:3])
assert b["simulated"] and len(b["iterations"]) == 6, b["error"]
err = abs(b["iteration_time_s"] - f["iteration_time_s"]) / f["iteration_time_s"]
print("--replicas-like: %.6f s against %.6f s (%.3f %%)" % (b["iteration_time_s"], f["iteration_time_s"], 100 * err))
assert err < 0.005, err
PY
# --replicas auto: maya makes the smaller runs itself: 1 and 2 ranks are
# refused by minigpt (TP2 x PP2), 4 ranks (DP 1) show 2:1, 8 ranks (DP 2)
# 2:1,2:2; the dimension that grew, 2:2, grows to DP 4: the declared layout,
# predicting what the full run does
"$MAYA" run --tee none --replicas auto -g h100x16 --cluster "$cluster" -o "$TEST_TMP/auto" -- $mg > "$TEST_TMP/auto.out" 2>&1 ||
    fail "maya run --replicas auto failed: $(tail -20 "$TEST_TMP/auto.out")"
expect_grep '^maya run: --replicas auto: 1 rank: did not run \(minigpt: TP x PP x DP must equal WORLD_SIZE' \
    "$TEST_TMP/auto.out" "the 1-rank run, refused"
expect_grep '^maya run: --replicas auto: 2 ranks: did not run' "$TEST_TMP/auto.out" "the 2-rank run, refused"
expect_grep '^maya run: --replicas auto: 4 ranks: 2:1$' "$TEST_TMP/auto.out" "the 4-rank run's layout"
expect_grep '^maya run: --replicas auto: 8 ranks: 2:1,2:2$' "$TEST_TMP/auto.out" "the 8-rank run's layout"
expect_grep '^maya run: --replicas auto: --replicas 2:1,4:2 \(4 ranks showed 2:1, 8 showed 2:1,2:2: dimension 2:2 ' \
    "$TEST_TMP/auto.out" "the layout taken"
expect_no_grep '^maya run: --replicas auto: 16 ranks' "$TEST_TMP/auto.out" "no run of the job's own size"
expect_grep '^replicas=2:1,4:2$' "$TEST_TMP/auto/traces/rank-4.eliminated" "rank 4, a replica"
for n in 4 8; do # stopped once their classes were written: no report, some ranks signalled
    expect_grep '^classes=' "$TEST_TMP/auto/probes/$n/traces/dedup-classes" "the $n-rank run's classes"
    [ -e "$TEST_TMP/auto/probes/$n/report.json" ] && fail "the $n-rank run wrote a report"
done
python3 - "$TEST_TMP"/full/report.json "$TEST_TMP"/auto/report.json <<'PY' || fail "--replicas auto predicts otherwise (above)"
import json, sys
f, b = (json.load(open(x)) for x in sys.argv[1:3])
assert b["simulated"] and b["workload_ok"] and len(b["iterations"]) == 6, b["error"]
err = abs(b["iteration_time_s"] - f["iteration_time_s"]) / f["iteration_time_s"]
print("--replicas auto: %.6f s against %.6f s (%.3f %%)" % (b["iteration_time_s"], f["iteration_time_s"], 100 * err))
assert err < 0.005, err
PY
# refused: no size below the job's to try (2 ranks); one process for all
# GPUs; with --replicas too; a program that runs on no smaller size (the
# directory keeps the runs, and is no run itself)
"$MAYA" run -q --replicas auto -g h100x8 -o "$TEST_TMP/auto1" -- false > "$TEST_TMP/auto1.out" 2>&1
expect_eq $? 2 "maya run --replicas auto -- false"
expect_grep '^maya: --replicas auto: no two smaller runs of the program showed which ranks of 8 are replicas \(1 rank: did not run \(rank 0 exited 1\); 2 ranks: did not run \(rank [01] exited 1\)\); declare them' \
    "$TEST_TMP/auto1.out" "the message for false"
[ -e "$TEST_TMP/auto1/run.conf" ] && fail "--replicas auto -- false left a run.conf"
[ -e "$TEST_TMP/auto1/probes/2/run.conf" ] || fail "--replicas auto -- false did not keep its 2-rank run"
# the same directory again: its runs go beside the first attempt's
"$MAYA" run -q --replicas auto -g h100x8 -o "$TEST_TMP/auto1" -- false > "$TEST_TMP/auto1b.out" 2>&1
expect_eq $? 2 "maya run --replicas auto -- false, again"
expect_grep '\(1 rank: did not run \(rank 0 exited 1\)' "$TEST_TMP/auto1b.out" "the message for false, again"
[ -e "$TEST_TMP/auto1/probes/2.2/run.conf" ] || fail "the second attempt's 2-rank run is not in probes/2.2"
"$MAYA" run -q --replicas auto -g h100x2 -o "$TEST_TMP/auto2" -- $mg > "$TEST_TMP/auto2.out" 2>&1
expect_eq $? 2 "maya run --replicas auto on 2 ranks"
expect_grep "^maya: --replicas auto: 2 ranks: no smaller run of the program would show more replicas" \
    "$TEST_TMP/auto2.out" "the message for 2 ranks"
[ -e "$TEST_TMP/auto2/run.conf" ] && fail "--replicas auto on 2 ranks started a run"
"$MAYA" run -q --replicas auto -n 2 -g h100x16 -o "$TEST_TMP/auto3" -- $mg > "$TEST_TMP/auto3.out" 2>&1
expect_eq $? 2 "maya run --replicas auto -n 2"
expect_grep "replicas need one process per GPU" "$TEST_TMP/auto3.out" "the message for -n 2"
[ -e "$TEST_TMP/auto3/run.conf" ] && fail "--replicas auto -n 2 started a run"

# refused: no classes (a run without --dedup), with --replicas too, a size
# the DP dimension does not grow to, a malformed file
refuse_like() {
    local says=$1
    shift
    "$MAYA" run -q "$@" -o "$TEST_TMP/bad" -- $mg > "$TEST_TMP/bad.out" 2>&1
    expect_eq $? 2 "maya run $*"
    expect_grep "$says" "$TEST_TMP/bad.out" "the message for $*"
    [ -e "$TEST_TMP/bad/run.conf" ] && fail "maya run $* started a run"
    return 0
}
refuse_like "no classes of duplicate-rank elimination there .*run the smaller job with --dedup" \
    --replicas-like "$TEST_TMP/full" -g h100x16
refuse_like "give one of them" --replicas-like "$TEST_TMP/small" --replicas 4:2,2:1 -g h100x16
refuse_like "give one of them" --replicas-like "$TEST_TMP/small" --replicas auto -g h100x16
refuse_like "its 8 ranks showed --replicas 2:1,2:2, but its outermost dimension 2:2 of 8 ranks does not grow to 4" \
    --replicas-like "$TEST_TMP/small" -g h100x4
cp -r "$TEST_TMP/small" "$TEST_TMP/small.cut"
head -c 40 "$TEST_TMP/small/traces/dedup-classes" > "$TEST_TMP/small.cut/traces/dedup-classes"
refuse_like "small.cut/traces/dedup-classes.*expected" --replicas-like "$TEST_TMP/small.cut" -g h100x16

# layouts that cannot be
for bad in "3:2" "4:2,2:2" "x" "4:0" "2:1,2:1" "17:1"; do
    "$MAYA" run -q --replicas "$bad" -g h100x16 -o "$TEST_TMP/bad" -- $mg > "$TEST_TMP/bad.out" 2>&1
    rc=$?
    expect_eq $rc 2 "maya run --replicas $bad"
    expect_grep "^maya: --replicas " "$TEST_TMP/bad.out" "the message for --replicas $bad"
    [ -e "$TEST_TMP/bad/run.conf" ] && fail "--replicas $bad started a run"
done

# A start-up that needs every rank at once, not PyTorch's: minigpt's rank 0
# hands out the NCCL id only once all ranks have connected
# (NCCL_BOOT_WAIT_ALL=1, tests/workloads/nccl_boot.h). The replicas started
# first wait; they are not PyTorch processes, so maya run does not stand in
# for the others (it would join a TCP store): it starts more, a few at a
# time, until all six have joined, and every one runs its start-up.
d=$TEST_TMP/wait_all
NCCL_BOOT_WAIT_ALL=1 "$MAYA" run -q --tee none --replicas 8:1 -g h100x8 -o "$d" -- \
    "$WORKLOADS/minigpt" --iters 3 --hidden 256 --heads 4 --seq 128 --layers 2 > "$d.out" 2>&1 ||
    fail "maya run --replicas 8:1 minigpt (rank 0 waiting for all) failed: $(tail -20 "$d.out")"
expect_count 6 '^rank\.[2-7]\.note=a replica, not emulated \(--replicas\), rebuilt from rank 1$' "$d/run.conf"
for r in 2 3 4 5 6 7; do
    expect_grep "^rank\.$r\.pid=[1-9]" "$d/run.conf" "rank $r started"
done
expect_no_grep "store" "$d.out" "maya run's output"
# more were started only after those running had waited 2 s without CPU
wall=$(sed -n 's/^wall_s=//p' "$d/run.conf")
awk -v w="$wall" 'BEGIN { exit !(w >= 2) }' || fail "the replicas did not wait for each other: the job took $wall s"
expect_grep "^status     all 8 processes exited 0; 6 replicas not emulated" "$d/report.txt" "the report"
exit 0
