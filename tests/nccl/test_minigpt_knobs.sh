#!/usr/bin/env bash
# minigpt's Megatron-LM knobs (tests/workloads/minigpt.cu), each seen in the
# traces of a maya run against what Megatron does for it:
#  - sequence parallelism: all-gathers and reduce-scatters of s/TP tokens in
#    place of the layers' TP all-reduces, the backward's re-gathers and
#    reduce-scatters on a stream of their own, the LayerNorm gradients
#    all-reduced over TP once per iteration;
#  - recompute: full adds each layer's forward GEMMs and TP all-reduces again
#    in the backward, selective the core attention's two batched GEMMs; both
#    lower the peak memory by what they stop keeping;
#  - ZeRO-1 lowers each rank's peak memory by the optimizer state it shards
#    (12 bytes a parameter: fp32 master weight and two Adam moments, of which
#    a rank keeps 1/DP);
#  - interleaved 1F1B: every rank's send/recv groups are those of Megatron's
#    forward_backward_pipelining_with_interleaving (re-stated below);
#  - fp16: fp16 GEMMs and gradient all-reduces, the overflow flag all-reduced
#    (max) over the model-parallel group and read by the host every step;
#  - biases and dropout: QKV's bias in the GEMM's epilogue, fused
#    bias-dropout-add and bias-GeLU, dropout on the attention probabilities,
#    a bias gradient per bias;
#  - DP: --ddp local reduces all gradients in one all-reduce after the
#    backward on the compute stream; --bucket-mb sets the buckets' size;
#  - --scatter-gather sends 1/TP of each activation and all-gathers it;
#  - --fp32-cross-entropy keeps the logits in fp32 (4 bytes more each), the
#    loss a kernel per op of Megatron's unfused cross-entropy;
#  - --tie-embeddings drops the output layer's own weight, and with PP sums
#    the two copies' gradients between the first and last stage.
# The model: hidden 256, 8 heads, seq 128, 2 sequences a micro-batch, so
# T x H = 65536 elements (32768 with SP over TP 2).
. "$MAYA_TOP/tests/lib.sh"
export MAYA_NCCL_TIMEOUT=120

# train NAME GPUS ARGS...: maya run of minigpt; rank 0's records in NAME.r0.
train() {
    local name=$1 gpus=$2
    shift 2
    "$MAYA" run -q -g "h100x$gpus" -o "$TEST_TMP/$name" -- "$WORKLOADS/minigpt" --iters 2 --micro-batches 2 "$@" \
        > "$TEST_TMP/$name.out" 2>&1 ||
        fail "maya run minigpt $* failed (exit $?): $(tail -20 "$TEST_TMP/$name.out"; grep -hE '^(status|error|failed)' \
            "$TEST_TMP/$name/report.txt" 2>/dev/null; tail -3 "$TEST_TMP/$name"/logs/*.err 2>/dev/null)"
    dump "$TEST_TMP/$name/traces/rank-0.mtrace" | grep -v '^string ' > "$TEST_TMP/$name.r0"
}
r0() { echo "$TEST_TMP/$1.r0"; }
# peak NAME [RANK]: a rank's peak GPU memory in bytes
peak() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ranks"][int(sys.argv[2])]["peak_memory_bytes"])' \
        "$TEST_TMP/$1/report.json" "${2:-0}"
}
# params NAME: the parameters rank 0 holds
params() { sed -n 's/^minigpt rank 0 .* \([0-9]*\) parameters here$/\1/p' "$TEST_TMP/$1/logs/rank-0.out"; }
# near GOT WANT WHAT: within 1 %
near() {
    python3 -c 'import sys; g, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(g - w) > 0.01 * abs(w))' "$1" "$2" ||
        fail "$3: got $1, expected $2 (within 1 %)"
}

