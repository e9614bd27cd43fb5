#!/usr/bin/env bash
# CUDA graphs and memory pools through the driver API (drv_graphs checks
# the values and error codes; this checks the trace): work issued to a
# capturing stream is traced as calls flagged capturing, not as ops; the
# captured graph launched 5 times shows its 3 ops 5 times, each between
# graph begin and end records and flagged from_graph, in the form the
# runtime's graphs take; a graph built with cuGraphAdd*Node runs its nodes
# in dependency order, not in the order they were added; pool allocations
# are traced as async allocations, and the reserve a pool gives back at
# synchronisation or cuMemPoolTrimTo as frees; misuse carries CUresult codes.
# Changes to an executable graph (kernel, memset and copy parameters, nodes
# disabled, cuGraphExecUpdate) show in the launches that follow; event
# nodes order two graphs on two streams; memory nodes allocate when made and
# give back at cuGraphDestroy; cuGraphAddNode makes nodes of every kind.
. "$MAYA_TOP/tests/lib.sh"

out=$TEST_TMP/out
# The graphs' kernels are not computed here (MAYA_EXEC_THREADS=0): the values
# drv_graphs checks are those its memsets and copies move, in graph order.
MAYA_EXEC_THREADS=0 RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/drv_graphs" "$WORKLOADS/drv_kernels.fatbin" "$TEST_TMP/g.dot" > "$out" 2>&1 ||
    fail "drv_graphs failed: $(cat "$out")"
expect_grep "^drv_graphs: ok" "$out"
expect_grep "^captured nodes=3 launches=5 value=2$" "$out" "the memset's bytes came back at launch"
expect_grep "^built order=12 value=7 roots=1 edges=5$" "$out" "host nodes in dependency order"
expect_grep "^pool used=1048576 reserved=2097152 freed_used=0 freed_reserved=2097152 synced_reserved=0$" "$out"
expect_grep "^pool kept=4194304 trimmed=0 used_high=3145728$" "$out"
expect_grep "^updated value=9 other=5 clone_grid=8$" "$out" "the executable graph updated and changed"
expect_grep "^events order=123 alloc=1048576 roots=2$" "$out" "cuGraphAddNode's host node ran; a capture's dependencies replaced"

d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
# during capture: calls, not ops
expect_count 3 '^call .*api=cuMemsetD32Async result=0 capturing' "$d"
expect_count 2 '^call .*api=cuLaunchKernel result=0 capturing' "$d"
expect_count 1 '^call .*api=cuMemcpyDtoHAsync result=0 capturing' "$d"
grep -v from_graph "$d" > "$TEST_TMP/not_replayed"
expect_no_grep '^(launch|memcpy|memset|host_func) ' "$TEST_TMP/not_replayed" "an op traced outside a graph launch"

# the captured graph: 5 launches, its 3 ops each time, in capture order
expect_count 5 '^graph .*api=cuGraphLaunch result=0 graph_exec=1 begin nodes=3$' "$d"
expect_count 5 '^graph .*api=cuGraphLaunch result=0 graph_exec=1 end nodes=3$' "$d"
sed -n '/graph_exec=1 begin/,/graph_exec=1 end/p' "$d" | grep -E '^(memset|launch|memcpy) ' |
    awk '{ print $1 }' | tr '\n' ' ' > "$TEST_TMP/g1"
expect_eq "$(cat "$TEST_TMP/g1")" "$(for i in 1 2 3 4 5; do printf 'memset launch memcpy '; done)" \
    "ops of the 5 launches of the captured graph"
expect_count 5 '^memset .*stream=1 api=cuMemsetD32Async result=0 from_graph bytes=1024 .*value=1073741824 elem=4 async performed' "$d"
expect_count 5 '^launch .*stream=1 api=cuLaunchKernel result=0 from_graph kernel="scale" grid=1,1,1 block=256,1,1 .*driver args=\(u64:[0-9]+, f32:3, u32:256\)' "$d"
expect_count 5 '^memcpy .*stream=1 api=cuMemcpyDtoHAsync result=0 from_graph kind=d2h bytes=1024 .*performed' "$d"

