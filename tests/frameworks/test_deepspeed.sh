#!/usr/bin/env bash
# DeepSpeed ZeRO-3 (bf16, torch's AdamW) trains a Hugging Face GPT-2 built
# from a config on 2 emulated H100s under `maya run`, unmodified: nothing is
# unsupported, each step's bf16 gradients are reduce-scattered once (each
# rank keeps its half), the parameters are all-gathered for the forward and
# again (in part) for the backward, and the peak memory holds the rank's
# shard of the model state. DeepSpeed's overflow check reads a flag that a
# kernel computes; MAYA_VALUES declares it "no overflow"
# (docs/compatibility.md), so no step is skipped. ZeRO-3's optimizer formats
# its arguments at start-up (an f-string built whether printed or not), and
# a parameter's repr counts its nonzero values, which are never computed
# (the initialisation's random numbers are not): the count is declared 0,
# else the repr reads whatever the memory last held. The steps are NVTX
# ranges, named as the iteration marker.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=2
d=$TEST_TMP/zero3
MAYA_VALUES="BitwiseOrFunctor=u8:0;NonZeroOp=i32:0" MAYA_RUN_OPTS="--iteration-marker step*" \
    torch_run "$d" h100x$world deepspeed_zero.py 3 $steps
check_run "$d" $world $steps
expect_eq "$(report_field "$d" "r['declared_values'].get('BitwiseOrFunctor=u8:0')")" 8 \
    "the overflow flag declared, read once per step on each rank"
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    expect_eq "$(result "$out" stage)" 3 "rank $r: ZeRO stage"
    expect_eq "$(result "$out" optimizer)" DeepSpeedZeroOptimizer_Stage3 "rank $r: DeepSpeed's optimizer"
    expect_no_grep 'OVERFLOW' "$d/logs/rank-$r.err" "rank $r: no step skipped for overflow"
    p=$(result "$out" params)
    shard=$((2 * p / world))   # a rank's bf16 share of all parameters
    dump=$d/dump-$r
    expect_eq "$(coll_bytes "$dump" ncclReduceScatter)" $((steps * shard)) \
        "rank $r: gradients reduce-scattered once per step"
    ag=$(coll_bytes "$dump" ncclAllGather)
    [ "$ag" -ge $((steps * shard)) ] && [ "$ag" -le $(((2 * steps + 1) * shard)) ] ||
        fail "rank $r: all-gathered $ag bytes; expected the $shard-byte shard once to twice per step"
    # bf16 parameters, fp32 master weights and AdamW's two fp32 moments, each
    # a 1/world shard.
    check_peak "$d" $r $((14 * p / world))
done
echo "deepspeed zero-3: ok"
