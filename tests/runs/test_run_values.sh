#!/usr/bin/env bash
# Values under maya run (tests/workloads/values_read): small launches of
# real inputs are computed on the CPU from their PTX, so the program's own
# checks of a fill, a sum with a barrier and shared memory, a warp-shuffle
# maximum and an atomic count pass (its exit code says so) and nothing is
# counted; a launch past the bound stays recorded only, and the reads of its
# output (and of a sum of it) are counted by the kernel that would have had
# to run; with computing off (MAYA_EXEC_THREADS=0) the program's check fails
# and the report says which read saw a value not computed; MAYA_REAL_BYTES=0
# turns tracking (and so computing) off; MAYA_VALUES declares what such a
# read gives, and the report lists the declaration.
. "$MAYA_TOP/tests/lib.sh"

json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

d=$TEST_TMP/small
"$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run values_read failed (a computed value was wrong?): $(cat "$TEST_TMP/out" "$d"/logs/*)"
expect_grep "^values_read: sum of the filled array: 320 " "$d/logs/rank-0.out"
expect_grep "^values_read: warp maximum 15.5, count 32 " "$d/logs/rank-0.out"
expect_grep "^values_read: ok" "$d/logs/rank-0.out"
expect_grep "^values not computed: none" "$d/report.txt"
expect_eq "$(json "$d/report.json" 'r["values_not_computed"]')" "{'reads': 0, 'by_writer': {}}" "nothing counted"

# launches past the bound: recorded only; two reads counted (the buffer a
# large copy only reads, through a pointer not declared const, stays real)
d=$TEST_TMP/large
"$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" --large > "$TEST_TMP/out" 2>&1 ||
    fail "maya run values_read --large failed: $(cat "$TEST_TMP/out" "$d"/logs/*)"
expect_grep "^values not computed: 2 small reads by the host saw device bytes that were never computed" "$d/report.txt"
expect_eq "$(json "$d/report.json" 'sorted(r["values_not_computed"]["by_writer"].items())')" \
    "[('fill_kernel(int*, int, int)', 1), ('sum_kernel(int const*, int, int*)', 1)]" "report.json values_not_computed"
dump "$d/job.mtrace" > "$TEST_TMP/dump"
expect_eq "$(grep -c '^value_read ' "$TEST_TMP/dump")" "2" "value_read records"
expect_grep "^value_read   src=0x[0-9a-f]+ bytes=4 not_real=4 writer=kernel:fill_kernel\(int\*, int, int\)$" "$TEST_TMP/dump"
expect_grep "^value_read   src=0x[0-9a-f]+ bytes=4 not_real=4 writer=kernel:sum_kernel\(int const\*, int, int\*\)$" "$TEST_TMP/dump"
expect_grep "kernel=\"fill_kernel\(int\*, int, int\)\" grid=65536,1,1 block=256,1,1" "$TEST_TMP/dump"

# declared values (MAYA_VALUES): the read of the large fill is given 9, as a
# GPU gives; the report lists the declaration and counts only the other read
d=$TEST_TMP/declared
MAYA_VALUES='fill_kernel=i32:9' "$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" --large \
    > "$TEST_TMP/out" 2>&1 || fail "maya run with MAYA_VALUES failed: $(cat "$TEST_TMP/out" "$d"/logs/*)"
expect_grep "^values_read: first of the large fill: 9 " "$d/logs/rank-0.out"
expect_grep "^values not computed: 1 small read by the host" "$d/report.txt"
expect_grep "^declared   values \(MAYA_VALUES\): fill_kernel=i32:9 \(1 read\); the host was given these" "$d/report.txt"
expect_eq "$(json "$d/report.json" 'r["declared_values"], r["values_not_computed"]["reads"]')" \
    "{'fill_kernel=i32:9': 1} 1" "report.json declared_values"
dump "$d/job.mtrace" > "$TEST_TMP/declared.dump" # whole: grep -q on a pipe would cut the dump short
grep -q 'writer=kernel:fill_kernel(int\*, int, int) declared="fill_kernel=i32:9"' "$TEST_TMP/declared.dump" ||
    fail "the trace does not say the read was declared"
# distributions: a router's 8 counts per expert, written by a launch too
# large to compute, declared balanced over a total (even) or as a list
literal() { printf '%s' "$1" | sed 's/[][()^$.*+?{}|\\]/\\&/g'; }
for decl in "fill_kernel=i32:even(20)/3 3 3 3 2 2 2 2 (sum 20)" "fill_kernel=i32:5,1,2/5 1 2 5 1 2 5 1 (sum 22)"; do
    v=${decl%%/*} want=${decl#*/}
    d=$TEST_TMP/counts
    rm -rf "$d"
    MAYA_VALUES=$v "$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" --counts > "$TEST_TMP/out" 2>&1 ||
        fail "maya run with MAYA_VALUES=$v failed: $(cat "$TEST_TMP/out" "$d"/logs/*)"
    expect_grep "^values_read: expert counts: $(literal "$want")\$" "$d/logs/rank-0.out" "the counts $v gives"
    expect_grep "^declared   values \(MAYA_VALUES\): $(literal "$v") \(1 read\)" "$d/report.txt"
done
# a bad declaration stops the emulator with a message naming what is expected
MAYA_VALUES='fill_kernel=i33:9' "$MAYA" run -q -g h100x1 -o "$TEST_TMP/bad" -- "$WORKLOADS/values_read" \
    > "$TEST_TMP/out" 2>&1 && fail "a bad MAYA_VALUES was accepted"
cat "$TEST_TMP/out" "$TEST_TMP"/bad/logs/* > "$TEST_TMP/all" 2>/dev/null
expect_grep "MAYA_VALUES: \"fill_kernel=i33:9\": expected TYPE:VALUE with TYPE one of i8 i16 i32 i64 u8 u16 u32 u64 f32 f64" "$TEST_TMP/all"
MAYA_VALUES='fill_kernel=i32:even(-4)' "$MAYA" run -q -g h100x1 -o "$TEST_TMP/bad2" -- "$WORKLOADS/values_read" \
    > "$TEST_TMP/out" 2>&1 && fail "a negative even() sum was accepted"
cat "$TEST_TMP/out" "$TEST_TMP"/bad2/logs/* > "$TEST_TMP/all" 2>/dev/null
expect_grep "MAYA_VALUES: \"fill_kernel=i32:even\(-4\)\": expected TYPE:VALUE .* or even\(SUM\) of a sum not below 0" "$TEST_TMP/all"

# computing off: the program's first check fails, and the report says why
d=$TEST_TMP/nocompute
MAYA_EXEC_THREADS=0 "$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" > "$TEST_TMP/out" 2>&1
expect_eq "$?" "1" "exit status of a run whose program failed its check"
expect_grep "expected v == 5 \* n" "$d/logs/rank-0.err"
expect_grep "^values not computed: 1 small read by the host" "$d/report.txt"
expect_grep "what would have had to run: sum_kernel\(int const\*, int, int\*\) x 1$" "$d/report.txt"

# tracking off: nothing is computed or counted
d=$TEST_TMP/off
MAYA_REAL_BYTES=0 "$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/values_read" > "$TEST_TMP/out" 2>&1
expect_eq "$?" "1" "exit status with MAYA_REAL_BYTES=0"
expect_grep "^values not computed: none" "$d/report.txt"
exit 0