# the API-built graph: added host, copy, kernel, memset, host, empty; run in
# the order of its edges
expect_count 1 '^graph .*graph_exec=2 begin nodes=6$' "$d"
sed -n '/graph_exec=2 begin/,/graph_exec=2 end/p' "$d" | grep -vE '^(graph|string) ' |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^api=/) print $1, $i }' | tr '\n' ',' > "$TEST_TMP/g2"
expect_eq "$(cat "$TEST_TMP/g2")" \
    "memset api=cuGraphAddMemsetNode,launch api=cuGraphAddKernelNode,host_func api=cuGraphAddHostNode,memcpy api=cuGraphAddMemcpyNode,host_func api=cuGraphAddHostNode," \
    "ops of the built graph in dependency order"
expect_grep '^launch .*api=cuGraphAddKernelNode result=0 from_graph kernel="scale" grid=2,1,1 block=128,1,1 .*args=\(u64:[0-9]+, f32:0.5, u32:256\)' "$d"
# its DOT picture: 6 nodes, 5 edges
expect_eq "$(grep -c 'label=' "$TEST_TMP/g.dot")" 6 "nodes in the DOT file"
expect_eq "$(grep -c -- '->' "$TEST_TMP/g.dot")" 5 "edges in the DOT file"
expect_grep 'label="kernel\\nscale\\ngrid 2,1,1 block 128,1,1"' "$TEST_TMP/g.dot"

# graph_exec=3, launched 5 times: as built; its kernel changed (grid 4,
# a=1.5); its memset disabled; enabled again and updated from the graph
# (grid 8, memset 9.0); its memset changed (5.0) in the executable graph
sed -n '/graph_exec=3 begin/,/graph_exec=3 end/p' "$d" | grep -E '^(memset|launch|memcpy) ' |
    awk '{ print $1 }' | tr '\n' ' ' > "$TEST_TMP/g3"
expect_eq "$(cat "$TEST_TMP/g3")" \
    "memset launch memcpy memset launch memcpy launch memcpy memset launch memcpy memset launch memcpy " \
    "ops of the changed executable graph's 5 launches (the 3rd without its disabled memset)"
sed -n '/graph_exec=3 begin/,/graph_exec=3 end/p' "$d" | grep '^launch ' |
    sed -E 's/.* (grid=[0-9,]+) .*args=\(u64:[0-9]+, (f32:[0-9.]+), .*/\1 \2/' | tr '\n' ',' > "$TEST_TMP/g3k"
expect_eq "$(cat "$TEST_TMP/g3k")" \
    "grid=2,1,1 f32:0.5,grid=4,1,1 f32:1.5,grid=4,1,1 f32:1.5,grid=8,1,1 f32:1.5,grid=8,1,1 f32:1.5," \
    "kernel grid and arguments of each launch"
sed -n '/graph_exec=3 begin/,/graph_exec=3 end/p' "$d" | grep '^memset ' |
    sed -E 's/.* (value=[0-9]+) .*/\1/' | tr '\n' ',' > "$TEST_TMP/g3m"
# 4.0, 4.0, (disabled), 9.0, 5.0 as float bits
expect_eq "$(cat "$TEST_TMP/g3m")" "value=1082130432,value=1082130432,value=1091567616,value=1084227584," \
    "memset values of each launch"
expect_grep '^call .*api=cuGraphExecKernelNodeSetParams result=0' "$d"
expect_grep '^call .*api=cuGraphExecUpdate result=0' "$d"
expect_grep '^call .*api=cuGraphExecUpdate result=910' "$d" "an update from a graph of another shape"

# event nodes: graph_exec=4 records the event on stream 1 after its kernel,
# graph_exec=5 waits for that record on stream 2 before its memset
rec=$(sed -n '/graph_exec=4 begin/,/graph_exec=4 end/p' "$d" | grep -E '^(launch|event_record) ' | awk '{ print $1 }' | tr '\n' ' ')
expect_eq "$rec" "launch event_record " "the record node after the kernel"
ev=$(grep -E '^event_record .*stream=1 api=cuGraphAddEventRecordNode result=0 from_graph' "$d" |
    sed -E 's/.* (event=[0-9]+ version=[0-9]+) .*/\1/')
[ -n "$ev" ] || fail "no event record node in the trace"
wt=$(sed -n '/graph_exec=5 begin/,/graph_exec=5 end/p' "$d" | grep -E '^(stream_wait|memset) ' | awk '{ print $1 }' | tr '\n' ' ')
expect_eq "$wt" "stream_wait memset " "the wait node before the memset"
expect_grep "^stream_wait .*stream=2 api=cuGraphAddEventWaitNode result=0 from_graph $ev " "$d" \
    "stream 2 waits for the record the producer graph made"

