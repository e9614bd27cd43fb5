#!/usr/bin/env bash
# Megatron-Core's weak scaling on H100 (Megatron-LM's README, Megatron-Core
# r0.8.0: GPT of 1.7B to 462B parameters on 48 to 6,144 H100s, sequence
# 4096, vocabulary 131,072), re-created with the bundled minigpt on maya's
# dgx-h100 cluster, one row per model. minigpt runs each row as
# fidelity/data/megatron_core_h100.csv says Megatron-Core ran it (what was
# published, what followed from Megatron's defaults, and what had to be
# chosen): bf16 with fp32 gradient reduction, the distributed optimizer with
# its gradient reduce-scatters overlapping the backward and its parameter
# all-gathers the next forward, sequence parallelism with the TP collectives
# inside the GEMMs (--tp-comm-overlap), flash attention, biases, dropout 0.1,
# an untied output layer, the interleaved 1F1B schedule on the PP rows. The
# prediction is TFLOP/s per GPU by Megatron's count of that time,
# F = 12 B s l h^2 (2 + s/h + 4 + V/(2 l h)), over maya's steady-state
# iteration time.
#
# Rows of more GPUs than FIDELITY_MAX_RANKS declare their data-parallel
# replicas (fid_minigpt_scale): the ranks of DP digit 0 or 1 run, every TP
# rank of them (the TP ring's neighbour pairs follow no folded dimension), so
# a row runs 2 x TP x PP processes: 16 (32B) to 256 (462B). Rows beyond
# FIDELITY_MAX_GPUS (every PP row by default) are skipped: 70B takes about 2
# minutes and 5 GB on 2 CPUs. For tests: FIDELITY_MCORE_CSV (another table),
# FIDELITY_SEQ and FIDELITY_VOCAB (default 4096 and 131072), FIDELITY_ITERS
# (4).
. "$(dirname "$0")/lib.sh"

csv=${FIDELITY_MCORE_CSV:-$FID_DIR/data/megatron_core_h100.csv}
seq=${FIDELITY_SEQ:-4096}
vocab=${FIDELITY_VOCAB:-131072}
iters=${FIDELITY_ITERS:-4}
header=params_b,heads,hidden,layers,tp,pp,dp,gpus,global_batch,micro_batch,layers_per_virtual_stage,tflops_per_gpu,mfu_pct
fid_minigpt_table megatron_core "$csv" "$header"

grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r params heads hidden layers tp pp dp gpus gbs mbs lpv tflops _; do
    row=${params}B
    fid_wanted "$row" || continue
    fid_minigpt_row_ok megatron_core "$row" "$gpus" "$tp" "$pp" "$dp" "$gbs" "$mbs" 0 || continue
    # DP buckets of max(40 M, 1 M x DP) parameters, their gradients in fp32
    bucket_mb=$(awk -v dp="$dp" 'BEGIN { n = 1e6 * dp; if (n < 4e7) n = 4e7; printf "%.1f", n * 4 / 1048576 }')
    args=(--tp "$tp" --pp "$pp" --dp "$dp" --micro-batch-size "$mbs" --micro-batches $((gbs / (mbs * dp)))
        --seq "$seq" --hidden "$hidden" --heads "$heads" --layers "$layers" --vocab "$vocab"
        --bias --hidden-dropout 0.1 --attention-dropout 0.1 --fp32-cross-entropy --attention flash
        --zero1 --ddp torch --bucket-mb "$bucket_mb" --overlap-param-gather --iters "$iters")
    [ "$tp" -gt 1 ] && args+=(--sequence-parallel --tp-comm-overlap)
    [ -n "$lpv" ] && args+=(--layers-per-virtual-stage "$lpv")
    flops=$(awk -v B="$gbs" -v s="$seq" -v l="$layers" -v h="$hidden" -v V="$vocab" 'BEGIN {
        printf "%.17g", 12 * B * s * l * h * h * (6 + s / h + V / (2 * l * h)) }')
    fid_minigpt_run megatron_core "$row" dgx-h100 h100 "$gpus" "$flops" "$tflops" "${args[@]}"
done
