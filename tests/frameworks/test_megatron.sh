#!/usr/bin/env bash
# A Megatron-core GPT (local layer spec, bf16 in a Float16Module) trains with
# tensor parallelism 2 on 2 emulated H100s under `maya run` through
# Megatron-core's own DistributedDataParallel, get_megatron_optimizer and
# pipeline schedule: nothing is unsupported, the report finds the steps,
# and each microbatch's tensor-parallel all-reduces of the activations show
# (forward: each layer's attention and MLP outputs and the vocab-parallel
# embedding; backward: the inputs' gradients of each layer's column-parallel
# QKV and FC1 and of the output layer); then again with sequence
# parallelism (below). get_megatron_optimizer calls
# torch.distributed.all_gather_object, which sizes its buffer by a max()
# that a kernel computes: with nvdisasm the small-kernel executor computes
# it from its SASS (nothing declared, and the report names no max kernel
# among the values not computed); without, MAYA_VALUES declares it 4096
# bytes (more than the pickled keys need; docs/compatibility.md).
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4 world=2
d=$TEST_TMP/tp2
if [ -x "${MAYA_NVDISASM:-}" ]; then
    torch_run "$d" h100x$world megatron_gpt.py $steps --tp 2
    python3 - "$d/report.json" <<'PY' || fail "all_gather_object's max was not computed (above)"
import json, sys
w = json.load(open(sys.argv[1]))["values_not_computed"]["by_writer"]
assert not any("MaxNanFunctor" in k for k in w), w
PY
else
    echo "note: no nvdisasm: all_gather_object's size is declared"
    MAYA_VALUES="MaxNanFunctor<long>=i64:4096" torch_run "$d" h100x$world megatron_gpt.py $steps --tp 2
fi
check_run "$d" $world $steps
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    expect_eq "$(result "$out" tp_rank)" $r "rank $r: tensor-parallel rank"
    expect_eq "$(result "$out" optimizer)" ChainedOptimizer "rank $r: get_megatron_optimizer's optimizer"
    layers=$(result "$out" layers) mb=$(result "$out" microbatches)
    act=$(($(result "$out" batch) * $(result "$out" seq) * $(result "$out" dim) * 2))   # bf16 [b, s, h]
    expect_eq "$(coll_count "$d/dump-$r" ncclAllReduce $act)" $((steps * mb * (4 * layers + 2))) \
        "rank $r: tensor-parallel all-reduces of $act-byte activations"
    # bf16 weights and gradients, fp32 main weights and Adam's two moments.
    p=$(result "$out" params)
    check_peak "$d" $r $((16 * p))
done

# Sequence parallelism (--sp: the workload's own norm, marked sequence-
# parallel as Megatron-core's fused norms mark theirs) with selective
# recompute (core attention recomputed in the backward, which adds no
# collective), as Megatron-LM runs them together: the layers' all-reduces
# of activations become all-gathers and reduce-scatters of each rank's half of
# the sequence, per microbatch: forward 2 of each a layer, backward 4
# all-gathers and 2 reduce-scatters (the column-parallel layers gather their
# input again for the weights' gradient); the embedding's backward gathers
# once, the output layer gathers twice and reduce-scatters once; the
# vocab-parallel embedding still all-reduces its output; and the norms'
# weight gradients are all-reduced over the tensor-parallel group each step.
d=$TEST_TMP/tp2sp
if [ -x "${MAYA_NVDISASM:-}" ]; then
    torch_run "$d" h100x$world megatron_gpt.py $steps --tp 2 --sp --recompute selective
else
    MAYA_VALUES="MaxNanFunctor<long>=i64:4096" torch_run "$d" h100x$world megatron_gpt.py $steps --tp 2 --sp \
        --recompute selective
fi
check_run "$d" $world $steps
for ((r = 0; r < world; r++)); do
    out=$d/logs/rank-$r.out
    layers=$(result "$out" layers) mb=$(result "$out" microbatches)
    act=$(($(result "$out" batch) * $(result "$out" seq) * $(result "$out" dim) * 2))
    n=$((steps * mb))
    expect_eq "$(coll_count "$d/dump-$r" ncclAllGather $((act / 2)))" $((n * (6 * layers + 3))) \
        "rank $r, sequence parallel: all-gathers of half the sequence"
    expect_eq "$(coll_count "$d/dump-$r" ncclReduceScatter $((act / 2)))" $((n * (4 * layers + 1))) \
        "rank $r, sequence parallel: reduce-scatters of half the sequence"
    expect_eq "$(coll_count "$d/dump-$r" ncclAllReduce $act)" $n "rank $r, sequence parallel: the embedding's all-reduces"
    norms=$(grep -cE '^coll .*api=ncclAllReduce .* bytes=([0-9]{1,4})( |$)' "$d/dump-$r" || true)
    [ "$norms" -ge "$steps" ] || fail "rank $r, sequence parallel: $norms small all-reduces (the norms' gradients) for $steps steps"
done
echo "megatron-core tp2: ok (and with sequence parallelism)"
