#!/usr/bin/env bash
# The GPT-style model trained with FSDP2 (fully_shard) on 4 emulated H100s
# and with tensor parallelism (torch.distributed.tensor.parallel) on 2 runs
# unmodified under `maya run`: every rank trains every step with no
# unsupported call; FSDP all-gathers parameters and reduce-scatters
# gradients, tensor parallelism all-reduces activations.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

steps=3
d=$TEST_TMP/fsdp
torch_run "$d" h100x4 train_fsdp_gpt.py $steps
check_rank_traces "$d" 4
check_report "$d"
for r in 0 1 2 3; do
    expect_eq "$(result "$d/logs/rank-$r.out" steps)" $steps "FSDP steps trained by rank $r"
    # Each step: parameters gathered for forward and again for backward,
    # gradients reduce-scattered, per block and for the root.
    n=$(grep -cE 'api=ncclAllGather' "$d/dump-$r" || true)
    [ "$n" -ge $((2 * steps)) ] || fail "FSDP rank $r: expected all-gathers every step, found $n"
    n=$(grep -cE 'api=ncclReduceScatter' "$d/dump-$r" || true)
    [ "$n" -ge $steps ] || fail "FSDP rank $r: expected reduce-scatters every step, found $n"
done

d=$TEST_TMP/tp
torch_run "$d" h100x2 train_tp_gpt.py $steps
check_rank_traces "$d" 2
check_report "$d"
for r in 0 1; do
    expect_eq "$(result "$d/logs/rank-$r.out" steps)" $steps "TP steps trained by rank $r"
    # Two row-parallel layers per block (attention projection, MLP output):
    # an all-reduce each in forward, for 2 blocks, every step.
    n=$(grep -cE 'api=ncclAllReduce' "$d/dump-$r" || true)
    [ "$n" -ge $((4 * steps)) ] || fail "TP rank $r: expected at least $((4 * steps)) all-reduces, found $n"
done
echo "fsdp and tp gpt: ok"
