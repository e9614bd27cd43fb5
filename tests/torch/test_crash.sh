#!/usr/bin/env bash
# A PyTorch rank that raises an exception: maya run stops the other rank,
# the report's status is headlined by the exception (the traceback's last
# line), not by its consequence (the other rank's unmatched all-reduce used
# to be reported first as "the job deadlocks"), and the steps before it are
# simulated.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

d=$TEST_TMP/crash
"$MAYA" run -g h100x2 -o "$d" -- "$PY" "$TORCH_WORKLOADS/crash_rank.py" > "$d.out" 2>&1
expect_eq "$?" 1 "maya run's exit status when a rank raises"
expect_grep '^status     FAILED: 1 of 2 processes failed; first: rank 1 exited 1: .*ValueError: bad batch at step 5$' "$d.out"
expect_grep '^status     FAILED: .*ValueError: bad batch at step 5$' "$d/report.txt"
expect_no_grep 'deadlock' "$d.out"
expect_grep '^iteration ' "$d/report.txt" "the steps before the exception were not simulated"
expect_eq "$(report_field "$d" "r['status']")" '"failed"' "report.json status"
report_field "$d" "r['cause']" | grep -q 'ValueError: bad batch at step 5' || fail "report.json cause: $(report_field "$d" "r['cause']")"
echo "crash: ok"
