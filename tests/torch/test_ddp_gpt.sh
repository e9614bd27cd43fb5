#!/usr/bin/env bash
# A GPT-style model trained with DDP (NCCL) on 4 emulated H100s with bf16
# autocast and a fused AdamW runs unmodified under `maya run`: every rank
# trains every step, its trace has no unsupported call, gradients are
# all-reduced over NCCL, matrix multiplies go to cuBLAS/cuBLASLt in bf16,
# attention to cuDNN, and the optimizer is one fused kernel per step; the
# report finds the repeating iteration.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

steps=4
d=$TEST_TMP/ddp
torch_run "$d" h100x4 train_ddp_gpt.py $steps
check_rank_traces "$d" 4
check_report "$d"
for r in 0 1 2 3; do
    out=$d/logs/rank-$r.out
    expect_eq "$(result "$out" rank)" $r "rank of process $r"
    expect_eq "$(result "$out" world_size)" 4 "world size seen by rank $r"
    expect_eq "$(result "$out" steps)" $steps "steps trained by rank $r"
    expect_eq "$(result "$out" device)" "NVIDIA H100 80GB HBM3" "device name on rank $r"
    dump=$d/dump-$r
    # DDP: parameters broadcast from rank 0 at start, gradient buckets
    # all-reduced every step.
    n=$(grep -cE 'api=ncclAllReduce' "$dump" || true)
    [ "$n" -ge $steps ] || fail "rank $r: expected at least one ncclAllReduce per step, found $n"
    expect_grep '^coll .*api=ncclB(road)?cast .* bytes=8548352 ' "$dump" "rank $r: DDP broadcasts the 2.1M fp32 parameters from rank 0"
    n=$(grep -ciE '^launch .*kernel=".*fused.*adam' "$dump" || true)
    [ "$n" -ge $steps ] || fail "rank $r: expected a fused AdamW kernel per step, found $n"
    # autocast: bf16 (CUDA_R_16BF = 14) GEMMs through cuBLAS and cuBLASLt,
    # attention through cuDNN's SDPA graphs forward and backward.
    expect_grep '^gemm .*api=cublasLtMatmul result=0 .* atype=14 btype=14 ' "$dump" "rank $r: bf16 cuBLASLt matmuls"
    expect_grep '^gemm .*api=cublasGemmEx result=0 .* atype=14 btype=14 ' "$dump" "rank $r: bf16 cuBLAS GEMMs"
    expect_grep '^dnn .*op=sdpa_fwd causal=1 ' "$dump" "rank $r: causal attention forward through cuDNN"
    expect_grep '^dnn .*op=sdpa_bwd causal=1 ' "$dump" "rank $r: attention backward through cuDNN"
done
n=$(report_field "$d" "len(r['iterations'])")
[ "$n" -ge 2 ] || fail "the report should find the training steps as iterations, found $n"
echo "ddp gpt: ok"
