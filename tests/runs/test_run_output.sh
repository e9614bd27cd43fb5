#!/usr/bin/env bash
# maya run --tee: the ranks' stdout and stderr on maya's own, line by line
# with a [rank N] prefix (rank 0 by default, all, none, a list), while
# DIR/logs keeps every rank's whole output; lines arrive while the program
# runs (Python's too: it is told not to buffer); bad values are refused.
. "$MAYA_TOP/tests/lib.sh"

prog='echo "out $RANK"; echo "err $RANK" >&2; printf "last $RANK"'
run() { # NAME OPTIONS... : maya run sh -c "$prog", stdout and stderr apart
    local name=$1
    shift
    "$MAYA" run "$@" -o "$TEST_TMP/$name" -- sh -c "$prog" > "$TEST_TMP/$name.out" 2> "$TEST_TMP/$name.err"
}

run default -g h100x2
expect_grep '^\[rank 0\] out 0$' "$TEST_TMP/default.out"
expect_grep '^\[rank 0\] last 0$' "$TEST_TMP/default.out" # a last line without its newline
expect_grep '^\[rank 0\] err 0$' "$TEST_TMP/default.err"
expect_no_grep 'rank 1\]' "$TEST_TMP/default.out"
expect_no_grep '^\[rank 0\] (out|last)' "$TEST_TMP/default.err"
# once, before the first line: why the program's numbers are not real
expect_eq "$(head -2 "$TEST_TMP/default.err" | grep -c '^maya run: the emulated GPUs compute only copies and small kernels')" 1 \
    "the note on values before the program's first lines"
# the logs keep every rank's output, unprefixed
expect_eq "$(cat "$TEST_TMP/default/logs/rank-1.out")" "out 1
last 1" "rank 1's stdout log"
expect_eq "$(cat "$TEST_TMP/default/logs/rank-1.err")" "err 1" "rank 1's stderr log"

run all -g h100x2 --tee all
for r in 0 1; do
    expect_grep "^\[rank $r\] out $r$" "$TEST_TMP/all.out"
    expect_grep "^\[rank $r\] err $r$" "$TEST_TMP/all.err"
done
expect_count 1 'compute only copies and small kernels' "$TEST_TMP/all.err"
run one -g h100x4 --tee 2,3
expect_count 2 '^\[rank [23]\] out [23]$' "$TEST_TMP/one.out"
expect_no_grep '^\[rank [01]\]' "$TEST_TMP/one.out"
run none -g h100x2 --tee none
expect_no_grep 'out|last' "$TEST_TMP/none.out"
run quiet -q -g h100x2
[ -s "$TEST_TMP/quiet.out" ] && fail "maya run -q printed the program's output: $(cat "$TEST_TMP/quiet.out")"
expect_no_grep 'compute only copies and small kernels' "$TEST_TMP/quiet.err"
run quiet1 -q -g h100x2 --tee 1
expect_grep '^\[rank 1\] out 1$' "$TEST_TMP/quiet1.out"
# one process: no prefix
run single -g h100x2 -n 1
expect_grep '^out 0$' "$TEST_TMP/single.out"

# the lines come while the program runs, Python's included
"$MAYA" run -g h100x2 -o "$TEST_TMP/live" -- python3 -c \
    'import os, time; print("step 1 of", os.environ["RANK"]); time.sleep(6); print("done")' \
    > "$TEST_TMP/live.out" 2> "$TEST_TMP/live.err" &
pid=$!
for _ in $(seq 50); do
    grep -q '^\[rank 0\] step 1 of 0$' "$TEST_TMP/live.out" && break
    sleep 0.1
done
grep -q '^\[rank 0\] step 1 of 0$' "$TEST_TMP/live.out" || fail "no line on the terminal 5 s into a 6 s program"
kill -0 "$pid" 2>/dev/null || fail "the program ended before its first line was checked (too slow a machine?)"
grep -q done "$TEST_TMP/live.out" && fail "the program's last line came before it was written"
wait "$pid"
expect_grep '^\[rank 0\] done$' "$TEST_TMP/live.out"

# bad values
"$MAYA" run -g h100x2 --tee 5 -o "$TEST_TMP/bad" -- true > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status with --tee beyond the ranks"
expect_grep "--tee 5: the job has ranks 0..1" "$TEST_TMP/out"
"$MAYA" run -g h100x2 --tee some -o "$TEST_TMP/bad2" -- true > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status with a bad --tee"
expect_grep '--tee "some": expected all, none, or ranks as N\[,N...\]' "$TEST_TMP/out"
exit 0
