#!/usr/bin/env bash
# The fuzz harnesses (fuzz/, built by make fuzz): every input of each
# committed corpus replays without a finding (the regress-* inputs are the
# defects fuzzing and reviews found), then each harness fuzzes for a few
# seconds from its corpus (FUZZ_TEST_SECONDS, default 3) and finds nothing.
. "$MAYA_TOP/tests/lib.sh"

[ -x "$MAYA_BUILD/fuzz/fuzz_rank_trace" ] || fail "the harnesses are not built (make fuzz)"
"$MAYA_TOP/fuzz/run" --replay > "$TEST_TMP/replay" 2>&1 || fail "$(cat "$TEST_TMP/replay")"
cat "$TEST_TMP/replay"
n=$(ls -d "$MAYA_TOP"/fuzz/corpus/*/ | wc -l)
[ "$(grep -c 'findings=0' "$TEST_TMP/replay")" -eq "$n" ] || fail "not every harness replayed its corpus"
for h in rank_trace trace_tail job_trace collate hwspec maya_conf run_conf oracle emulate_opt fatbin; do
    [ -d "$MAYA_TOP/fuzz/corpus/$h" ] || fail "no corpus for harness $h"
done
ls "$MAYA_TOP"/fuzz/corpus/*/regress-* > /dev/null 2>&1 || fail "no regression inputs in the corpora"
nice -n 10 "$MAYA_TOP/fuzz/run" --seconds "${FUZZ_TEST_SECONDS:-3}" > "$TEST_TMP/short" 2>&1 ||
    fail "$(cat "$TEST_TMP/short")"
cat "$TEST_TMP/short"
echo "ok"