# ---- sequence parallelism (TP 2, 2 layers; per micro-batch and layer, forward:
# 2 all-gathers + 2 reduce-scatters; backward: 2 all-gathers of the branches'
# gradients, 2 re-gathers and 2 reduce-scatters on stream 3; the head: an
# all-gather forward, a re-gather and a reduce-scatter backward; the
# embedding keeps its all-reduce, and all-gathers its gradient)
train tp 2 --tp 2 --layers 2
train sp 2 --tp 2 --layers 2 --sequence-parallel
expect_count 40 '^coll .*api=ncclAllReduce .*count=65536 dtype=9 ' "$(r0 tp)"
expect_count 0 '^coll .*api=nccl(AllGather|ReduceScatter)' "$(r0 tp)"
expect_count 4 '^coll .*api=ncclAllReduce .*count=65536 dtype=9 ' "$(r0 sp)"
expect_count 60 '^coll .*api=ncclAllGather .*count=32768 dtype=9 ' "$(r0 sp)"
expect_count 36 '^coll .*api=ncclReduceScatter .*count=32768 dtype=9 ' "$(r0 sp)"
expect_count 20 '^coll .*stream=3 api=ncclAllGather .*count=32768 dtype=9 ' "$(r0 sp)"
expect_count 20 '^coll .*stream=3 api=ncclReduceScatter .*count=32768 dtype=9 ' "$(r0 sp)"
# LayerNorm gains and biases of 2 layers and the final LayerNorm: (4 x 2 + 2) x 256 fp32
expect_count 2 '^coll .*api=ncclAllReduce .*count=2560 dtype=7 redop=0 ' "$(r0 sp)"
# LayerNorm on half the tokens: 128 rows
expect_grep '^launch .*kernel="void layernorm_fwd<Bf16>.* grid=128,1,1 ' "$(r0 sp)"

# ---- recompute (per micro-batch: 18 GEMMs a layer, 6 of them batched, plus
# the head's 3; full adds the layer's 6 forward GEMMs and 2 TP all-reduces,
# selective the 2 batched ones of the core attention)
train full 2 --tp 2 --layers 2 --recompute full
train sel 2 --tp 2 --layers 2 --recompute selective
expect_count 156 '^gemm .*api=cublasLtMatmul result=0 ' "$(r0 tp)"
expect_count 204 '^gemm .*api=cublasLtMatmul result=0 ' "$(r0 full)"
expect_count 172 '^gemm .*api=cublasLtMatmul result=0 ' "$(r0 sel)"
expect_count 48 '^gemm .*api=cublasLtMatmul result=0 .*batch=8 ' "$(r0 tp)"
expect_count 64 '^gemm .*api=cublasLtMatmul result=0 .*batch=8 ' "$(r0 full)"
expect_count 64 '^gemm .*api=cublasLtMatmul result=0 .*batch=8 ' "$(r0 sel)"
expect_count 56 '^coll .*api=ncclAllReduce .*count=65536 dtype=9 ' "$(r0 full)"
expect_count 40 '^coll .*api=ncclAllReduce .*count=65536 dtype=9 ' "$(r0 sel)"
# memory: per layer and micro-batch in flight (one, without PP), in bf16 unless
# said: the attention probabilities, 2 x 4 heads (of 8, over TP 2) x 128 x 128;
# the rest but the input: LayerNorm outputs, residual, QKV, context and the
# MLP's two [T, 4H/2] tensors, 9 x T x H, and 4 x T fp32 LayerNorm
# statistics. Full recompute keeps the input and one layer's worth as the
# work set (and the recomputed output, T x H); selective keeps one layer's
# probabilities (and the recomputed context, T x H/2).
probs=$((2 * 4 * 128 * 128 * 2)) rest=$((9 * 65536 * 2 + 4 * 256 * 4))
near "$(($(peak tp) - $(peak sel)))" "$((probs - 65536))" "peak memory no longer kept by selective recompute"
near "$(($(peak tp) - $(peak full)))" "$((probs + rest - 131072))" "peak memory no longer kept by full recompute"

# ---- ZeRO-1 (DP 4): 12 bytes of optimizer state per parameter, 3/4 of it gone
train dp4 4 --hidden 512 --layers 2 --vocab 8192
train zero1 4 --hidden 512 --layers 2 --vocab 8192 --zero1
n=$(params dp4)
[ -n "$n" ] && [ "$n" -gt 10000000 ] || fail "rank 0 holds $n parameters"
near "$(($(peak dp4) - $(peak zero1)))" "$((12 * n * 3 / 4))" "peak memory saved by --zero1"
expect_count 8 '^coll .*api=ncclReduceScatter .*dtype=7 ' "$(r0 zero1)"   # 4 buckets, 2 iterations
expect_count 8 '^coll .*api=ncclAllGather .*dtype=9 ' "$(r0 zero1)"