# memory nodes: allocated when made, freed with the graph; a launch runs
# only the memset between them, on the graph's memory
ptr=$(grep -E '^alloc .*api=cuGraphAddMemAllocNode result=0 kind=async ' "$d" | sed -E 's/.* ptr=(0x[0-9a-f]+) bytes=1048576 .*/\1/')
[ -n "$ptr" ] || fail "no allocation by cuGraphAddMemAllocNode of 1 MiB"
expect_grep "^free .*api=cuGraphDestroy result=0 kind=async ptr=$ptr bytes=1048576 " "$d" "graph memory given back"
mem=$(sed -n '/graph_exec=6 begin/,/graph_exec=6 end/p' "$d" | grep -vE '^(graph|string) ' | awk '{ print $1 }' | tr '\n' ' ')
expect_eq "$mem" "memset " "memory nodes have no op"
expect_grep "^memset .*api=cuGraphAddMemsetNode result=0 from_graph bytes=1024 dst=$ptr" "$d"

# cuGraphAddNode: host node, then kernel node
gen=$(sed -n '/graph_exec=7 begin/,/graph_exec=7 end/p' "$d" | grep -vE '^(graph|string) ' |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^api=/) print $1, $i }' | tr '\n' ',')
expect_eq "$gen" "host_func api=cuGraphAddNode,launch api=cuGraphAddNode," "nodes made by cuGraphAddNode"
expect_grep '^launch .*api=cuGraphAddNode result=0 from_graph kernel="scale" grid=3,1,1 block=32,1,1 ' "$d"
expect_grep '^call .*api=cuStreamUpdateCaptureDependencies result=0' "$d"

# capture rules and misuse, with the driver's codes
expect_grep '^call .*api=cuStreamSynchronize result=900' "$d" "a capturing stream synchronised"
expect_grep '^call .*api=cuStreamEndCapture result=901' "$d" "the invalidated capture"
expect_grep '^call .*api=cuStreamEndCapture result=401' "$d" "ending a capture never begun"
expect_grep '^call .*api=cuGraphAddDependencies result=1' "$d"
expect_grep '^call .*api=cuGraphLaunch result=400' "$d" "a launch on a bad stream"
expect_grep '^call .*api=cuStreamBeginCapture result=400' "$d"
expect_grep '^call .*api=cuMemAllocAsync result=400' "$d"
expect_grep '^call .*api=cuDeviceGetDefaultMemPool result=101' "$d"
expect_grep '^call .*api=cuGraphAddEventRecordNode result=400' "$d" "not an event"
expect_grep '^call .*api=cuGraphNodeSetParams result=801' "$d" "a memory node's parameters changed"
expect_grep '^call .*api=cuGraphAddNode result=801' "$d" "an external-semaphore node"
expect_grep '^call .*api=cuStreamUpdateCaptureDependencies result=401' "$d" "not capturing"
expect_grep '^call .*api=cuGraphInstantiateWithParams result=1' "$d" "a graph with a cycle"

# pools: allocations of kind async, the reserve given back as frees
expect_grep '^alloc .*stream=1 api=cuMemAllocFromPoolAsync result=0 kind=async .*bytes=1048576 ' "$d"
expect_grep '^alloc .*stream=1 api=cuMemAllocAsync result=0 kind=async .*bytes=3145728 ' "$d"
expect_count 2 '^free .*stream=1 api=cuMemFreeAsync result=0 kind=async' "$d"
expect_grep '^free .*api=cuStreamSynchronize result=0 kind=async ptr=0x0 bytes=2097152 ' "$d" \
    "the idle reserve given back at synchronisation"
expect_grep '^free .*api=cuMemPoolTrimTo result=0 kind=async ptr=0x0 bytes=4194304 ' "$d" \
    "the reserve kept by the threshold given back by cuMemPoolTrimTo"
# the external-semaphore node asked of cuGraphAddNode: the one call counted
# as unsupported, noted once on stderr
expect_grep '^end .*unsupported_calls=1 oom=0 ' "$d"
expect_count 1 "an external-semaphore, batched memory-operation or conditional node is not supported" "$out"
