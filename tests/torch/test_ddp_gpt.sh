#!/usr/bin/env bash
# A GPT-style model trained with DDP (NCCL) on 4 emulated H100s with bf16
# autocast and a fused AdamW runs unmodified under `maya run`: every rank
# trains every step, its trace has no unsupported call, gradients are
# all-reduced over NCCL, matrix multiplies go to cuBLAS/cuBLASLt in bf16,
# attention to cuDNN, and the optimizer is one fused kernel per step; the
# report finds the repeating iteration. The optimizer waits for the
# gradients' all-reduce, so a step on slow NICs is compute then exposed
# communication.
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

# The optimizer waits for the gradients: after each bucket's all-reduce
# DDP checks the collective's end event and, as it is not done yet (the
# emulated GPU is still running it), makes the compute stream wait on it.
"$PY" - "$d/dump-0" $steps <<'PY' || fail "the compute stream does not wait for DDP's all-reduces (above)"
import re, sys
recorded, waits, coll_stream, after_coll = {}, 0, None, set()
for line in open(sys.argv[1]):
    kind = line.split(' ', 1)[0]
    stream = re.search(r' stream=(\d+) ', line)
    if kind == 'coll' and 'api=ncclAllReduce' in line:
        coll_stream = stream.group(1)
        after_coll.add(coll_stream)
    elif kind == 'event_record':
        ev = re.search(r'event=(\d+) version=(\d+)', line).groups()
        if stream.group(1) in after_coll:
            recorded[ev] = stream.group(1)
            after_coll.discard(stream.group(1))
    elif kind == 'stream_wait':
        ev = re.search(r'event=(\d+) version=(\d+)', line).groups()
        if ev in recorded and recorded[ev] != stream.group(1):
            waits += 1
print('compute-stream waits on all-reduce end events:', waits)
assert waits >= int(sys.argv[2]), waits
PY

# So a step whose gradients take longer to all-reduce than its backward
# takes to compute waits for them: 16 ranks on two nodes whose NICs move
# 10 MB/s (the 8.5 MB of fp32 gradients then take most of a second),
# 14 of them replicas (--replicas 16:1, docs/dedup.md): the step is its
# compute and its exposed all-reduce, one after the other.
sed 's/^\( *nic_gbps = \).*/\10.01/; s/cluster "dgx-h100"/cluster "slow-nics"/' \
    "$MAYA_TOP/hwspecs/clusters/dgx-h100.conf" > "$TEST_TMP/slow-nics.conf"
MAYA_RUN_OPTS="--replicas 16:1 --cluster $TEST_TMP/slow-nics.conf" torch_run "$TEST_TMP/slow" h100x16 \
    train_ddp_gpt.py $steps
"$PY" - "$TEST_TMP/slow/report.json" <<'PY' || fail "a step slower to all-reduce than to compute (above)"
import json, sys
r = json.load(open(sys.argv[1]))
it, comp, exp = r["iteration_time_s"], r["compute_time_s"], r["exposed_communication_time_s"]
print("step %.3f s: compute %.3f s, exposed communication %.3f s" % (it, comp, exp))
assert comp > 0 and exp > 0.5 * it and abs(comp + exp - it) < 0.1 * it, (it, comp, exp)
PY
echo "ddp gpt: ok"
