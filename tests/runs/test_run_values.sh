#!/usr/bin/env bash
# Real bytes: tests/workloads/values_read checks the values it copies back
# after copies and memsets (its exit code says whether they are right), then
# reads what kernels and a large launch would have computed. The report
# counts those reads ("values not computed") by the kernel that would have
# had to run, and only those; a kernel's pointer to const is not taken as
# written; MAYA_REAL_BYTES=0 turns the tracking off.
. "$MAYA_TOP/tests/lib.sh"

json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

d=$TEST_TMP/run
"$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" --large > "$TEST_TMP/out" 2>&1 ||
    fail "maya run values_read failed (a value made by copies was wrong?): $(cat "$TEST_TMP/out") $(cat "$d"/logs/*)"
expect_grep "^values_read: ok" "$d/logs/rank-0.out"
expect_grep "^values not computed: 3 small reads by the host saw device bytes that were never computed" "$d/report.txt"
expect_grep "what would have had to run: fill_kernel\(int\*, int, int\) x 2, sum_kernel\(int const\*, int, int\*\) x 1$" \
    "$d/report.txt"
expect_eq "$(json "$d/report.json" 'r["values_not_computed"]["reads"], sorted(r["values_not_computed"]["by_writer"].items())')" \
    "3 [('fill_kernel(int*, int, int)', 2), ('sum_kernel(int const*, int, int*)', 1)]" "report.json values_not_computed"

# the trace: one VALUE_READ after each read of bytes not real, naming the writer;
# the large launch is recorded (not computed) like any other
dump "$d/job.mtrace" > "$TEST_TMP/dump"
expect_eq "$(grep -c '^value_read ' "$TEST_TMP/dump")" "3" "value_read records"
expect_grep "^value_read   src=0x[0-9a-f]+ bytes=4 not_real=4 writer=kernel:sum_kernel\(int const\*, int, int\*\)$" "$TEST_TMP/dump"
expect_grep "^value_read   src=0x[0-9a-f]+ bytes=256 not_real=256 writer=kernel:fill_kernel\(int\*, int, int\)$" "$TEST_TMP/dump"
expect_grep "kernel=\"fill_kernel\(int\*, int, int\)\" grid=65536,1,1 block=256,1,1" "$TEST_TMP/dump"

# without the large launch: two reads
d2=$TEST_TMP/small
"$MAYA" run -q -g h100x1 -o "$d2" -- "$WORKLOADS/values_read" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run values_read (small) failed: $(cat "$TEST_TMP/out")"
expect_eq "$(json "$d2/report.json" 'r["values_not_computed"]["reads"]')" "2" "reads without the large launch"

# tracking off: nothing is counted, the program runs the same
d3=$TEST_TMP/off
MAYA_REAL_BYTES=0 "$MAYA" run -q -g h100x1 -o "$d3" -- "$WORKLOADS/values_read" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run values_read with MAYA_REAL_BYTES=0 failed: $(cat "$TEST_TMP/out")"
expect_grep "^values not computed: none" "$d3/report.txt"
exit 0
