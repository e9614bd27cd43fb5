#!/usr/bin/env bash
# Duplicate-rank elimination (maya run --dedup, docs/dedup.md) on minigpt,
# TP2 x PP2 x DP2 on 8 emulated H100s, 6 iterations, sized so that the GPU
# bounds the iteration (host gaps measured on shared cores then do not move
# the prediction): the ranks of each pipeline stage issue the same NCCL
# operations, so ranks 2-3 stop and are rebuilt from rank 1, ranks 5-7 from
# rank 4 (rank 0 runs on, and the next of its class stands for the others);
# they stop after their operations repeated, before the end; the
# job trace holds every rank, each rebuilt one with its source's operations
# on its own communicators; the prediction is the one without elimination
# to within 0.5 %. Stages whose operations differ (TP2 x PP4) are not
# taken as alike. Then the collator's refusals: a note without its record,
# and a source whose operations differ from the stopped rank's.
# The two runs compared take the cluster with host time a tenth as long
# (fast_host_cluster in tests/lib.sh): a host twice as slow in one run as in
# the other (a busy CI machine's CPU time) moved this job by 0.6 %.
# test: alone
. "$MAYA_TOP/tests/lib.sh"
cluster=$(fast_host_cluster dgx-h100)

mg="$WORKLOADS/minigpt --tp 2 --pp 2 --iters 6 --hidden 4096 --heads 32 --seq 1024 --layers 4"
for mode in dedup plain; do
    flag=; [ $mode = dedup ] && flag=--dedup
    "$MAYA" run -q $flag -g h100x8 --cluster "$cluster" -o "$TEST_TMP/$mode" -- $mg > "$TEST_TMP/$mode.out" 2>&1 ||
        fail "maya run $flag minigpt failed: $(tail -20 "$TEST_TMP/$mode.out")"
done
d=$TEST_TMP/dedup

# who stopped, and who stands for them
for r in 2 3 5 6 7; do
    src=$([ $r -lt 4 ] && echo 1 || echo 4)
    expect_grep "^rank\.$r\.note=eliminated, rebuilt from rank $src\$" "$d/run.conf" "rank $r's note in run.conf"
    expect_grep "^rank\.$r\.exit=0\$" "$d/run.conf" "rank $r exited 0"
    expect_grep "^source=$src\$" "$d/traces/rank-$r.eliminated" "rank $r's elimination note"
    expect_grep "does what rank $src does" "$d/logs/rank-$r.err" "rank $r says why it stopped"
done
for r in 0 1 4; do
    [ -e "$d/traces/rank-$r.eliminated" ] && fail "rank $r, a representative, was eliminated"
    expect_no_grep "^rank\.$r\.note=" "$d/run.conf" "rank $r ran to the end"
done
expect_grep "^status     all 8 processes exited 0; 5 of them eliminated" "$d/report.txt" "the report counts them"

# they stopped after their operations repeated, well before the end
"$MAYA" trace dump "$d/job.mtrace" > "$TEST_TMP/job.dump" || fail "cannot dump the job trace"
for r in 0 2 4 5; do
    "$MAYA" trace dump "$d/traces/rank-$r.mtrace" > "$TEST_TMP/rank-$r.dump" || fail "cannot dump rank $r"
done
n0=$(grep -c '^coll' "$TEST_TMP/rank-0.dump")
n1=$(grep -c '^coll' "$TEST_TMP/rank-2.dump")
line=$(grep '^eliminated' "$TEST_TMP/rank-2.dump") || fail "rank 2's trace has no eliminated record"
stop=$(echo "$line" | sed 's/.* stop_op=\([0-9]*\).*/\1/')
check=$(echo "$line" | sed 's/.* check_op=\([0-9]*\).*/\1/')
expect_eq "$stop" "$n1" "rank 2's stop_op counts its coll records"
[ "$check" -gt 0 ] && [ "$stop" -ge "$check" ] || fail "rank 2 stopped at $stop before its check at $check"
# two iterations of 48 operations after 3 broadcasts on stage 0: the repetition
# is seen at the end of the second
expect_eq "$check" 99 "rank 2 compared its hash after two iterations"
# The verdict waits for the last rank's check (stage 1's, at the end of its
# second iteration); the small all-reduce of each iteration's gradient norm
# over both stages keeps stage 0 within an iteration of it, and rank 2, rank
# 0 of communicators whose other members stop too, waits for them at its
# next call rather than running on: it stops by the end of its fourth
# iteration, two before the last (once it ran to the end, or nearly, when
# the members' notes came late).
[ $((n1 + 2 * 48)) -le "$n0" ] || fail "rank 2 issued $n1 of rank 0's $n0 operations: it did not stop early"

# the job trace: every rank, the rebuilt ones as references to their
# sources' sections (their own communicators only); collated as full copies
# (MAYA_REBUILT_COPY=1) they hold their source's operations, and the report
# is the same
expect_count 8 '^rank_begin' "$TEST_TMP/job.dump"
expect_count 5 '^rank_rebuilt .* ref$' "$TEST_TMP/job.dump"
expect_grep '^job .* rebuilt' "$TEST_TMP/job.dump" "the job record says ranks were rebuilt"
cp -r "$d" "$TEST_TMP/copies"
MAYA_REBUILT_COPY=1 "$MAYA" report -q "$TEST_TMP/copies" > "$TEST_TMP/copies.out" 2>&1 ||
    fail "maya report with full copies failed: $(tail -5 "$TEST_TMP/copies.out")"
