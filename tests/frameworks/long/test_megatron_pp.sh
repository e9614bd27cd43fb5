#!/usr/bin/env bash
# (make test-frameworks-long) A Megatron-core GPT with TP 2 x PP 2, 2 virtual
# stages per pipeline rank (the interleaved 1F1B schedule), the distributed
# optimizer and full recompute on 4 emulated H100s under `maya run`: nothing
# is unsupported, the report finds the steps, each pipeline rank sends and
# receives 3 activations per microbatch (interleaved: forward out of both of
# its chunks but the last, gradients back out of both but the first), and
# the tensor-parallel all-reduces count 6 per local layer and microbatch
# (forward, recomputed forward, backward) plus the embedding's or the output
# layer's. all_gather_object's size is computed with nvdisasm, declared with
# MAYA_VALUES without it (docs/compatibility.md).
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=4 layers=4 mb=4
d=$TEST_TMP/tp2pp2
[ -x "${MAYA_NVDISASM:-}" ] || export MAYA_VALUES="MaxNanFunctor<long>=i64:4096"
torch_run "$d" h100x$world megatron_gpt.py $steps \
    --tp 2 --pp 2 --vpp 2 --layers $layers --dist-opt --recompute full --microbatches $mb
check_run "$d" $world $steps
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    expect_eq "$(result "$out" tp_rank)" $((r % 2)) "rank $r: tensor-parallel rank"
    expect_eq "$(result "$out" pp_rank)" $((r / 2)) "rank $r: pipeline rank"
    act=$(($(result "$out" batch) * $(result "$out" seq) * $(result "$out" dim) * 2))
    dump=$d/dump-$r
    expect_eq "$(coll_count "$dump" ncclSend $act)" $((3 * steps * mb)) "rank $r: pipeline sends"
    expect_eq "$(coll_count "$dump" ncclRecv $act)" $((3 * steps * mb)) "rank $r: pipeline receives"
    expect_eq "$(coll_count "$dump" ncclAllReduce $act)" $((steps * mb * (6 * layers / 2 + 1))) \
        "rank $r: tensor-parallel all-reduces"
    # bf16 weights and gradients, fp32 main weights and Adam's moments (the
    # data-parallel group is 1 rank: the distributed optimizer keeps it all).
    check_peak "$d" $r $((16 * $(result "$out" params)))
done
echo "megatron-core tp2 x pp2 (virtual 2), distributed optimizer, full recompute: ok"
