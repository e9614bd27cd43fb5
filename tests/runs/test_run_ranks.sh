#!/usr/bin/env bash
# maya run starts one process per emulated GPU with the identity torchrun
# gives its workers and the emulator's settings, keeps each rank's output in
# DIR/logs/, its trace in DIR/traces/, and how it ended in DIR/run.conf.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/run1
"$MAYA" run -q -g h100x2 -o "$d" -- "$WORKLOADS/vector_add" 4096 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run vector_add failed: $(cat "$TEST_TMP/out")"
for r in 0 1; do
    [ -f "$d/traces/rank-$r.mtrace" ] || fail "no trace for rank $r in $d/traces: $(ls "$d/traces")"
    expect_grep "vector_add n=4096 blocks=16 threads=256: ok" "$d/logs/rank-$r.out"
    dump "$d/traces/rank-$r.mtrace" > "$TEST_TMP/dump$r"
    expect_grep "^header .* rank=$r world_size=2 local_rank=$r node=0 gpus_per_node=2 .*gpu=H100-SXM" "$TEST_TMP/dump$r"
    expect_grep "^rank\.$r\.exit=0$" "$d/run.conf"
done
expect_grep "^gpu=H100-SXM$" "$d/run.conf"
expect_grep "^nprocs=2$" "$d/run.conf"
expect_grep "^command=.*vector_add 4096$" "$d/run.conf"

# The identity of each process: h100x16 is two 8-GPU nodes; -n 4 puts two
# processes on each node, each owning four GPUs.
d=$TEST_TMP/env
"$MAYA" run -q -g h100x16 -n 4 -o "$d" -- sh -c 'env | sort' > "$TEST_TMP/out" 2>&1
# sh uses no CUDA: no traces, so the pipeline fails (exit 3), but every rank ran.
expect_eq "$?" 3 "exit status of a run that left no trace"
expect_grep "holds no trace" "$TEST_TMP/out"
e=$d/logs/rank-3.out
expect_grep "^RANK=3$" "$e"
expect_grep "^WORLD_SIZE=4$" "$e"
expect_grep "^LOCAL_RANK=1$" "$e"
expect_grep "^LOCAL_WORLD_SIZE=2$" "$e"
expect_grep "^NODE_RANK=1$" "$e"
expect_grep "^MASTER_ADDR=127.0.0.1$" "$e"
expect_grep "^MASTER_PORT=[0-9]+$" "$e"
expect_grep "^MAYA_GPU=H100-SXM$" "$e"
expect_grep "^MAYA_GPUS_PER_NODE=8$" "$e"
expect_grep "^MAYA_NODE=1$" "$e"
expect_grep "^MAYA_RANK=3$" "$e"
expect_grep "^MAYA_TRACE_DIR=$d/traces$" "$e"
expect_grep "^CUDA_VISIBLE_DEVICES=4,5,6,7$" "$e"
expect_grep "^LD_LIBRARY_PATH=$(cd "$MAYA_LIBS" && pwd -P)(:|$)" "$e"
expect_grep "^CUDA_VISIBLE_DEVICES=0,1,2,3$" "$d/logs/rank-0.out"
expect_grep "^MAYA_NODE=0$" "$d/logs/rank-1.out"
expect_grep "^nodes=2$" "$d/run.conf"
expect_grep "^gpus_per_node=8$" "$d/run.conf"
expect_grep "^rank\.3\.node=1$" "$d/run.conf"
port0=$(grep ^MASTER_PORT= "$d/logs/rank-0.out")
expect_grep "^$port0\$" "$e"

# One process per GPU: every process sees the node's GPUs (no CUDA_VISIBLE_DEVICES).
d=$TEST_TMP/env8
"$MAYA" run -q -g h100x8 -o "$d" -- sh -c 'env | sort' > /dev/null 2>&1
expect_no_grep "^CUDA_VISIBLE_DEVICES=" "$d/logs/rank-5.out"
expect_grep "^LOCAL_RANK=5$" "$d/logs/rank-5.out"
# -n 1: one process, no MAYA_RANK (workers it starts name traces by their RANK).
d=$TEST_TMP/env1
"$MAYA" run -q -g h100x8 -n 1 -o "$d" -- sh -c 'env | sort' > /dev/null 2>&1
expect_no_grep "^MAYA_RANK=" "$d/logs/rank-0.out"
expect_grep "^WORLD_SIZE=1$" "$d/logs/rank-0.out"
expect_grep "^MAYA_GPUS_PER_NODE=8$" "$d/logs/rank-0.out"
exit 0
