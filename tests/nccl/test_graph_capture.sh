#!/usr/bin/env bash
# NCCL work captured into a CUDA graph (tests/workloads/nccl_graph: a kernel,
# a cuBLAS GEMM, all-reduce, all-gather, a reduce-scatter on a joined second
# stream, a send/recv ring in one group and a small all-reduce, captured
# once and launched N times between two eager all-reduces) under maya run:
# at capture every op is traced as a CALL flagged capturing; each
# launch traces them again, flagged from_graph, each collective with its
# communicator's next sequence number and each send/recv pair with the
# next of its pair, the group a new id per launch. The collator matches all
# of them across ranks, the report replays N launches' communication, and
# a launch after the communicator was destroyed fails its NCCL ops with a
# message.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"
export MAYA_NCCL_TIMEOUT=60

json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 4 ranks, 5 launches: 2 + 4 x 5 collectives, 4 x 5 send/recv pairs
out=$TEST_TMP/four
mrun 4 "$out" "$WORKLOADS/nccl_graph" --launches 5
for r in 0 1 2 3; do
    expect_grep "^nccl_graph rank $r/4: 5 launches of 8 nodes$" "$out/logs/rank-$r.out"
    [ -s "$out/logs/rank-$r.err" ] && fail "rank $r wrote to stderr: $(head -5 "$out/logs/rank-$r.err")"
done
expect_matched "$out/traces" 22 20 1
d=$out/traces.dump
# captured once per rank: a CALL stands for each; numbered at the launches only
expect_count 24 "^call .* api=nccl(AllReduce|AllGather|ReduceScatter|Send|Recv) result=0 capturing$" "$d"
expect_no_grep "^coll .* capturing " "$d"
expect_count 120 "^coll .* result=0 from_graph op=" "$d"
for r in 0 1 2 3; do
    dump "$out/traces/rank-$r.mtrace" > "$TEST_TMP/r$r"
    # cseq 0 eager, 1..20 from the 5 launches in order, 21 eager again
    got=$(grep -E "^coll .* op=(allreduce|allgather|reducescatter) " "$TEST_TMP/r$r" | grep -v capturing |
          sed 's/.*cseq=\([0-9]*\).*/\1/' | tr '\n' ' ')
    expect_eq "$got" "$(seq -s ' ' 0 21) " "rank $r's collective sequence numbers"
    expect_count 5 "^coll .* from_graph op=reducescatter " "$TEST_TMP/r$r"
    got=$(grep -E "^coll .* from_graph op=send " "$TEST_TMP/r$r" | sed 's/.*cseq=\([0-9]*\).*/\1/' | tr '\n' ' ')
    expect_eq "$got" "0 1 2 3 4 " "rank $r's send sequence numbers"
    # a launch's send and recv share a group, each launch its own
    sg=$(grep -E "^coll .* from_graph op=send " "$TEST_TMP/r$r" | sed 's/.*group=\([0-9]*\).*/\1/' | tr '\n' ' ')
    rg=$(grep -E "^coll .* from_graph op=recv " "$TEST_TMP/r$r" | sed 's/.*group=\([0-9]*\).*/\1/' | tr '\n' ' ')
    expect_eq "$rg" "$sg" "rank $r's send and recv groups"
    expect_eq "$(echo $sg | tr ' ' '\n' | sort -u | grep -vc '^0$')" 5 "rank $r's distinct groups of 5 launches"
    # the compute replays too
    expect_count 5 "^gemm .* from_graph lib=cublas m=1024 n=1024 k=1024 " "$TEST_TMP/r$r"
    expect_count 5 "^launch .* from_graph .*scale" "$TEST_TMP/r$r"
done
dump "$out/job.mtrace" > "$TEST_TMP/job"
expect_grep "^job .* comms=1 collectives=22 p2p_pairs=20$" "$TEST_TMP/job"
# the report: 5 iterations (the launches), each with its communication
expect_eq "$(json "$out/report.json" 'r["simulated"], r["iterations_found"]')" "True 5" "report"
comm5=$(json "$out/report.json" 'r["communication_time_s"]')
# every launch's ops: the whole run's timeline (by default it keeps the first three iterations)
"$MAYA" report -q --timeline full "$out" > "$TEST_TMP/full.log" 2>&1 || fail "maya report --timeline full failed: $(tail -5 "$TEST_TMP/full.log")"
timeline_nccl "$out/timeline.json" > "$TEST_TMP/tl"
for r in 0 1 2 3; do
    expect_eq "$(grep "^$r " "$TEST_TMP/tl" | tr '\n' ' ')" \
        "$r ncclAllGather 5 $r ncclAllReduce 12 $r ncclRecv 5 $r ncclReduceScatter 5 $r ncclSend 5 " \
        "rank $r's NCCL ops in the timeline (2 eager all-reduces, 5 launches)"
done

# 2 ranks, 3 launches: 2 + 4 x 3 collectives, 2 x 3 pairs; every launch
# communicates
out2=$TEST_TMP/two
mrun 2 "$out2" "$WORKLOADS/nccl_graph" --launches 3
expect_matched "$out2/traces" 14 6 1
expect_eq "$(json "$out2/report.json" 'r["simulated"], r["communication_time_s"] > 0')" \
    "True True" "2-rank report"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)" "$comm5" || fail "no communication per iteration"

# a launch after ncclCommDestroy: its NCCL ops fail, saying why; the rest replays
out3=$TEST_TMP/late
launch 2 "$out3" "$WORKLOADS/nccl_graph" --launches 1 --late-launch || { rank_failures "$out3"; fail "late launch failed"; }
expect_grep "a CUDA graph launch replays ncclAllReduce\(count=8388608, float32, sum\) on communicator 0x[0-9a-f]+, which was destroyed or finalized after the graph captured it" "$out3/rank-0.err"
dump "$out3/trace/rank-0.mtrace" > "$TEST_TMP/late0"
expect_count 6 "^coll .* result=5 from_graph op=" "$TEST_TMP/late0"
expect_count 2 "^gemm .* from_graph " "$TEST_TMP/late0"
expect_matched "$out3/trace" 6 2 1
exit 0
