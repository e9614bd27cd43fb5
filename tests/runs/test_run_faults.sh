#!/usr/bin/env bash
# Reliability of maya run under faults (tests/workloads/faults.cu):
# - a rank killed by SIGKILL or SIGTERM leaves its trace readable up to its
#   last record (the tail file), and the report simulates what was recorded;
# - maya run killed outright leaves a run.conf that maya report can use, and
#   the report says the run was cut short; while it runs, maya report
#   refuses the directory;
# - a rank that hangs (SIGSTOP) while the other waits in an all-reduce is
#   named with the collective and its sequence number within --hang-timeout;
# - --timeout is reported as a stop, not as "all processes exited 0";
# - two runs into one -o directory: one runs, the other is refused naming it;
# - a job that cannot fit the machine is refused before anything starts;
# - a replay whose cut-short ranks leave others' collectives unmatched is
#   simulated up to there, not reported as a deadlock.
. "$MAYA_TOP/tests/lib.sh"
F=$WORKLOADS/faults

# ---- SIGKILL and SIGTERM: every record survives ----
for sig in kill term; do
    t=$TEST_TMP/$sig-traces
    mkdir -p "$t"
    LD_LIBRARY_PATH=$MAYA_LIBS MAYA_TRACE_DIR=$t RANK=0 WORLD_SIZE=1 "$F" $sig 100000 > /dev/null 2>&1
    [ -f "$t/rank-0.mtrace.tmp" ] && [ -f "$t/rank-0.mtrace.tail" ] || fail "$sig: no .tmp and .tail trace left"
    "$MAYA" trace dump --partial "$t/rank-0.mtrace.tmp" > "$TEST_TMP/$sig.dump" || fail "$sig: trace unreadable"
    n=$(grep -c '^memset' "$TEST_TMP/$sig.dump")
    expect_eq "$n" 100000 "memsets recorded before the $sig (the last chunk used to be lost)"
    grep '^memset' "$TEST_TMP/$sig.dump" | tail -1 | grep -q 'value=159 ' || fail "$sig: the last memset is not #99999"
    expect_grep '^sync .*api=cudaStreamSynchronize' "$TEST_TMP/$sig.dump"
    # the file alone lacks the tail's records
    mv "$t/rank-0.mtrace.tail" "$t/aside"
    m=$("$MAYA" trace dump --partial "$t/rank-0.mtrace.tmp" | grep -c '^memset')
    [ "$m" -lt 100000 ] || fail "$sig: the tail should hold the last records (the file alone has $m)"
done

# ---- a killed rank in a run: the report names it and simulates the rest ----
d=$TEST_TMP/killed
"$MAYA" run -q -g h100x2 -o "$d" -- "$F" kill 3000 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "maya run's exit status when a rank is killed"
expect_grep '^cause=rank 1 was killed by signal 9 \(Killed\)$' "$d/run.conf"
expect_grep '^status     FAILED: [12] of 2 processes failed; first: rank 1 was killed by signal 9' "$d/report.txt" # rank 0 may fail on its own on the dead peer
expect_grep '^iteration ' "$d/report.txt" "the killed run was not simulated"
python3 - "$d/report.json" <<'PY' || fail "report.json of a killed rank (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed" and r["simulated"] and not r["workload_ok"], r
assert r["cause"].startswith("rank 1 was killed by signal 9"), r["cause"]
assert r["iterations_found"] >= 2900, r["iterations_found"]
PY

