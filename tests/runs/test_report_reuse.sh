#!/usr/bin/env bash
# maya report reuses DIR/job.mtrace while the traces it was collated from,
# the collation's mode and the maya binary are as they were
# (DIR/job.mtrace.inputs, src/job_reuse.c), and collates again when any of
# them changed: a trace rewritten with the same bytes, a trace edited in
# place with its modification time set back, a trace cut short, another
# maya binary.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/run
"$MAYA" run -q -g h100x4 -o "$d" -- "$WORKLOADS/minigpt" --tp 2 --pp 2 --iters 3 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run minigpt failed: $(tail -20 "$TEST_TMP/out")"
[ -s "$d/job.mtrace.inputs" ] || fail "maya run left no job.mtrace.inputs: $(ls "$d")"
expect_grep "^trace rank-3.mtrace " "$d/job.mtrace.inputs"
cp "$d/report.json" "$TEST_TMP/first.json"
job_id() { stat -c "%i %Y.%y" "$d/job.mtrace"; }

# report() WHAT: maya report on the run; the report must be the first one
report() {
    "$MAYA" report "$@" "$d" > "$TEST_TMP/out" 2>&1 || fail "maya report ($what) failed: $(cat "$TEST_TMP/out")"
    cmp -s "$d/report.json" "$TEST_TMP/first.json" || fail "maya report ($what) gave another report.json"
}
reused() { grep -q "^maya: $d/job.mtrace reused: its traces are as they were when it was collated$" "$TEST_TMP/out"; }

what="traces unchanged"
before=$(job_id)
report
reused || fail "maya report did not reuse job.mtrace of unchanged traces: $(cat "$TEST_TMP/out")"
expect_eq "$(job_id)" "$before" "job.mtrace (inode, modification time) after a report that reused it"

what="a trace rewritten with the same bytes"
cp "$d/traces/rank-1.mtrace" "$TEST_TMP/r1" && mv "$TEST_TMP/r1" "$d/traces/rank-1.mtrace"
report
reused && fail "maya report reused job.mtrace after rank 1's trace was rewritten"
[ "$(job_id)" != "$before" ] || fail "job.mtrace was not written again after rank 1's trace was rewritten"

what="a trace edited in place, its modification time set back"
before=$(job_id)
stamp=$(stat -c %y "$d/traces/rank-2.mtrace")
sleep 0.05
dd if="$d/traces/rank-2.mtrace" of="$d/traces/rank-2.mtrace" bs=1 count=1 skip=100 seek=100 conv=notrunc 2> /dev/null
touch -d "$stamp" "$d/traces/rank-2.mtrace"
report
reused && fail "maya report reused job.mtrace after rank 2's trace was written in place (touch -d)"
[ "$(job_id)" != "$before" ] || fail "job.mtrace was not written again after rank 2's trace was edited"

what="another maya binary"
before=$(job_id)
cp "$MAYA" "$TEST_TMP/maya-copy"
MAYA_DATA_DIR=$MAYA_BUILD/share/maya "$TEST_TMP/maya-copy" report "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report with a copy of maya failed: $(cat "$TEST_TMP/out")"
reused && fail "another maya binary reused the job trace the first one collated"
[ "$(job_id)" != "$before" ] || fail "job.mtrace was not written again by another maya binary"
what="back to the first binary"
report
reused && fail "the first binary reused a job trace the copy collated"

what="the stamp removed"
rm "$d/job.mtrace.inputs"
report
reused && fail "maya report reused a job trace without job.mtrace.inputs"
[ -s "$d/job.mtrace.inputs" ] || fail "maya report did not record what job.mtrace was made from"

# a trace cut short after the run: collated again, and the collation says so
# (the job trace of the whole traces is not reused)
size=$(stat -c %s "$d/traces/rank-3.mtrace")
truncate -s $((size / 2)) "$d/traces/rank-3.mtrace"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status of maya report on a trace cut short"
reused && fail "maya report reused job.mtrace after rank 3's trace was cut short"
expect_grep "^NOT SIMULATED: collation: " "$d/report.txt"
echo "ok"