# ---- interleaved 1F1B: PP 4, 2 chunks of 1 layer per stage, 8 micro-batches
# (and 4: as many as stages, every forward in the warm-up)
megatron_interleaved() {  # P V M RANK: the send (S) / receive (R) groups, with peers
    python3 - "$@" <<'PY'
import sys
P, V, M, rank = map(int, sys.argv[1:])
N, all_warm = M * V, M == P
warm = N if all_warm else min((P - rank - 1) * 2 + (V - 1) * P, N)
rem, first, last = N - warm, rank == 0, rank == P - 1
prev, nxt = (rank - 1) % P, (rank + 1) % P
chunk = lambda k, fwd: (k % (P * V)) // P if fwd else V - 1 - (k % (P * V)) // P
out = []
def comm(sp, rp, sn, rn):  # Megatron's _communicate: send prev, recv prev, send next, recv next
    g = ("S%d" % prev if sp else "") + ("R%d" % prev if rp else "") + ("S%d" % nxt if sn else "") + ("R%d" % nxt if rn else "")
    if g:
        out.append(g)
if not first:
    comm(0, 1, 0, 0)
for k in range(warm):
    sn = not (last and chunk(k, True) == V - 1)
    rp = not (first and chunk(k + 1, True) == 0) and k != N - 1
    comm(0, rp, sn, k == warm - 1 and not all_warm and not last)
for k in range(rem):
    fk = k + warm
    sn = not (last and chunk(fk, True) == V - 1)
    sp = not (first and chunk(k, False) == 0)
    rp = not (first and chunk(fk - (P - 1), True) == V - 1) and k != rem - 1
    rn = not (last and chunk(k - (P - 1), False) == 0)
    comm(sp, rp, sn, rn)
if all_warm and not last:
    comm(0, 0, 0, 1)
for k in range(rem, N):
    sp = not (first and chunk(k, False) == 0)
    rn = not (last and chunk(k + 1, False) == V - 1) and k != N - 1
    comm(sp, 0, 0, rn)
print(" ".join(out))
PY
}
# groups DUMP: the rank's sends/receives, one NCCL group a word, with peers
groups() {
    awk '/^coll .*op=(send|recv) / {
        g = ""; op = ""; peer = ""
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^group=/) g = substr($i, 7)
            if ($i ~ /^op=/) op = substr($i, 4) == "send" ? "S" : "R"
            if ($i ~ /^peer=/) peer = substr($i, 6)
        }
        if (g == last && g != "0") cur = cur op peer; else { if (cur != "") out = out cur " "; cur = op peer }
        last = g
    } END { print out cur }' "$1"
}
for m in 8 4; do
    "$MAYA" run -q -g h100x4 -o "$TEST_TMP/vpp$m" -- "$WORKLOADS/minigpt" --iters 1 --pp 4 --layers 8 \
        --layers-per-virtual-stage 1 --micro-batches $m > "$TEST_TMP/vpp.out" 2>&1 ||
        fail "maya run minigpt interleaved ($m micro-batches) failed: $(tail -20 "$TEST_TMP/vpp.out")"
    for r in 0 1 2 3; do
        dump "$TEST_TMP/vpp$m/traces/rank-$r.mtrace" > "$TEST_TMP/vpp.dump"
        expect_eq "$(groups "$TEST_TMP/vpp.dump")" "$(megatron_interleaved 4 2 $m $r)" \
            "rank $r's interleaved send/recv groups ($m micro-batches)"
    done
done

# ---- fp16 (TP 2 x DP 2)
train fp16 4 --tp 2 --fp16 --loss-scale 4096
expect_count 0 '^gemm .*atype=14 ' "$(r0 fp16)"                      # no bf16 GEMM
expect_grep '^gemm .*atype=2 btype=2 ctype=2 dtype=2 ' "$(r0 fp16)"  # fp16
expect_count 12 '^coll .*stream=2 api=ncclAllReduce .*dtype=6 ' "$(r0 fp16)"  # 6 buckets, 2 iterations
expect_count 2 '^coll .*api=ncclAllReduce .*count=1 dtype=7 redop=2 ' "$(r0 fp16)"  # overflow flag
expect_count 12 '^launch .*kernel="unscale_grads' "$(r0 fp16)"  # a bucket each
expect_count 6 '^memcpy .*kind=d2h bytes=4 ' "$(r0 fp16)"  # the flag, the gradient norm and the loss, each step
"$MAYA" run -q -g h100x1 -o "$TEST_TMP/bad" -- "$WORKLOADS/minigpt" --loss-scale 4096 > "$TEST_TMP/bad.out" 2>&1
expect_grep 'minigpt: --loss-scale applies to --fp16 only' "$TEST_TMP/bad/logs/rank-0.err"