# ---- maya run itself killed: run.conf is there, the report says so ----
d=$TEST_TMP/launcher-killed
"$MAYA" run -q -g h100x2 -o "$d" -- "$F" ok 100000000 > /dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^rank\.1\.pid=' "$d/run.conf" 2> /dev/null && break; sleep 0.1; done
sleep 1
# while it runs, maya report refuses the directory (it said the launcher had been killed)
"$MAYA" report "$d" > "$TEST_TMP/live" 2>&1
expect_eq "$?" 3 "maya report of a run still going"
expect_grep "$d is still running: maya-run pid $pid, started .*faults ok 100000000" "$TEST_TMP/live"
[ -e "$d/report.txt" ] && fail "maya report wrote into a run still going"
kill -9 $pid
wait $pid 2> /dev/null
expect_grep '^state=running$' "$d/run.conf"
for _ in $(seq 50); do pgrep -f "faults ok 100000000" > /dev/null || break; sleep 0.1; done
pgrep -f "faults ok 100000000" > /dev/null && fail "the ranks outlived maya run"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1
expect_grep '^status     CUT SHORT: the launcher \(maya-run, pid [0-9]+\) ended before the ranks did' "$d/report.txt"
# a launcher of another host (a shared file system): its pid says nothing here
sed -i 's/^launcher_host=.*/launcher_host=another-host.invalid/' "$d/run.conf"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1
expect_grep '^status     CUT SHORT: the launcher \(maya-run, pid [0-9]+ on another-host.invalid\) has not recorded the run.s end \(it was killed, or still runs there\)' "$d/report.txt"
expect_grep '^iteration ' "$d/report.txt" "the ranks' traces were not simulated"

# ---- a hung rank: named, with the collective, within the hang timeout ----
d=$TEST_TMP/hung
start=$(date +%s)
"$MAYA" run -q -g h100x2 --hang-timeout 3 -o "$d" -- "$F" stop 40 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "maya run's exit status when a rank hangs"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "the hung job was not stopped within 30 s"
expect_grep '^cause=rank 1 hung \(its process is stopped\): no call for 3 s while rank 0 waits in allreduce #39 on communicator 0x[0-9a-f]+ \(for rank 1\)$' "$d/run.conf"
expect_grep '^rank\.1\.note=hung: ' "$d/run.conf"
expect_grep 'rank 1 hung' "$TEST_TMP/out"
expect_grep '^status     FAILED: 1 of 2 processes failed; first: rank 1 hung' "$d/report.txt"
python3 - "$d/report.json" <<'PY' || fail "report.json of a hung rank (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed" and r["hung_ranks"] == [1], r
PY

# a rank busy on the CPU for 6 s (compiling, loading data) is not hung
d=$TEST_TMP/busy
"$MAYA" run -q -g h100x2 --hang-timeout 3 -o "$d" -- "$F" busy 20 > "$TEST_TMP/out" 2>&1 ||
    fail "a busy rank was taken for a hung one: $(cat "$TEST_TMP/out")"
expect_no_grep 'hung' "$d/run.conf"

# ---- --timeout is a stop, never "all processes exited 0" ----
d=$TEST_TMP/timeout
"$MAYA" run -q -g h100x2 --timeout 2 -o "$d" -- "$F" ok 100000000 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "maya run's exit status after --timeout"
expect_grep '^status     STOPPED: --timeout 2 s reached with 2 of 2 ranks still running' "$d/report.txt"
expect_no_grep 'exited 0' "$d/report.txt"

# ---- one run per directory ----
d=$TEST_TMP/shared
"$MAYA" run -q -g h100x2 -o "$d" -- "$F" ok 3000 > "$TEST_TMP/a" 2>&1 &
a=$!
"$MAYA" run -q -g h100x2 -o "$d" -- "$F" ok 3000 > "$TEST_TMP/b" 2>&1 &
b=$!
wait $a; ra=$?
wait $b; rb=$?
[ $(( (ra == 0) + (rb == 0) )) -eq 1 ] || fail "exactly one of two runs into one directory should run (exit $ra, $rb)"
cat "$TEST_TMP/a" "$TEST_TMP/b" > "$TEST_TMP/both"
expect_grep "-o $d: (the directory is in use by another run: maya-run pid [0-9]+|another run is claiming the directory|the directory already holds a run)" "$TEST_TMP/both"
expect_eq "$(ls "$d/traces" | grep -c '\.mtrace$')" 2 "traces of the one run that ran"
"$MAYA" run -q -o "$d" -- "$F" ok 1 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "a run into a finished run's directory (as maya run -o DIR of a used DIR always did)"
expect_grep "the directory already holds a run \(run.conf: .*faults ok 3000, started " "$TEST_TMP/out"

