#!/usr/bin/env bash
# Hugging Face Transformers models built from configs (GPT-2 here; BERT, T5
# and ViT in test_hf_models, Llama in the long set: HF_MODELS names them;
# random weights, nothing downloaded) train with Accelerate's DDP on 2 emulated H100s
# under `maya run`, unmodified: every rank trains every step, nothing is
# unsupported, Accelerate wraps the model in DDP, DDP all-reduces exactly the
# parameters' bytes each step, the report finds the steps as iterations, and
# the peak memory is what the model's fp32 state and torch's allocations need.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

steps=4
for model in ${HF_MODELS:-gpt2}; do
    d=$TEST_TMP/$model
    torch_run "$d" h100x2 hf_accelerate.py $model $steps
    check_run "$d" 2 $steps
    for r in 0 1; do
        out=$d/logs/rank-$r.out
        expect_eq "$(result "$out" rank)" $r "$model: rank of process $r"
        expect_eq "$(result "$out" world_size)" 2 "$model: world size seen by rank $r"
        expect_eq "$(result "$out" wrapper)" DistributedDataParallel "$model: Accelerate's wrapper on rank $r"
        pbytes=$(result "$out" param_bytes)
        # Gradient buckets (the barrier's 4-byte all-reduce aside): every
        # parameter's gradient once per step.
        expect_eq "$(coll_bytes "$d/dump-$r" ncclAllReduce 1024)" $((steps * pbytes)) \
            "$model rank $r: DDP all-reduce bytes over $steps steps"
        # DDP's start: rank 0's parameters and floating-point buffers
        # (Llama's rotary frequencies) broadcast to all, in one bucket.
        expect_grep "^coll .*api=ncclBcast .* bytes=$((pbytes + $(result "$out" float_buffer_bytes)))( |$)" "$d/dump-$r" \
            "$model rank $r: DDP broadcasts the parameters and buffers from rank 0"
        # fp32 weights, gradients and AdamW's two moments.
        check_peak "$d" $r $((4 * pbytes))
    done
done
echo "hf accelerate: ok"
