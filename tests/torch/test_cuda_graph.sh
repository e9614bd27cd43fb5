#!/usr/bin/env bash
# A PyTorch training step captured whole into a CUDA graph
# (torch.cuda.CUDAGraph: forward, backward, one dist.all_reduce per
# gradient, SGD step) on 2 emulated H100s, replayed 4 times: each replay's
# all-reduces are traced as collectives with the communicator's next
# sequence numbers and match across the ranks, its GEMMs are traced again,
# and the report replays the communication of every replay.
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
    # 4 gradients: captured once, then 4 all-reduces per replay after the
    # warm-up's 3 x 4 (cseq 0..11)
    expect_count 4 "^call .*api=ncclAllReduce result=0 capturing$" "$dump"
    got=$(grep -E "^coll .* from_graph op=allreduce " "$dump" | sed 's/.*cseq=\([0-9]*\).*/\1/' | tr '\n' ' ')
    expect_eq "$got" "$(seq -s ' ' 12 27) " "rank $r's replayed all-reduce sequence numbers"
    n=$(grep -cE "^gemm .* from_graph " "$dump" || true)
    [ "$n" -ge $((steps * 3)) ] || fail "rank $r: expected the step's GEMMs at each replay, found $n from_graph"
done
expect_matched "$d/traces" 28 0 1
dump "$d/job.mtrace" > "$TEST_TMP/job"
expect_grep "^job .* comms=1 collectives=28 p2p_pairs=0$" "$TEST_TMP/job"
expect_eq "$(report_field "$d" "r['communication_time_s'] > 0")" true "communication in the report"
python3 - "$d/timeline.json" <<'PY' || fail "timeline.json lacks the replayed all-reduces (above)"
import json, sys
t = json.load(open(sys.argv[1]))
n = {}
for e in t["traceEvents"]:
    if e["ph"] == "X" and e.get("tid", 0) > 0 and e["name"] == "ncclAllReduce":
        n[e["pid"]] = n.get(e["pid"], 0) + 1
assert n == {0: 28, 1: 28}, n
PY
echo "cuda graph: ok"
