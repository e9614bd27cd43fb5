#!/usr/bin/env bash
# maya profile on NCCL work captured into a CUDA graph
# (tests/workloads/nccl_graph, launched 3 times on 2 ranks), forwarding to
# maya's emulator libraries in place of a GPU: the profile numbers each
# launch's collectives and send/recv as the emulator does (the
# communicator's next sequence number at every launch, a group id per
# launch), so each rank's profile holds the emulated run's device ops with
# the same sequence numbers, and the profile's ranks collate.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/profile/profile_lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"

run=$TEST_TMP/run prof=$TEST_TMP/prof
"$MAYA" run -q -g h100x2 -o "$run" -- "$WORKLOADS/nccl_graph" --launches 3 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run nccl_graph failed: $(tail -20 "$TEST_TMP/out")"
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -n 2 -o "$prof" -- "$WORKLOADS/nccl_graph" --launches 3 \
    > "$TEST_TMP/out" 2>&1 || fail "maya profile nccl_graph failed: $(tail -20 "$TEST_TMP/out")"
for r in 0 1; do
    expect_grep "^nccl_graph rank $r/2: 3 launches of 8 nodes$" "$prof/logs/rank-$r.out"
    same_ops "$run/traces/rank-$r.mtrace" "$prof/traces/rank-$r.mtrace" "rank $r"
    # eager 0, the launches 1..12, eager 13
    got=$(grep -E "^coll .* op=(allreduce|allgather|reducescatter) " "$TEST_TMP/same.p.txt" |
          sed 's/.*cseq=\([0-9]*\).*/\1/' | tr '\n' ' ')
    expect_eq "$got" "$(seq -s ' ' 0 13) " "rank $r's collective sequence numbers in the profile"
    expect_count 18 "^coll .* result=0 from_graph op=" "$TEST_TMP/same.p.txt"
    expect_count 6 "^call .* api=nccl[A-Za-z]+ result=0 capturing$" "$TEST_TMP/same.p.txt"
    sg=$(grep -E "^coll .* from_graph op=send " "$TEST_TMP/same.p.txt" | sed 's/.*group=\([0-9]*\).*/\1/' | sort -u | wc -l)
    expect_eq "$sg" 3 "rank $r's distinct send groups over 3 launches"
done
expect_matched "$prof/traces" 14 6 1
exit 0