# ---- biases and dropout (TP 2, 2 layers)
train bias 2 --tp 2 --layers 2 --bias --hidden-dropout 0.1 --attention-dropout 0.1
expect_count 8 '^gemm .*epilogue=4 ' "$(r0 bias)"   # QKV's bias, 2 layers x 2 micro-batches x 2 iterations
expect_count 16 '^launch .*kernel="void bias_dropout_add<Bf16>' "$(r0 bias)"
expect_count 8 '^launch .*kernel="void gelu_fwd<Bf16>' "$(r0 bias)"
expect_count 12 '^launch .*kernel="void dropout_fwd<Bf16>' "$(r0 bias)"  # attention x 2 layers, embedding
expect_count 32 '^launch .*kernel="void bias_grad<Bf16>' "$(r0 bias)"
expect_count 0 '^launch .*kernel="void bias_dropout_add<Bf16>' "$(r0 tp)"

# ---- DP: after the backward (local), and in buckets of a size
train local 2 --ddp local
expect_count 2 '^coll .*api=ncclAllReduce .*dtype=7 redop=0 .*bytes=[0-9]{7,}' "$(r0 local)"
expect_count 2 '^coll .*stream=1 api=ncclAllReduce .*dtype=7 redop=0 .*bytes=[0-9]{7,}' "$(r0 local)"
train torch 2
expect_count 12 '^coll .*stream=2 api=ncclAllReduce .*dtype=7 ' "$(r0 torch)"  # 4 layers, embedding, head
train buckets 2 --bucket-mb 1
# fp32 gradients in buckets of 1 MiB (262144 elements)
n=$(params buckets)
want=$(( (n * 4 + 1048575) / 1048576 ))
expect_count $((2 * want)) '^coll .*stream=2 api=ncclAllReduce .*dtype=7 ' "$(r0 buckets)"
expect_grep '^coll .*stream=2 api=ncclAllReduce .* count=262144 dtype=7 ' "$(r0 buckets)"

# ---- scatter-gather of pipeline activations (TP 2 x PP 2): sends of T x H / 2
train sg 4 --tp 2 --pp 2 --scatter-gather
expect_count 0 '^coll .*op=(send|recv) .*count=65536 ' "$(r0 sg)"
# the first stage sends 2 activations and receives 2 gradients a step, each
# received piece all-gathered
expect_count 4 '^coll .*op=send .*count=32768 dtype=9 ' "$(r0 sg)"
expect_count 4 '^coll .*op=recv .*count=32768 dtype=9 ' "$(r0 sg)"
expect_count 4 '^coll .*api=ncclAllGather .*count=32768 dtype=9 ' "$(r0 sg)"

# ---- fp32 cross-entropy: the logits (T x 4096 a micro-batch) cast to fp32 and
# kept so, their 16-bit copy a work buffer: 4 bytes more a logit; the cast
# and its backward once a micro-batch each
train ce32 1 --fp32-cross-entropy
train untied 1
near "$(($(peak ce32) - $(peak untied)))" "$((256 * 4096 * 4))" "peak memory of the fp32 logits"
expect_count 4 '^launch .*kernel="void convert<__nv_bfloat16, float>' "$(r0 ce32)"
expect_count 4 '^launch .*kernel="void convert<float, __nv_bfloat16>' "$(r0 ce32)"
# the loss as Megatron's unfused cross-entropy: a pass over the logits per
# op, each once a micro-batch (max, minus it, exp, sum, divide; the one-hot
# and scale in the backward)
for k in ce_max ce_sub ce_exp ce_sum ce_div ce_grad; do
    expect_count 4 "^launch .*kernel=\"void $k<F32>" "$(r0 ce32)"
done

# ---- tied embeddings: one weight fewer (4096 x 256); with PP 2 the copies' gradients summed
train tied 1 --tie-embeddings
expect_eq "$(($(params untied) - $(params tied)))" "$((4096 * 256))" "parameters saved by --tie-embeddings"
train tiedpp 2 --pp 2 --tie-embeddings
expect_count 3 '^coll .*api=ncclAllReduce .*count=1048576 ' "$(r0 tiedpp)"   # start-up, 2 steps
exit 0
