#!/usr/bin/env bash
# A PyTorch training step captured whole into a CUDA graph
# (torch.cuda.CUDAGraph: an all-gather, forward, backward, one
# dist.all_reduce per gradient, a reduce-scatter, SGD step) on 2 emulated
# H100s, replayed 4 times: each replay's collectives are traced with the
# communicator's next sequence numbers and match across the ranks, its
# GEMMs are traced again, and the report replays the communication of
# every replay.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"

steps=4
d=$TEST_TMP/graph
torch_run "$d" h100x2 train_graph_allreduce.py $steps
check_rank_traces "$d" 2
check_report "$d"
for r in 0 1; do
    expect_eq "$(result "$d/logs/rank-$r.out" steps)" $steps "replays on rank $r"
    dump=$d/dump-$r
    # per step an all-gather, 4 gradients' all-reduces and a reduce-scatter:
    # captured once, then 6 collectives per replay after the warm-up's 3 x 6
    # (cseq 0..17)
    expect_count 4 "^call .*api=ncclAllReduce result=0 capturing$" "$dump"
    expect_count 1 "^call .*api=ncclAllGather result=0 capturing$" "$dump"
    expect_count 1 "^call .*api=ncclReduceScatter result=0 capturing$" "$dump"
    got=$(grep -E "^coll .* from_graph op=" "$dump" | sed 's/.*cseq=\([0-9]*\).*/\1/' | tr '\n' ' ')
    expect_eq "$got" "$(seq -s ' ' 18 41) " "rank $r's replayed collectives' sequence numbers"
    expect_count $steps "^coll .* from_graph op=allgather .* bytes=1048576 " "$dump"
    expect_count $steps "^coll .* from_graph op=reducescatter .* bytes=1048576 " "$dump"
    n=$(grep -cE "^gemm .* from_graph " "$dump" || true)
    [ "$n" -ge $((steps * 3)) ] || fail "rank $r: expected the step's GEMMs at each replay, found $n from_graph"
done
expect_matched "$d/traces" 42 0 1
dump "$d/job.mtrace" > "$TEST_TMP/job"
expect_grep "^job .* comms=1 collectives=42 p2p_pairs=0$" "$TEST_TMP/job"
expect_eq "$(report_field "$d" "r['communication_time_s'] > 0")" true "communication in the report"
# every step's ops: the whole run's timeline (by default it keeps the first three iterations)
"$MAYA" report -q --timeline full "$d" > "$TEST_TMP/full.log" 2>&1 || fail "maya report --timeline full failed: $(tail -5 "$TEST_TMP/full.log")"
timeline_nccl "$d/timeline.json" > "$TEST_TMP/tl"
for r in 0 1; do
    expect_eq "$(grep "^$r " "$TEST_TMP/tl" | tr '\n' ' ')" \
        "$r ncclAllGather 7 $r ncclAllReduce 28 $r ncclReduceScatter 7 " \
        "rank $r's NCCL ops in the timeline (3 warm-up steps, 4 replays)"
done
echo "cuda graph: ok"
