#!/usr/bin/env bash
# A failing rank: maya run stops the others (as torchrun does), records how
# each process ended, names the failing rank with its stderr, and exits 1.
# Bad option values are refused with a message naming what is allowed.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/fail
start=$(date +%s)
"$MAYA" run -q -g h100x3 -o "$d" -- sh -c '
    if [ "$RANK" = 1 ]; then echo "rank one gives up" >&2; exit 7; fi
    exec sleep 60' > "$TEST_TMP/out" 2>&1
rc=$?
expect_eq "$rc" 1 "exit status of maya run when a rank fails"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "the other ranks were not stopped after rank 1 failed"
expect_grep "^rank\.1\.exit=7$" "$d/run.conf"
expect_grep "^rank\.0\.signal=15$" "$d/run.conf"
expect_grep "^rank\.0\.note=terminated: rank 1 failed$" "$d/run.conf"
expect_grep "^rank\.2\.signal=15$" "$d/run.conf"
# the report names the failing rank, its exit status and the end of its stderr
expect_grep "^status     FAILED: 1 of 3 processes failed" "$d/report.txt"
expect_grep "rank 1 failed: exit 7" "$d/report.txt"
expect_grep "\| rank one gives up" "$d/report.txt"
expect_grep "rank 0: signal 15 \(Terminated\) \(terminated: rank 1 failed\)" "$d/report.txt"
python3 - "$d/report.json" <<'PY' || fail "report.json does not describe the failure (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["workload_ok"] is False and r["simulated"] is False, r
assert "holds no trace" in r["error"], r["error"]
ranks = {x["rank"]: x for x in r["ranks"]}
assert ranks[1]["exit_status"] == 7 and ranks[1]["signal"] is None, ranks[1]
assert ranks[0]["exit_status"] is None and ranks[0]["signal"] == 15, ranks[0]
assert ranks[0]["note"] == "terminated: rank 1 failed", ranks[0]
PY
# without -q the summary on stderr says the same
"$MAYA" run -g h100x2 -o "$TEST_TMP/fail2" -- sh -c '[ "$RANK" = 0 ] || { echo "no luck" >&2; exit 9; }' \
    > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "exit status of maya run when a rank fails"
expect_grep "rank 1 failed: exit 9" "$TEST_TMP/out"
expect_grep "\| no luck" "$TEST_TMP/out"
expect_grep "report in $TEST_TMP/fail2/report.txt" "$TEST_TMP/out"

# A command that does not exist, or is not executable, is refused before
# anything starts (it used to run ranks that exited 127, reported as "did
# the workload use CUDA?"); a rank that cannot exec still says why in its log.
d=$TEST_TMP/noexec
"$MAYA" run -q -o "$d" -- /nonexistent/program > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status when the command cannot start"
expect_grep "cannot execute /nonexistent/program: No such file or directory" "$TEST_TMP/out"
[ ! -e "$d" ] || fail "a refused command left a run directory"
"$MAYA" run -q -o "$d" -- no-such-program-anywhere > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status for a program not on PATH"
expect_grep "cannot execute no-such-program-anywhere: no such program on PATH" "$TEST_TMP/out"
"$MAYA" run -q -o "$d" -- "$TEST_TMP" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status for a directory as the command"
expect_grep "cannot execute $TEST_TMP: Is a directory" "$TEST_TMP/out"
"$MAYA" run -q -o "$d" -- sh -c 'exec /nonexistent/inner' > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "exit status when a rank cannot exec its program"
expect_grep "^rank\.0\.exit=127$" "$d/run.conf"
expect_grep "first: rank 0 exited 127: .*/nonexistent/inner" "$d/report.txt"

# Bad usage: exit 2 and a message saying what is allowed.
bad() {
    local want=$1
    shift
    "$MAYA" run "$@" > "$TEST_TMP/out" 2>&1
    expect_eq "$?" 2 "exit status of maya run $*"
    expect_grep "$want" "$TEST_TMP/out"
}
bad 'unknown GPU "nosuch"; known: .*H100-SXM' -g nosuchx8 -- true
bad 'expected <gpu>x<count>' -g h100 -- true
bad 'count "0" is not a number' -g h100x0 -- true
bad 'expected a multiple of 2 processes' -g h100x16 -n 3 -- true
bad 'expected a multiple of 2 processes' -g h100x16 -n 1 -- true
bad 'cannot share 8 GPUs evenly' -g h100x8 -n 3 -- true
bad '12 GPUs do not fill nodes of 8 .*expected a multiple of 8' -g h100x12 -- true
bad 'expected a number of processes' -g h100x8 -n zero -- true
bad 'no such file and no known cluster' --cluster /nonexistent.conf -- true
bad 'unknown option "--bogus"' --bogus 1 -- true
bad 'no command to run' -g h100x1
bad 'expected a value after it' -g
bad 'expected a number of seconds' --timeout -1 -- true
bad 'cannot read it' --oracle /nonexistent -- true
# an oracle file is checked before the run (a bad line used to surface only in its report)
printf 'name=foo device=abc\n' > "$TEST_TMP/bad-oracle.txt"
bad 'bad-oracle.txt:1: device duration is "abc"' -o "$TEST_TMP/oracle-run" --oracle "$TEST_TMP/bad-oracle.txt" -- true
[ -e "$TEST_TMP/oracle-run" ] && fail "a run directory was made before the oracle file was refused"

# An existing run is not overwritten.
mkdir -p "$TEST_TMP/old" && echo "nprocs=0" > "$TEST_TMP/old/run.conf"
"$MAYA" run -q -o "$TEST_TMP/old" -- true > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "exit status when DIR holds a run"
expect_grep "already holds a run" "$TEST_TMP/out"

# --timeout stops a workload that hangs.
d=$TEST_TMP/hang
"$MAYA" run -q --timeout 1 -o "$d" -- sleep 60 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "exit status after --timeout"
expect_grep "^rank\.0\.note=terminated: --timeout 1 s reached$" "$d/run.conf"
exit 0
