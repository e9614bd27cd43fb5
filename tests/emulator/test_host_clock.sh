#!/usr/bin/env bash
# The trace's host clock (MAYA_HOST_CLOCK, docs/trace-format.md): host work
# between two calls shows as the gap between them. With the wall clock,
# everything between them counts; with the active clock, everything but the
# time the process was descheduled (ready to run, waiting for a CPU), so
# sleeping counts and a competing process does not; with the cpu clock, only
# the CPU time of the threads that call CUDA (and of host functions), so
# neither sleeping nor being descheduled counts. The choice is recorded in
# the trace header and the report; auto (the default) picks cpu when the
# ranks outnumber the CPUs, else active; a bad value is refused.
# test: alone
. "$MAYA_TOP/tests/lib.sh"

# run_gaps NAME CLOCK MODE [PREFIX...]: host_gaps MODE 50 under the emulator
# with MAYA_HOST_CLOCK=CLOCK (after PREFIX, e.g. taskset); its dump is
# $TEST_TMP/NAME.dump.
run_gaps() {
    local name=$1 clock=$2 mode=$3
    shift 3
    MAYA_HOST_CLOCK=$clock RANK=0 emu "$TEST_TMP/$name" "$@" "$WORKLOADS/host_gaps" "$mode" 50 \
        > "$TEST_TMP/$name.out" 2>&1 || fail "host_gaps $mode with the $clock clock failed: $(cat "$TEST_TMP/$name.out")"
    dump "$TEST_TMP/$name/rank-0.mtrace" > "$TEST_TMP/$name.dump"
    expect_grep "^header .* host_clock=$clock$" "$TEST_TMP/$name.dump" "$name: the header does not say the $clock clock"
}

# gap_ms DUMP A B: ms from the exit of the A-th to the entry of the B-th
# record of the types matching /^(event_record|sync)/, in trace order.
gap_ms() {
    awk -v a="$2" -v b="$3" '/^(event_record|sync) / {
        n++; match($0, /t=[0-9]+\.\.[0-9]+/); split(substr($0, RSTART + 2, RLENGTH - 2), t, /\.\./)
        if (n == a) x = t[2]; if (n == b) y = t[1] }
        END { printf "%.3f", (y - x) / 1e6 }' "$1"
}

# span_ms DUMP TYPE: ms from the entry to the exit of the first TYPE record.
span_ms() {
    awk -v ty="$2" '$1 == ty && !done { match($0, /t=[0-9]+\.\.[0-9]+/); split(substr($0, RSTART + 2, RLENGTH - 2), t, /\.\./)
        printf "%.3f", (t[2] - t[1]) / 1e6; done = 1 }' "$1"
}

# within MS LO HI WHAT
within() {
    awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }' ||
        fail "$4: $1 ms, expected $2 to $3 ms"
}

# 50 ms of CPU work between the calls: 50 ms with either clock (the wall
# clock's bound is loose: other work on the test machine stretches it).
run_gaps spin_wall wall spin
within "$(gap_ms "$TEST_TMP/spin_wall.dump" 1 2)" 49.5 2000 "spin, wall clock"
run_gaps spin_cpu cpu spin
within "$(gap_ms "$TEST_TMP/spin_cpu.dump" 1 2)" 49.5 60 "spin, cpu clock"
expect_grep "^header .* flags=0x2 " "$TEST_TMP/spin_cpu.dump" "the cpu clock's header flag (MAYA_TRACE_F_HOST_CPU)"
run_gaps spin_active active spin
within "$(gap_ms "$TEST_TMP/spin_active.dump" 1 2)" 49.5 60 "spin, active clock"
expect_grep "^header .* flags=0x4 " "$TEST_TMP/spin_active.dump" "the active clock's header flag (MAYA_TRACE_F_HOST_ACTIVE)"

# 50 ms asleep: wall time, no CPU time.
run_gaps sleep_wall wall sleep
within "$(gap_ms "$TEST_TMP/sleep_wall.dump" 1 2)" 50 2000 "sleep, wall clock"
run_gaps sleep_cpu cpu sleep
within "$(gap_ms "$TEST_TMP/sleep_cpu.dump" 1 2)" 0 5 "sleep, cpu clock"
run_gaps sleep_active active sleep
within "$(gap_ms "$TEST_TMP/sleep_active.dump" 1 2)" 50 60 "sleep, active clock (a sleep is host time)"

