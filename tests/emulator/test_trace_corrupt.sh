#!/usr/bin/env bash
# A truncated or corrupt trace gives an error naming the file and the offset,
# never a crash: the trace of a real run is cut at many offsets, has bits
# flipped, garbage headers, and records changed inside chunks that still pass
# their checksums (tests/emulator/trace_fuzz.py); some cases also run under
# valgrind (memory errors fail the test). A cut trace with --partial reads
# up to its last whole chunk.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/graph_capture" > /dev/null || fail "graph_capture failed"
t=$TEST_TMP/tr/rank-0.mtrace
dump "$t" > /dev/null
vg=0
command -v valgrind > /dev/null && vg=12 # installed by scripts/deps.sh
python3 "$MAYA_TOP/tests/emulator/trace_fuzz.py" "$MAYA" "$t" "$TEST_TMP" --valgrind $vg > "$TEST_TMP/out" 2>&1 ||
    fail "$(tail -20 "$TEST_TMP/out")"
cat "$TEST_TMP/out"
expect_grep "damaged traces: [0-9]+ refused with a message, none crashed" "$TEST_TMP/out"

# the exact messages for the common cases
head -c 100 "$t" > "$TEST_TMP/short.mtrace"
"$MAYA" trace dump "$TEST_TMP/short.mtrace" > /dev/null 2> "$TEST_TMP/err" && fail "a 100-byte trace was accepted"
expect_grep "$TEST_TMP/short.mtrace: offset 100: truncated header: expected 128 bytes, found 100" "$TEST_TMP/err"
size=$(stat -c %s "$t")
head -c $((size - 5)) "$t" > "$TEST_TMP/cut.mtrace"
"$MAYA" trace dump "$TEST_TMP/cut.mtrace" > /dev/null 2> "$TEST_TMP/err" && fail "a cut trace was accepted"
expect_grep "$TEST_TMP/cut.mtrace: offset [0-9]+: truncated chunk" "$TEST_TMP/err"
"$MAYA" trace dump --partial "$TEST_TMP/cut.mtrace" > "$TEST_TMP/partial" 2>&1 || fail "--partial refused a cut trace"
expect_grep "^# trace is incomplete" "$TEST_TMP/partial"
