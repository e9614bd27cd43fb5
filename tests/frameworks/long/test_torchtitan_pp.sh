#!/usr/bin/env bash
# (make test-frameworks-long) torchtitan 0.3.0's trainer with pipeline
# parallelism: the Llama 3 debug model split over 2 stages on 2 emulated
# H100s (torchtitan refuses its CUDA graph with PP, so it is off). The
# pipeline stages infer their shapes with send_object_list and
# recv_object_list, whose receiver sizes its buffer with a sum that the
# SASS executor computes (needs nvdisasm; skipped without it). Nothing is
# unsupported, both ranks train every step, the report finds the steps, and
# each step moves activations forward and gradients back between the two
# stages (send/recv in each rank's trace).
. "$MAYA_TOP/tests/lib.sh"
[ -x "${MAYA_NVDISASM:-}" ] || skip "no nvdisasm: recv_object_list's size is not computed (scripts/nvdisasm.sh)"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=2
d=$TEST_TMP/llama_pp
titan_run "$d" h100x$world $steps --parallelism.pipeline_parallel_degree 2 --training.disable_cuda_graphs
check_run "$d" $world $steps
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    expect_count 1 'Training completed' "$out"
    expect_count $steps 'step: +[0-9]+ ' "$out"
    sends=$(grep -c '^coll .*api=ncclSend ' "$d/dump-$r" || true)
    recvs=$(grep -c '^coll .*api=ncclRecv ' "$d/dump-$r" || true)
    [ "$sends" -ge "$steps" ] && [ "$recvs" -ge "$steps" ] ||
        fail "rank $r: $sends sends and $recvs receives for $steps steps of 2 pipeline stages"
done
echo "torchtitan llama3 debug model, PP 2: ok ($steps steps, iteration $(report_field "$d" "r['iteration_time_s']") s)"