# The work moves to another thread (which then calls CUDA) while the main
# thread waits for it: the process clock counts it once, where it happened.
run_gaps thread_cpu cpu thread
within "$(gap_ms "$TEST_TMP/thread_cpu.dump" 1 2)" 49.5 60 "thread's work, cpu clock"
within "$(gap_ms "$TEST_TMP/thread_cpu.dump" 2 3)" 0 5 "back on the main thread, cpu clock"
expect_grep "^event_record .* tid=1 " "$TEST_TMP/thread_cpu.dump" "the second record comes from the other thread"
# Times only go forward on each thread, and every call ends after it began.
awk '/ t=[0-9]+\.\.[0-9]+ tid=/ { match($0, /t=[0-9]+\.\.[0-9]+/); split(substr($0, RSTART + 2, RLENGTH - 2), t, /\.\./)
        match($0, / tid=[0-9]+/); id = substr($0, RSTART + 5, RLENGTH - 5)
        if (t[2] + 0 < t[1] + 0 || t[1] + 0 < last[id] + 0) { print; bad = 1 } last[id] = t[2] }
     END { exit bad }' "$TEST_TMP/thread_cpu.dump" || fail "cpu clock: host times go backwards on a thread"

# The active clock counts the main thread's wait for the other thread, and
# the other thread's work once: the wall time between the records.
run_gaps thread_active active thread
within "$(gap_ms "$TEST_TMP/thread_active.dump" 1 2)" 49.5 60 "thread's work, active clock"
within "$(gap_ms "$TEST_TMP/thread_active.dump" 2 3)" 0 5 "back on the main thread, active clock"

# A thread that never calls CUDA is not counted, even busy at the same time
# (CLOCK_PROCESS_CPUTIME_ID would count it: about twice the gap).
run_gaps parallel_cpu cpu parallel
within "$(gap_ms "$TEST_TMP/parallel_cpu.dump" 1 2)" 49.5 60 "beside a busy CPU-only thread, cpu clock"

# A host function's work is the program's: cudaStreamSynchronize waits for
# it. The function starts as soon as it is launched, so part of it may run
# before the synchronize begins (the program's thread, just woken, waiting
# for a CPU while the function runs): all 50 ms lie between the launch's
# entry and the synchronize's exit, and the synchronize takes no more.
launch_to_sync_ms() {
    awk '/^(host_func|sync) / { match($0, /t=[0-9]+\.\.[0-9]+/); split(substr($0, RSTART + 2, RLENGTH - 2), t, /\.\./)
        if ($1 == "host_func" && h == "") h = t[1]; else if ($1 == "sync" && h != "" && !done) { printf "%.3f", (t[2] - h) / 1e6; done = 1 } }' "$1"
}
for clock in cpu active; do
    run_gaps hostfn_$clock $clock hostfn
    within "$(launch_to_sync_ms "$TEST_TMP/hostfn_$clock.dump")" 49.5 60 "a 50 ms host function, from its launch to the synchronize's end, $clock clock"
    within "$(span_ms "$TEST_TMP/hostfn_$clock.dump" sync)" 0 60 "synchronize waiting for a 50 ms host function, $clock clock"
done

# A competing busy process on the same CPU: the wall clock's gap grows (it
# gets about half the CPU), the active and cpu clocks' do not; a sleep
# there still counts on the active clock.
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
sleep 0.2
run_gaps busy_wall wall spin taskset -c "$cpu"
run_gaps busy_cpu cpu spin taskset -c "$cpu"
run_gaps busy_active active spin taskset -c "$cpu"
run_gaps busy_sleep_active active sleep taskset -c "$cpu"
run_gaps busy_thread_active active thread taskset -c "$cpu"
kill $hog
within "$(gap_ms "$TEST_TMP/busy_wall.dump" 1 2)" 70 5000 "spin beside a busy process, wall clock (the competition is real)"
within "$(gap_ms "$TEST_TMP/busy_cpu.dump" 1 2)" 49.5 60 "spin beside a busy process, cpu clock"
within "$(gap_ms "$TEST_TMP/busy_active.dump" 1 2)" 49.5 60 "spin beside a busy process, active clock"
within "$(gap_ms "$TEST_TMP/busy_sleep_active.dump" 1 2)" 50 60 "sleep beside a busy process, active clock"
within "$(gap_ms "$TEST_TMP/busy_thread_active.dump" 1 2)" 49.5 60 "another thread's work beside a busy process, active clock"