# ---- sizing: refused before anything starts ----
start=$(date +%s)
"$MAYA" run -q -g h100x100000 -o "$TEST_TMP/huge" -- "$F" ok 1 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "maya run -g h100x100000"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the refusal took too long"
expect_grep '100000 processes do not fit this machine: at most [0-9]+ would \(memory: .*; process limit: .*; CPUs: ' "$TEST_TMP/out"
expect_grep 'duplicate-rank elimination' "$TEST_TMP/out"
[ ! -e "$TEST_TMP/huge/traces" ] || fail "a refused job left traces"

# ---- trace writes that fail (a full disk; here a file size limit): the
# emulator's warning reaches maya run through the tail's status, the report
# says the trace was cut short and simulates what it holds ----
d=$TEST_TMP/nospace
"$MAYA" run -q -o "$d" -- sh -c "trap '' XFSZ; ulimit -f 18000; exec $WORKLOADS/minigpt --iters 200" \
    > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "maya run's exit status when a trace could not be written whole"
expect_grep 'rank 0 could not write its trace: File too large' "$TEST_TMP/out"
expect_grep '^cause=rank 0 could not write its trace: File too large$' "$d/run.conf"
expect_grep '^status     INCOMPLETE: all 1 process exited 0, but 1 rank trace was cut short: rank 0 could not write' "$d/report.txt"
expect_grep '^found      [0-9]+ iterations' "$d/report.txt"

# ---- a replay cut short: rank 1's trace ends after 2 of rank 0's 4 collectives ----
d=$TEST_TMP/cut
mkdir -p "$d/traces"
for r in 0 1; do
    n=4
    [ $r = 1 ] && n=2
    {
        echo "header rank=$r world_size=2 gpus_per_node=2 gpu=H100-SXM"
        echo "stream id=1 dev=0"
        echo "comm id=7 rank=$r nranks=2 gpu=$r"
        for i in $(seq 0 $((n - 1))); do
            echo "launch kernel=k t=$((i * 100 + 10))..$((i * 100 + 20)) stream=1"
            echo "coll op=allreduce comm=7 cseq=$i rank=$r nranks=2 count=1048576 dtype=7 t=$((i * 100 + 30))..$((i * 100 + 40)) stream=1"
        done
    } > "$TEST_TMP/r$r.txt"
    "$MAYA" trace build "$TEST_TMP/r$r.txt" "$d/traces/rank-$r.mtrace" || fail "trace build"
done
mv "$d/traces/rank-1.mtrace" "$d/traces/rank-1.mtrace.tmp"
printf 'version=1\nlauncher=test\ngpu=H100-SXM\ngpu_count=2\ngpus_per_node=2\nnprocs=2\nrank.0.exit=0\nrank.1.signal=9\n' > "$d/run.conf"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "maya report of a cut-short run (the workload failed)"
expect_no_grep 'deadlock' "$d/report.txt"
expect_grep '^cut short  1 rank trace ended early; the replay stops where they do: [0-9]+ recorded ops' "$d/report.txt"
expect_grep '^simulated  ' "$d/report.txt"
# the same with whole traces (rank 1 failed with an exception, its trace
# ended normally): still the end of what was recorded, not a deadlock
mv "$d/traces/rank-1.mtrace.tmp" "$d/traces/rank-1.mtrace"
sed -i 's/^rank.1.signal=9$/rank.1.exit=1/' "$d/run.conf"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "maya report of a run whose rank failed"
expect_no_grep 'deadlock' "$d/report.txt"
expect_grep '^cut short  the failed ranks stopped before the others. collectives' "$d/report.txt"
# and with every process ok, unmatched collectives are the program's deadlock
sed -i 's/^rank.1.exit=1$/rank.1.exit=0/' "$d/run.conf"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "maya report of a job that would hang"
expect_grep 'would hang' "$d/report.txt"
echo ok