python3 "$MAYA_TOP/tests/runs/same_report.py" "$d/report.json" "$TEST_TMP/copies/report.json" ||
    fail "the report differs with full copies (above)"
"$MAYA" trace dump "$TEST_TMP/copies/job.mtrace" > "$TEST_TMP/copies.dump" || fail "cannot dump the copies"
expect_count 5 '^rank_rebuilt' "$TEST_TMP/copies.dump"
expect_count 0 '^rank_rebuilt .* ref$' "$TEST_TMP/copies.dump"
python3 - "$TEST_TMP/copies.dump" <<'PY' || fail "the rebuilt sections are wrong (above)"
import re, sys
sec, colls, comms, begin = None, {}, {}, {}
for line in open(sys.argv[1]):
    if line.startswith('rank_begin'):
        sec = int(re.search(r' rank=(\d+)', line).group(1)); colls[sec] = []; comms[sec] = set()
    elif line.startswith('rank_rebuilt'):
        m = re.search(r'rank=(\d+) source=(\d+)', line)
        assert int(m.group(1)) == sec, line
        begin[sec] = int(m.group(2))
    elif line.startswith('comm '):
        comms[sec].add(re.search(r' id=(0x[0-9a-f]+)', line).group(1))
    elif line.startswith('coll '):
        f = dict(re.findall(r' (\w+)=(\S+)', line))
        colls[sec].append((f['api'], f['count'], f['rank'], f['cseq'], f['comm']))
assert sorted(begin) == [2, 3, 5, 6, 7] and all(begin[r] == (1 if r < 4 else 4) for r in begin), begin
for r, s in begin.items():
    mine, src = colls[r], colls[s]
    assert len(mine) == len(src), (r, len(mine), len(src))
    # the same operations in the same order, on the rank's own communicators
    assert [(a, c, q) for a, c, _, q, _ in mine] == [(a, c, q) for a, c, _, q, _ in src], r
    assert {k for *_, k in mine} <= comms[r], (r, "a collective on a communicator the rank never made")
    assert comms[r] != comms[s]
print("rebuilt sections ok")
PY

# the prediction is the one without elimination, within 0.5 % of the iteration
python3 - "$d/report.json" "$TEST_TMP/plain/report.json" <<'PY' || fail "predictions differ (above)"
import json, sys
e, p = (json.load(open(f)) for f in sys.argv[1:3])
assert e["simulated"] and p["simulated"] and e["workload_ok"], (e["error"], p["error"])
assert len(e["iterations"]) == len(p["iterations"]) == 6, (e["iterations"], p["iterations"])
assert e["idle_time_s"] < 0.05 * e["iteration_time_s"], "the GPU should bound this iteration"
err = abs(e["iteration_time_s"] - p["iteration_time_s"]) / p["iteration_time_s"]
print("iteration with elimination %.6f s, without %.6f s (%.3f %%)" % (e["iteration_time_s"], p["iteration_time_s"], 100 * err))
assert err < 0.005, err
notes = {x["rank"]: x.get("note") for x in e["ranks"]}
assert all(x["traced"] for x in e["ranks"]) and notes[2] == "eliminated, rebuilt from rank 1", e["ranks"]
assert notes[0] is None and notes[1] is None, e["ranks"]
PY

# Small messages (a tiny model: activations under the copy threshold, so the
# pipeline's sends move data): rank 1 runs on and keeps receiving gradients
# from, and sending activations to, rank 5, which stopped; rank 4, rank 0 of
# the stage-1 groups, stops only after its members did. The run and its
# report go through with every rank rebuilt.
"$MAYA" run -q --dedup -g h100x8 -o "$TEST_TMP/tiny" -- "$WORKLOADS/minigpt" --tp 2 --pp 2 --iters 8 --hidden 64 \
    --heads 4 --seq 32 --vocab 512 > "$TEST_TMP/tiny.out" 2>&1 || fail "tiny minigpt with --dedup failed: $(tail -20 "$TEST_TMP/tiny.out")"
expect_grep "^rank\.5\.note=eliminated, rebuilt from rank 4\$" "$TEST_TMP/tiny/run.conf" "rank 5 stopped"
expect_no_grep "^rank\.1\.note=" "$TEST_TMP/tiny/run.conf" "rank 1 ran on"
"$MAYA" trace dump "$TEST_TMP/tiny/traces/rank-1.mtrace" > "$TEST_TMP/tiny1.dump" || fail "dump tiny rank 1"
expect_grep '^coll .*api=ncclRecv .*peer=1 .* data_moved' "$TEST_TMP/tiny1.dump" "rank 1 receives small messages"
"$MAYA" trace dump "$TEST_TMP/tiny/traces/rank-4.mtrace" > "$TEST_TMP/tiny4.dump" || fail "dump tiny rank 4"
"$MAYA" trace dump "$TEST_TMP/tiny/traces/rank-5.mtrace" > "$TEST_TMP/tiny5.dump" || fail "dump tiny rank 5"
[ "$(grep -c '^coll' "$TEST_TMP/tiny5.dump")" -lt "$(grep -c '^coll' "$TEST_TMP/tiny4.dump")" ] ||
    fail "rank 5 did not stop before the end: rank 1's last receives had nobody to come from"
