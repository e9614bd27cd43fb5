#!/usr/bin/env bash
# Every NCCL collective and send/recv on 4 ranks, each its own process, under
# maya run: small operations carry real data between the ranks (the
# program checks all-gathered rank ids, sums, broadcast values, ring values
# on the host), every operation is traced with its communicator, sequence
# number, count and type, and the traces of all ranks match.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"
export MAYA_NCCL_TIMEOUT=60

out=$TEST_TMP/job
mrun 4 "$out" "$WORKLOADS/nccl_colls"
for r in 0 1 2 3; do
    expect_grep "^nccl_colls rank $r/4: [0-9]+ checks, 0 failed" "$out/logs/rank-$r.out"
    [ -s "$out/logs/rank-$r.err" ] && fail "rank $r wrote to stderr: $(head -5 "$out/logs/rank-$r.err")"
done
# rank 0 also checks the gather it roots
expect_grep "^nccl_colls rank 0/4: 31 checks" "$out/logs/rank-0.out"

# 17 collectives (cseq 0..16), 2 ring rounds of 4 sends, one communicator
expect_matched "$out/traces" 17 8 1
d=$out/traces.dump
expect_count 4 "^comm .*rank=[0-3]/4 dev=[0-3] gpu=[0-3] parent=0x0 color=-1 key=-1" "$d"
expect_eq "$(grep '^comm ' "$d" | sed 's/.*id=\([^ ]*\).*/\1/' | sort -u | wc -l)" 1 "communicator ids across ranks"
expect_count 4 "^coll .*api=ncclAlltoAll result=0 op=alltoall .*cseq=15 .*count=1 dtype=2 .*bytes=4 group=[1-9].* data_moved" "$d"
expect_count 4 "^coll .*api=ncclReduce result=0 op=reduce .*peer=3 count=3 dtype=2 redop=0" "$d"
expect_count 4 "^coll .*api=ncclAllReduce .*redop=5 .*data_moved" "$d"     # PreMulSum: a custom op
# the large all-reduce moves no data
expect_count 4 "^coll .*op=allreduce .*cseq=16 .*count=4194304 dtype=7 redop=0 bytes=16777216 group=[1-9][0-9]*$" "$d"
expect_count 8 "^coll .*op=send .*count=5 dtype=2 .*data_moved" "$d"
# each rank sends and receives in one group: both ways
expect_count 16 "^coll .*op=(send|recv) .* data_moved both_ways$" "$d"
# its buffer came from ncclMemAlloc (device memory, counted), registered
expect_count 4 "^alloc .*api=ncclMemAlloc result=0 kind=device .*bytes=16777216" "$d"
expect_count 4 "^free .*api=ncclMemFree result=0 kind=device .*bytes=16777216" "$d"
expect_count 4 "^call .*api=ncclCommWindowRegister result=0" "$d"
expect_grep "^coll .*op=recv .*cseq=1 rank=2/4 peer=1 " "$d"

# The check itself catches a rank missing from the job.
rm "$out/traces/rank-3.mtrace"
dump_all "$out/traces" > "$TEST_TMP/partial.dump"
awk -f "$MAYA_TOP/tests/nccl/matched.awk" "$TEST_TMP/partial.dump" > "$TEST_TMP/partial.out" && fail "matched.awk accepted a job without rank 3"
expect_grep "MISMATCH: collective 0x[0-9a-f]+ #16 .*issued by 3 of 4 ranks" "$TEST_TMP/partial.out"
expect_grep "MISMATCH: send .* 3->0 #1 .*has no send|MISMATCH: recv .* 3->0 #1 .*has no send" "$TEST_TMP/partial.out"

# Non-blocking init (ncclInProgress, then ncclCommGetAsyncError until done).
out=$TEST_TMP/nonblocking
mrun 4 "$out" "$WORKLOADS/nccl_colls" --nonblocking
for r in 0 1 2 3; do
    expect_grep "^nccl_colls rank $r/4: [0-9]+ checks, 0 failed" "$out/logs/rank-$r.out"
done
expect_matched "$out/traces" 17 8 1
expect_count 4 "^call .*api=ncclCommInitRankConfig result=7" "$out/traces.dump"

# ncclCommInitRankScalable
out=$TEST_TMP/scalable
mrun 2 "$out" "$WORKLOADS/nccl_colls" --scalable
expect_grep "^nccl_colls rank 1/2: [0-9]+ checks, 0 failed" "$out/logs/rank-1.out"
expect_matched "$out/traces" 17 4 1
expect_count 2 "^call .*api=ncclCommInitRankScalable result=0" "$out/traces.dump"

# The interface ranks meet on: loopback when asked; a name that matches
# nothing is an error that says so.
out=$TEST_TMP/lo
NCCL_SOCKET_IFNAME=lo launch 2 "$out" "$WORKLOADS/nccl_colls" || { rank_failures "$out"; fail "nccl_colls over lo failed"; }
expect_grep "^nccl_colls rank 1/2: [0-9]+ checks, 0 failed" "$out/rank-1.out"
out=$TEST_TMP/noif
MAYA_NCCL_SOCKET_IFNAME==nosuch0 launch 1 "$out" "$WORKLOADS/nccl_colls"
expect_eq $? 1 "ranks failing without a usable interface"
expect_grep 'cannot start the network endpoint: no network interface is up with an address matching NCCL_SOCKET_IFNAME="=nosuch0"' "$out/rank-0.err"
