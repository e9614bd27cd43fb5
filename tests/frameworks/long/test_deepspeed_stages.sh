#!/usr/bin/env bash
# (make test-frameworks-long) DeepSpeed ZeRO-1 and ZeRO-2 with DeepSpeed's
# FusedAdam (JIT-built with nvcc and ninja on first use, then cached in
# build/torch_extensions), and ZeRO-3 with the optimizer offloaded to the
# CPU and the activations checkpointed to the CPU, each training a Hugging
# Face GPT-2 on 2 emulated H100s under `maya run`: nothing is unsupported,
# the report finds the steps, and the communication is each stage's: ZeRO-1/2
# all-reduce the bf16 gradients and all-gather each rank's updated half of
# the parameters every step; ZeRO-3 reduce-scatters the gradients.
# FusedAdam runs as one kernel per step. With the activations offloaded,
# each block's input goes to the host in the forward pass and comes back in
# the backward, once per block and step (a sequence of 40 makes that input
# 40,960 bytes, a size no parameter's piece has).
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=2
export MAYA_VALUES="BitwiseOrFunctor=u8:0;NonZeroOp=i32:0" MAYA_RUN_OPTS="--iteration-marker step*"
layers=2 seq=40
for c in "1 --fused-adam" "2 --fused-adam" "3 --offload --activation-offload"; do
    set -- $c
    stage=$1
    d=$TEST_TMP/zero$stage
    torch_run "$d" h100x$world deepspeed_zero.py "$@" $steps --layers $layers --seq $seq
    check_run "$d" $world $steps
    for ((r = 0; r < world; r++)); do
        out=$d/logs/rank-$r.out
        dump=$d/dump-$r
        expect_eq "$(result "$out" stage)" $stage "ZeRO-$stage rank $r: stage"
        expect_no_grep 'OVERFLOW' "$d/logs/rank-$r.err" "ZeRO-$stage rank $r: no step skipped for overflow"
        p=$(result "$out" params)
        shard=$((2 * p / world))
        if [ $stage = 3 ]; then
            expect_eq "$(coll_bytes "$dump" ncclReduceScatter)" $((steps * shard)) \
                "ZeRO-3 rank $r: gradients reduce-scattered once per step"
            hidden=$((4 * seq * 128 * 2)) # batch x sequence x width, bf16
            expect_count $((steps * layers)) "^memcpy .*kind=d2h bytes=$hidden " "$dump"
            expect_count $((steps * layers)) "^memcpy .*kind=h2d bytes=$hidden " "$dump"
        else
            expect_eq "$(coll_bytes "$dump" ncclAllReduce 1024)" $((steps * 2 * p)) \
                "ZeRO-$stage rank $r: bf16 gradients all-reduced once per step"
            expect_eq "$(coll_bytes "$dump" ncclAllGather 1024)" $((steps * shard)) \
                "ZeRO-$stage rank $r: updated parameters all-gathered once per step"
            expect_count $steps '^launch .*kernel="void multi_tensor_apply_kernel<.*AdamFunctor' "$dump"
        fi
    done
done
echo "deepspeed zero-1/2 (FusedAdam), zero-3 optimizer and activation offload: ok"
