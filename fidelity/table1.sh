#!/usr/bin/env bash
# Megatron-LM's Table 1 (Narayanan et al. 2021: GPT weak scaling on Selene,
# DGX A100 80 GB), re-created with the bundled minigpt on maya's dgx-a100
# cluster, one row per model: minigpt runs each row's configuration as
# Megatron-LM's examples/sc21 scripts ran it (fidelity/data/megatron_table1.csv
# says what was read where): fp16 with a static loss scale of 8192, full
# activation recompute of every layer, biases with fused bias-GeLU and
# bias-dropout-add, dropout 0.1 (hidden and attention, Megatron's defaults),
# the output layer tied to the word embedding, the logits cast to fp32 for
# the loss (no --fp16-lm-cross-entropy), pipeline sends scattered over
# TP (Megatron's default then), interleaved 1F1B where the script asks for
# it, torch DDP (25 MiB buckets, overlapped with the backward) or Megatron's
# local DDP (after it). The prediction is TFLOP/s per GPU by the paper's
# formula F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) over maya's steady-state
# iteration time.
#
# Rows of more GPUs than FIDELITY_MAX_RANKS declare their replicas (only
# the ranks whose DP and TP digits are 0 or 1 are emulated) and are replayed
# with --fold similar: the four emulated ranks of a stage measure slightly
# different host gaps, and rank 0 alone makes the NCCL id, so exact folding
# replays four ranks a stage (1008.0B: 256 ranks of ~2 M ops, more memory
# than this machine has) where similar folding replays one. Rows that would
# still need more processes, or have more GPUs than FIDELITY_MAX_GPUS, are
# skipped. For tests: FIDELITY_TABLE1_CSV (another table), FIDELITY_SEQ and
# FIDELITY_VOCAB (default 2048 and 51200), FIDELITY_ITERS (3).
. "$(dirname "$0")/lib.sh"

csv=${FIDELITY_TABLE1_CSV:-$FID_DIR/data/megatron_table1.csv}
seq=${FIDELITY_SEQ:-2048}
vocab=${FIDELITY_VOCAB:-51200}
iters=${FIDELITY_ITERS:-3}
header=params_b,heads,hidden,layers,tp,pp,dp,gpus,global_batch,micro_batch,layers_per_virtual_stage,tflops_per_gpu,pct_of_peak
fid_minigpt_table table1 "$csv" "$header"

grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r params heads hidden layers tp pp dp gpus gbs mbs lpv tflops _; do
    row=${params}B
    fid_wanted "$row" || continue
    if [ -z "$mbs" ]; then
        fid_skip table1 "$row" "no micro-batch size in $csv"
        continue
    fi
    fid_minigpt_row_ok table1 "$row" "$gpus" "$tp" "$pp" "$dp" "$gbs" "$mbs" 1 || continue
    args=(--tp "$tp" --pp "$pp" --dp "$dp" --micro-batch-size "$mbs" --micro-batches $((gbs / (mbs * dp)))
        --seq "$seq" --hidden "$hidden" --heads "$heads" --layers "$layers" --vocab "$vocab"
        --fp16 --loss-scale 8192 --recompute full --bias --hidden-dropout 0.1 --attention-dropout 0.1
        --fp32-cross-entropy --tie-embeddings --iters "$iters")
    # Megatron-LM 2021 scattered pipeline sends over TP by default
    [ "$pp" -gt 1 ] && [ "$tp" -gt 1 ] && args+=(--scatter-gather)
    [ -n "$lpv" ] && args+=(--layers-per-virtual-stage "$lpv")
    # the script's DDP: torch up to 18.4B, local beyond
    if awk -v p="$params" 'BEGIN { exit !(p < 30) }'; then args+=(--ddp torch --bucket-mb 25); else args+=(--ddp local); fi
    flops=$(awk -v B="$gbs" -v s="$seq" -v l="$layers" -v h="$hidden" -v V="$vocab" 'BEGIN {
        printf "%.17g", 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) }')
    fid_minigpt_run table1 "$row" dgx-a100 a100 "$gpus" "$flops" "$tflops" "${args[@]}"
done
