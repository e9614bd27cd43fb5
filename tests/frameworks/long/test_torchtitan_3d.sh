#!/usr/bin/env bash
# (make test-frameworks-long) torchtitan 0.3.0's trainer on 8 emulated H100s
# with FSDP2 (data-parallel sharding 2), tensor parallelism 2 and pipeline
# parallelism 2, each TransformerBlock and the loss compiled by
# torch.compile (no CUDA graph: torchtitan refuses it with PP). Nothing is
# unsupported, every rank trains every step, the report finds the steps,
# and each rank's trace holds what each dimension does: FSDP's all-gathers
# and reduce-scatters, the pipeline's sends and receives, all-reduces, and
# the compiled (Triton) kernels. Needs nvdisasm for the stages' shape
# inference (recv_object_list); skipped without it or without torchtitan.
. "$MAYA_TOP/tests/lib.sh"
[ -x "${MAYA_NVDISASM:-}" ] || skip "no nvdisasm: recv_object_list's size is not computed (scripts/nvdisasm.sh)"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=8
d=$TEST_TMP/llama_3d
titan_run "$d" h100x$world $steps --parallelism.data_parallel_shard_degree 2 --parallelism.tensor_parallel_degree 2 \
    --parallelism.pipeline_parallel_degree 2 --compile.enable --training.disable_cuda_graphs
check_run "$d" $world $steps
expect_grep 'Compiling each TransformerBlock with torch.compile' "$d/logs/rank-0.out"
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    expect_count 1 'Training completed' "$out"
    expect_count $steps 'step: +[0-9]+ ' "$out"
    for api in ncclAllGather ncclReduceScatter ncclAllReduce ncclSend ncclRecv; do
        n=$(grep -c "^coll .*api=$api " "$d/dump-$r" || true)
        [ "$n" -ge "$steps" ] || fail "rank $r: $n $api for $steps steps (FSDP x TP x PP)"
    done
    n=$(grep -c '^launch .*kernel="triton_' "$d/dump-$r" || true)
    [ "$n" -ge 100 ] || fail "rank $r: $n launches of compiled (Triton) kernels"
done
echo "torchtitan llama3 debug model, FSDP 2 x TP 2 x PP 2, compiled: ok ($steps steps, iteration" \
    "$(report_field "$d" "r['iteration_time_s']") s)"
