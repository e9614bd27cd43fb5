#!/usr/bin/env bash
# The cluster file's host_speed (maya-hwspec(5)): the target hosts' CPU
# speed relative to this machine divides the host time the simulator
# replays. minigpt's single rank with 20 us of CPU work before each GEMM is
# host-bound (the report says so); the same trace reported again with
# host_speed = 2 in the run's copy of the cluster file takes about half as
# long per iteration (all its time is host work), and the report says by
# what it divided. A value out of range is refused, naming the key.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/run
cp "$MAYA_TOP/hwspecs/clusters/dgx-h100.conf" "$TEST_TMP/cluster.conf"
"$MAYA" run -q -g h100x1 --cluster "$TEST_TMP/cluster.conf" -o "$d" -- "$WORKLOADS/minigpt" --iters 5 --host-work 20 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run minigpt failed: $(tail -20 "$TEST_TMP/out")"
expect_grep '^ +host-bound: the host, not the GPUs, sets the iteration time' "$d/report.txt"
expect_no_grep 'host_speed' "$d/report.txt"
one=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["host_bound"] is True, r; print(r["iteration_time_s"])' "$d/report.json") ||
    fail "report.json: not host-bound"
grep -q '^cluster "' "$d/cluster.conf" || fail "the run keeps no cluster file"
sed -i 's/^}$/    host_speed = 2\n}/' "$d/cluster.conf"
"$MAYA" report -q "$d" > "$TEST_TMP/out" 2>&1 || fail "maya report failed: $(cat "$TEST_TMP/out")"
expect_grep "divided by the cluster's host_speed 2" "$d/report.txt"
two=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["iteration_time_s"])' "$d/report.json")
python3 -c 'import sys; a, b = map(float, sys.argv[1:]); assert 0.45 <= b / a <= 0.6, (a, b)' "$one" "$two" ||
    fail "host_speed = 2: the iteration went from $one to $two s, expected about half"

sed -i 's/host_speed = 2/host_speed = 0/' "$d/cluster.conf"
rc=0
"$MAYA" report -q "$d" > "$TEST_TMP/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "host_speed = 0 was accepted"
expect_grep 'host_speed is 0; expected 0.01 to 100' "$TEST_TMP/out" "$d/report.txt"
echo "host_speed: ok"
