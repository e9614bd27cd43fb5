#!/usr/bin/env bash
# Ranks that disagree about their NCCL calls are reported, never left
# hanging: for small operations the emulator itself finds the mismatch (a
# different count, a skipped call, a rank that left or exited, a receive
# that expects more than was sent, a rank that never comes: timeout), and
# every rank's call fails with a message naming the ranks, the call and its
# sequence number. Large ones move nothing: their traces show the mismatch
# for the collator. Waiting for a slow peer is not the program's host time.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"
export MAYA_NCCL_TIMEOUT=30

# run MODE NFAILED: 4 ranks of nccl_mismatch MODE, NFAILED of which exit 1.
run() {
    out=$TEST_TMP/$1
    launch 4 "$out" "$WORKLOADS/nccl_mismatch" "$1"
    local failed=$?
    [ $failed = "$2" ] || { rank_failures "$out"; fail "mode $1: expected $2 failed ranks, got $failed"; }
}
# err RANK PATTERN: the rank's stderr has a line matching PATTERN.
err() {
    expect_grep "$2" "$out/rank-$1.err" "mode $(basename "$out"): rank $1's stderr should match /$2/"
}
AR='ncclAllReduce\(count=4, int32, sum\)'

run ok 0

run count 4
for r in 0 1 2 3; do
    err $r "rank $r of 4: .* #1 failed: collective #1 does not match across ranks: rank 0 calls $AR, rank 2 calls ncclAllReduce\(count=8, int32, sum\)"
    err $r "ncclAllReduce #1 returned invalid usage"
done

# rank 1's third call matches the others' second; their third has no partner
run skip 3
for r in 0 2 3; do
    err $r "$AR #2 failed: rank 1 \(pid [0-9]+ on .*\) left the communicator .* after 2 collectives; it never issued $AR #2"
done

run skip-last 3
err 0 "rank 1 .* left the communicator .* after 2 collectives; it never issued $AR #2"

run root-skip 3
for r in 1 2 3; do
    err $r "rank 0 left the communicator .* after 2 collectives, but rank $r issued $AR as collective #2"
done
expect_grep "done" "$out/rank-0.out"

run exit 3
for r in 0 2 3; do
    err $r "rank 1 \(pid [0-9]+ on .*\) did not take part in $AR #1: its process exited"
    err $r "returned remote process exited or there was a network error"
done

run p2p 1
err 1 "point-to-point mismatch: rank 0's message #0 to rank 1 is ncclSend\(count=4, int32\), but rank 1 expects ncclRecv\(count=8, int32\) as message #0 from rank 0"

# nobody comes: rank 0 gives up after MAYA_NCCL_TIMEOUT and tells the others
MAYA_NCCL_TIMEOUT=2 run hang 3
for r in 0 2 3; do
    err $r "$AR #2 failed: rank 1 .* did not take part in $AR #2: nothing came in 2 s \(MAYA_NCCL_TIMEOUT=2\)"
done

# ncclCommInitRank: the rendezvous (in rank 0's process) refuses what cannot
# make a communicator. Rank 0 and the rank at fault always hear why; a rank
# that comes (or is answered) after rank 0 has exited can only say it is gone.
late() {
    err $1 "$2|cannot reach the rendezvous of its unique id at .*: Connection refused\. The process that called ncclGetUniqueId must still run|waiting for all ranks to join at .* failed: .* \(the process that made the unique id is gone\)"
}
NRANKS="rank [0-3] \(pid [0-9]+ on .*\) calls ncclCommInitRank with nranks=[45], but ranks before it said nranks=[45]"
run init-nranks 4
err 0 "ncclCommInitRank \(rank 0 of 4\): $NRANKS"
err 3 "ncclCommInitRank \(rank 3 of 5\): $NRANKS"
late 1 "$NRANKS"
late 2 "$NRANKS"
run init-dup 4
DUP="rank 2 joined twice: pid [0-9]+ on .* and pid [0-9]+ on "
for r in 0 2 3; do
    err $r "$DUP"
done
late 1 "$DUP"
# rank 3 never joins: rank 0 gives up after MAYA_NCCL_TIMEOUT and names it
MAYA_NCCL_TIMEOUT=2 run init-missing 3
for r in 0 1 2; do
    err $r "ncclCommInitRank \(rank $r of 4\): only 3 of 4 ranks joined in 2 s; missing: 3 \(they did not call ncclCommInitRank with this id"
done

# large: no error in the emulator, the traces carry the different counts
run large 0
dump_all "$out/trace" > "$out/dump"
awk -f "$MAYA_TOP/tests/nccl/matched.awk" "$out/dump" > "$out/matched" && fail "matched.awk accepted different counts"
expect_grep "MISMATCH: collective 0x[0-9a-f]+ #0: rank 0 issued allreduce count=1048576 dtype=7 .*, rank 1 issued allreduce count=1048577 dtype=7" "$out/matched"

# rank 1 sleeps 1.5 s before all-reduce #1: in rank 0's trace that call
# takes no time; the sleep is rank 1's own host gap on the wall clock and
# none on the cpu clock (MAYA_HOST_CLOCK; 4 ranks on fewer CPUs would pick cpu)
slow() {
    MAYA_HOST_CLOCK=$1 run slow 0
    dump "$out/trace/rank-0.mtrace" > "$out/r0"
    dump "$out/trace/rank-1.mtrace" > "$out/r1"
    dur=$(( $(grep '^coll .*cseq=1 ' "$out/r0" | sed 's/.* t=\([0-9]*\)\.\.\([0-9]*\) .*/\2 - \1/') ))
    [ "$dur" -lt 200000000 ] || fail "$1 clock: rank 0's all-reduce #1 lasted ${dur} ns of host time: the wait for rank 1 was counted"
    gap=$(grep -E '^(coll .*cseq=0 |sync )' "$out/r1" | head -2 | tail -1 | sed 's/.* t=[0-9]*\.\.\([0-9]*\) .*/\1/')
    start=$(grep '^coll .*cseq=1 ' "$out/r1" | sed 's/.* t=\([0-9]*\)\..*/\1/')
    gap=$((start - gap))
}
slow wall
[ $gap -ge 1400000000 ] || fail "wall clock: rank 1's 1.5 s sleep shows as $gap ns of host gap"
slow cpu
[ $gap -lt 100000000 ] || fail "cpu clock: rank 1's 1.5 s sleep shows as $gap ns of host gap (CPU time)"