# auto: cpu when this machine's ranks (LOCAL_WORLD_SIZE) outnumber its CPUs, else active.
ncpu=$(nproc)
LOCAL_WORLD_SIZE=$((ncpu + 1)) MAYA_HOST_CLOCK=auto RANK=0 emu "$TEST_TMP/auto1" "$WORKLOADS/host_gaps" sleep 1 > /dev/null ||
    fail "host_gaps with MAYA_HOST_CLOCK=auto failed"
dump "$TEST_TMP/auto1/rank-0.mtrace" > "$TEST_TMP/auto1.dump"
expect_grep "^header .* host_clock=cpu$" "$TEST_TMP/auto1.dump" "auto with $((ncpu + 1)) ranks on $ncpu CPUs"
LOCAL_WORLD_SIZE=$ncpu RANK=0 emu "$TEST_TMP/auto2" env -u MAYA_HOST_CLOCK "$WORKLOADS/host_gaps" sleep 1 > /dev/null ||
    fail "host_gaps without MAYA_HOST_CLOCK failed"
dump "$TEST_TMP/auto2/rank-0.mtrace" > "$TEST_TMP/auto2.dump"
expect_grep "^header .* host_clock=active$" "$TEST_TMP/auto2.dump" "auto (unset) with $ncpu ranks on $ncpu CPUs"

# A bad value stops the emulator with a message naming the variable.
if MAYA_HOST_CLOCK=sundial RANK=0 emu "$TEST_TMP/bad" "$WORKLOADS/host_gaps" sleep 1 > "$TEST_TMP/bad.out" 2>&1; then
    fail "MAYA_HOST_CLOCK=sundial was accepted"
fi
expect_grep 'MAYA_HOST_CLOCK="sundial": expected wall, active, cpu or auto' "$TEST_TMP/bad.out"

# maya run decides for its ranks: two ranks on one CPU get the cpu clock
# (and the report says so), one rank the active clock; the user's choice stands; a bad one is refused
# before anything runs.
taskset -c "$cpu" "$MAYA" run -q -g h100x2 -o "$TEST_TMP/run1" -- "$WORKLOADS/host_gaps" sleep 1 > "$TEST_TMP/run1.out" 2>&1 ||
    fail "maya run on one CPU failed: $(cat "$TEST_TMP/run1.out")"
for r in 0 1; do
    dump "$TEST_TMP/run1/traces/rank-$r.mtrace" > "$TEST_TMP/run1.$r.dump"
    expect_grep "^header .* host_clock=cpu$" "$TEST_TMP/run1.$r.dump" "maya run, 2 ranks on 1 CPU, rank $r"
done
expect_grep '"host_clock": "cpu"' "$TEST_TMP/run1/report.json"
expect_grep '^ranks +2 in the job trace, host gaps measured on the cpu clock' "$TEST_TMP/run1/report.txt"
"$MAYA" run -q -g h100x1 -o "$TEST_TMP/run0" -- "$WORKLOADS/host_gaps" sleep 1 > "$TEST_TMP/run0.out" 2>&1 ||
    fail "maya run of one rank failed: $(cat "$TEST_TMP/run0.out")"
expect_grep '"host_clock": "active"' "$TEST_TMP/run0/report.json"
MAYA_HOST_CLOCK=wall taskset -c "$cpu" "$MAYA" run -q -g h100x2 -o "$TEST_TMP/run2" -- "$WORKLOADS/host_gaps" sleep 1 \
    > "$TEST_TMP/run2.out" 2>&1 || fail "maya run with MAYA_HOST_CLOCK=wall failed: $(cat "$TEST_TMP/run2.out")"
expect_grep '"host_clock": "wall"' "$TEST_TMP/run2/report.json"
rc=0
MAYA_HOST_CLOCK=sundial "$MAYA" run -q -o "$TEST_TMP/run3" -- "$WORKLOADS/host_gaps" sleep 1 > "$TEST_TMP/run3.out" 2>&1 || rc=$?
expect_eq "$rc" 2 "maya run with MAYA_HOST_CLOCK=sundial: exit status"
expect_grep 'MAYA_HOST_CLOCK="sundial": expected wall, active, cpu or auto' "$TEST_TMP/run3.out"
[ ! -e "$TEST_TMP/run3" ] || fail "maya run made a run directory for a bad MAYA_HOST_CLOCK"