python3 - "$TEST_TMP/tiny/report.json" <<'PY' || fail "the tiny run's report is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["simulated"] and r["workload_ok"] and len(r["iterations"]) == 8, (r["error"], r["iterations"])
assert all(x["traced"] for x in r["ranks"]), r["ranks"]
PY

# Pipeline stages that differ are never taken as alike: TP2 x PP4 (no
# data-parallel replicas), 8 micro-batches. Each rank synchronises once
# before its first NCCL operation; stage 1's two warm-up micro-batches and
# stage 2's warm-up and first steady one issue the same first 12 operations
# (a receive, four all-reduces, a send, twice), which once passed for two
# iterations: stage 2 was stopped as a duplicate of stage 1 and the collator
# refused the job. Only stages 1-3's second tensor-parallel ranks stop, as
# duplicates of their first; stage 0's both run on (rank 0 runs on anyway,
# and rank 1, the next of its class, would stand for the others).
"$MAYA" run -q --dedup -g h100x8 -o "$TEST_TMP/pp4" -- "$WORKLOADS/minigpt" --tp 2 --pp 4 --iters 4 --hidden 64 \
    --heads 4 --layers 4 --seq 32 --vocab 512 --micro-batches 8 > "$TEST_TMP/pp4.out" 2>&1 ||
    fail "minigpt TP2 x PP4 with --dedup failed: $(tail -20 "$TEST_TMP/pp4.out")"
for r in 3 5 7; do
    expect_grep "^rank\.$r\.note=eliminated, rebuilt from rank $((r - 1))\$" "$TEST_TMP/pp4/run.conf" \
        "rank $r rebuilt from the other rank of its stage"
done
for r in 0 1 2 4 6; do
    expect_no_grep "^rank\.$r\.note=" "$TEST_TMP/pp4/run.conf" "rank $r, the first of its stage or rank 0, ran on"
done
python3 - "$TEST_TMP/pp4/report.json" <<'PY' || fail "the TP2 x PP4 run's report is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["simulated"] and r["workload_ok"] and len(r["iterations"]) == 4, (r["error"], r["iterations"])
assert all(x["traced"] for x in r["ranks"]), r["ranks"]
PY

# the collator refuses what it cannot stand for: a note without its record ...
cp -r "$d" "$TEST_TMP/bad1"
rm -f "$TEST_TMP/bad1/job.mtrace"
touch "$TEST_TMP/bad1/traces/rank-4.eliminated"
"$MAYA" report "$TEST_TMP/bad1" > "$TEST_TMP/bad1.out" 2>&1 && fail "maya report took a note without its record"
expect_grep "rank-4.eliminated says duplicate-rank elimination stopped rank 4, but its trace has no ELIMINATED" \
    "$TEST_TMP/bad1.out" "the collator names the missing record"

# ... and a stopped rank whose source did something else
cat > "$TEST_TMP/r0.txt" <<'EOF'
header rank=0 world_size=2
stream id=1 dev=0
comm id=0x77 rank=0 nranks=2
coll t=0us..1us stream=1 op=allreduce comm=0x77 cseq=0 rank=0 nranks=2 count=4096
coll t=2us..3us stream=1 op=allreduce comm=0x77 cseq=1 rank=0 nranks=2 count=4096
EOF
sed -e 's/rank=0 world/rank=1 world/' -e 's/ rank=0 nranks/ rank=1 nranks/' -e '$ s/count=4096/count=8192/' \
    "$TEST_TMP/r0.txt" > "$TEST_TMP/r1.txt"
echo "eliminated source=0" >> "$TEST_TMP/r1.txt"
mkdir -p "$TEST_TMP/bad2/traces"
"$MAYA" trace build "$TEST_TMP/r0.txt" "$TEST_TMP/bad2/traces/rank-0.mtrace" || fail "trace build rank 0"
"$MAYA" trace build "$TEST_TMP/r1.txt" "$TEST_TMP/bad2/traces/rank-1.mtrace" || fail "trace build rank 1"
echo "source=0" > "$TEST_TMP/bad2/traces/rank-1.eliminated"
printf 'version=1\nlauncher=test\ngpu=H100-SXM\ngpu_count=2\nnprocs=2\nrank.0.exit=0\nrank.1.exit=0\n' \
    > "$TEST_TMP/bad2/run.conf"
"$MAYA" report "$TEST_TMP/bad2" > "$TEST_TMP/bad2.out" 2>&1 && fail "maya report rebuilt a rank from an unlike one"
expect_grep "rank 1 was eliminated as a duplicate of rank 0, but their first 2 NCCL operations differ" \
    "$TEST_TMP/bad2.out" "the collator names the unlike ranks"
exit 0
