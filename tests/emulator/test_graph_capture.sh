#!/usr/bin/env bash
# CUDA graphs: the captured work is traced as calls flagged "capturing" and
# not as ops; each of the two launches of the captured graph shows its ops
# (the copies, the kernels, the memset, the host function) between graph
# begin and end records, flagged from_graph, with the branch that ran
# beside the main one on an internal stream; the graph built with the API
# is launched before and after cudaGraphExecUpdate, the update's new kernel
# configuration showing in the second launch.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/graph_capture" > "$TEST_TMP/out" 2>&1 ||
    fail "graph_capture failed: $(cat "$TEST_TMP/out")"
expect_grep "graph_capture: 7 captured nodes, 4 host calls: ok" "$TEST_TMP/out"
d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"

# during capture: calls, not ops (two captures: the first one invalidated)
expect_count 6 '^call .*api=__cudaLaunchKernel result=0 capturing' "$d"
expect_count 4 '^call .*api=cudaMemcpyAsync result=0 capturing' "$d"
expect_count 2 '^call .*api=cudaLaunchHostFunc result=0 capturing' "$d"
expect_grep '^alloc .*api=cudaMalloc result=900 ' "$d" "cudaMalloc refused during a global capture"
expect_grep '^call .*api=cudaStreamEndCapture result=901' "$d" "the invalidated capture"
grep -v from_graph "$d" > "$TEST_TMP/not_replayed"
expect_no_grep '^(launch|memcpy|memset|host_func) ' "$TEST_TMP/not_replayed" "an op traced outside a graph launch"

# the captured graph: launched twice, its 7 ops each time
expect_count 2 '^graph .*graph_exec=1 begin nodes=7' "$d"
expect_count 2 '^graph .*graph_exec=1 end nodes=7' "$d"
sed -n '/graph_exec=1 begin/,/graph_exec=1 end/p' "$d" > "$TEST_TMP/g1"
expect_count 4 '^memcpy .*api=cudaMemcpyAsync result=0 from_graph .*bytes=256 .*performed' "$TEST_TMP/g1"
expect_count 4 '^launch .*from_graph kernel="fill\(float\*, float, int\)" grid=4096,1,1 block=256,1,1' "$TEST_TMP/g1"
expect_count 2 '^launch .*from_graph kernel="axpy\(float, float const\*, float\*, int\)" .*args=\(f32:2, ' "$TEST_TMP/g1"
expect_count 2 '^memset .*from_graph bytes=4194304 ' "$TEST_TMP/g1"
expect_count 2 '^host_func .*api=cudaLaunchHostFunc result=0 from_graph' "$TEST_TMP/g1"
# the branch forked into the second stream runs on an internal stream
expect_grep '^stream +id=3 dev=0 priority=0 non_blocking graph$' "$d" "an internal stream of the graph"
expect_count 2 '^launch .*stream=3 .*from_graph kernel="fill' "$TEST_TMP/g1"
expect_count 2 '^stream_wait .*stream=1 api=cudaGraphLaunch result=0 from_graph' "$TEST_TMP/g1"

# the API-built graph, before and after the update (its child graph fills x
# with 7 both times; the updated kernel fills z with 9)
expect_count 2 '^graph .*graph_exec=2 begin nodes=9' "$d"
expect_count 3 '^launch .*from_graph kernel="fill\(float\*, float, int\)" grid=4096,1,1 block=256,1,1 .*args=\(ptr:0x[0-9a-f]+\[alloc#[0-9]+\+0\], f32:7, i32:1048576\)' "$d"
expect_count 1 '^launch .*api=cudaGraphAddKernelNode result=0 from_graph kernel="fill\(float\*, float, int\)" grid=2048,1,1 block=512,1,1 .*f32:9, ' "$d"
expect_count 2 '^memcpy .*api=cudaGraphAddMemcpyNode1D result=0 from_graph kind=d2d bytes=4194304' "$d"
expect_count 2 '^event_record .*api=cudaGraphAddEventRecordNode result=0 from_graph event=[0-9]+ version=[12] flags=0x0' "$d"
expect_grep '^call .*api=cudaGraphExecUpdate result=910' "$d" "the refused update"
expect_grep '^end .*unsupported_calls=0 oom=0' "$d"

# The rules that break a capture (the workload checks each error code): the
# trace has the refused calls with CUDA's codes and no op of a broken capture.
RANK=0 emu "$TEST_TMP/rules" "$WORKLOADS/capture_rules" > "$TEST_TMP/out" 2>&1 ||
    fail "capture_rules failed: $(cat "$TEST_TMP/out")"
expect_grep "capture_rules: ok" "$TEST_TMP/out"
dump "$TEST_TMP/rules/rank-0.mtrace" > "$d"
expect_grep '^call .*api=cudaStreamEndCapture result=903' "$d" "unmatched end"
expect_grep '^call .*api=cudaStreamEndCapture result=904' "$d" "unjoined fork"
expect_grep '^call .*api=cudaMemsetAsync result=906' "$d" "implicit dependency on the legacy stream"
expect_grep '^alloc .*tid=[1-9][0-9]* .*api=cudaMalloc result=900 ' "$d" "another thread's cudaMalloc during a global capture"
grep -v from_graph "$d" > "$TEST_TMP/not_replayed"
expect_no_grep '^launch ' "$TEST_TMP/not_replayed" "a captured launch ran outside a graph launch"
# graph memory: made when captured, the workspace freed inside the graph given
# back with the last graph holding it, the rest freed by the program
expect_grep '^alloc .*api=cudaMallocAsync result=0 kind=async .*bytes=4194304 ' "$d"
expect_grep '^free .*api=cudaGraphDestroy result=0 kind=async .*bytes=4194304 ' "$d"
expect_grep '^free .*api=cudaFree result=0 .*kind=async .*bytes=2097152 ' "$d"
