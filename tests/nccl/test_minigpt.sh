#!/usr/bin/env bash
# The mini transformer (tests/workloads/minigpt.cu) trains 3 iterations on 8
# emulated H100s under `maya run`, with TP 2 x PP 2 x DP 2: every rank
# finishes, and the traces show the parallel structure and match across
# ranks: per rank and micro-batch 9 TP all-reduces of activations; the 1F1B
# send/recv order on both pipeline stages; each layer's DP gradient
# reduction on its own stream, after a wait on the compute stream's event,
# issued while the backward pass still runs; the gradient-norm and loss
# all-reduces carry data. Then the same with ZeRO-1 (reduce-scatter +
# all-gather). GEMMs are cuBLASLt matmuls (maya's libcublasLt.so.13), then
# once more the program's own kernel.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"
export MAYA_NCCL_TIMEOUT=120

# train NAME ARGS...: maya run of 8 ranks; every rank must finish.
train() {
    local name=$1
    shift
    dir=$TEST_TMP/$name
    "$MAYA" run -q -g h100x8 -o "$dir" -- "$WORKLOADS/minigpt" --tp 2 --pp 2 --dp 2 --iters 3 "$@" \
        > "$TEST_TMP/$name.out" 2>&1 || fail "maya run minigpt $* failed: $(tail -20 "$TEST_TMP/$name.out")"
    for r in $(seq 0 7); do
        expect_grep "^minigpt rank $r \(tp $((r % 2))/2 pp $((r / 4))/2 dp $((r / 2 % 2))/2\): 3 iterations of 4 micro-batches done" \
            "$dir/logs/rank-$r.out"
    done
    expect_count 3 "^minigpt iter [0-2]: loss " "$dir/logs/rank-4.out"
}

# p2p_order DUMP: the rank's sends (S) and receives (R), those of one NCCL
# group written together, space-separated.
p2p_order() {
    awk '/^coll .*op=(send|recv) / {
        g = ""; op = ""
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^group=/) g = substr($i, 7)
            if ($i ~ /^op=/) op = substr($i, 4) == "send" ? "S" : "R"
        }
        if (g == last && g != "0") cur = cur op; else { if (cur != "") out = out cur " "; cur = op }
        last = g
    } END { print out cur }' "$1"
}

check_structure() {
    expect_matched "$dir/traces" "$1" 96 15
    local d=$dir/traces.dump r0=$TEST_TMP/r0 r4=$TEST_TMP/r4
    dump "$dir/traces/rank-0.mtrace" | grep -v '^string ' > "$r0"   # records only, in order
    dump "$dir/traces/rank-4.mtrace" | grep -v '^string ' > "$r4"
    # TP: [tokens, hidden] bf16 all-reduces, 9 per micro-batch on each stage
    expect_count 864 "^coll .*api=ncclAllReduce .*count=65536 dtype=9 redop=0 bytes=131072 group=0$" "$d"
    # PP: 1F1B, first stage: send, 3x (send + recv), recv; last stage mirrored
    expect_eq "$(p2p_order "$r0")" "$(printf 'S SR SR SR R %.0s' 1 2 3 | sed 's/ $//')" "rank 0's pipeline sends/recvs"
    expect_eq "$(p2p_order "$r4")" "$(printf 'R SR SR SR S %.0s' 1 2 3 | sed 's/ $//')" "rank 4's pipeline sends/recvs"
    # a send or receive whose group also receives or sends is marked so
    # (the estimator splits NCCL's channels between the two ways); the
    # warm-up's lone send and the cool-down's lone receive are not
    expect_count 9 "^coll .*op=send .* both_ways$" "$r0"
    expect_count 9 "^coll .*op=recv .* both_ways$" "$r0"
    expect_count 3 "^coll .*op=send .* group=[0-9]+$" "$r0"
    expect_count 3 "^coll .*op=recv .* group=[0-9]+$" "$r0"
    # small collectives move data: cross-entropy (max, sums), grad norm, loss
    expect_count 12 "^coll .*op=allreduce .*count=256 dtype=7 redop=2 .*data_moved$" "$r4"
    expect_count 12 "^coll .*op=allreduce .*count=512 dtype=7 redop=0 .*data_moved$" "$r4"
    expect_count 3 "^coll .*op=allreduce .*count=1 dtype=7 redop=4 .*data_moved$" "$r4"
}

# DP: the first gradient reduction of rank 0 is on another stream than the
# compute stream, right after waiting for the compute stream's event, and
# layer 0's backward (its layernorm_bwd) is still launched after it.
check_overlap() {
    local r0=$TEST_TMP/r0 api=$1 n
    # float32 gradients (TP all-reduces are bf16 on the compute stream, 1)
    n=$(grep -n "^coll .*stream=2 api=$api .* dtype=7 " "$r0" | head -1 | cut -d: -f1)
    [ -n "$n" ] || fail "no $api of float32 gradients on stream 2 of rank 0"
    sed -n "$((n - 1))p" "$r0" | grep -q "^stream_wait .*stream=2 api=cudaStreamWaitEvent" ||
        fail "rank 0's first gradient $api does not follow a stream wait on stream 2: $(sed -n "$((n - 1)),${n}p" "$r0")"
    expect_eq "$(grep -cE "^coll .*stream=1 api=$api .* dtype=7 .* bytes=[0-9]{6,}" "$r0")" 0 "gradient reductions on the compute stream"
    tail -n +"$n" "$r0" | sed '/kernel="void adam</q' | grep -q '^launch .*kernel="void layernorm_bwd<' ||
        fail "no backward kernel after rank 0's first $api: the reduction does not overlap the backward pass"
}

[ -e "$MAYA_LIBS/libcublasLt.so.13" ] || fail "maya's libcublasLt.so.13 is not built"

train allreduce
check_structure 540
check_overlap ncclAllReduce
expect_count 3 "^coll .*op=allreduce .*count=1 dtype=7 redop=0 .*data_moved$" "$TEST_TMP/r0"  # grad norm, model-parallel group
expect_count 24 "^coll .*api=ncclBroadcast .*dtype=9" "$dir/traces.dump"  # DP replicas start equal
# per micro-batch and layer 18 matmuls (6 forward, 12 backward; 6 batched over
# 2 sequences x 4 heads), 2 layers per stage, plus the LM head's 3 on the last
expect_count 432 "^gemm .*api=cublasLtMatmul result=0 " "$TEST_TMP/r0"
expect_count 144 "^gemm .*api=cublasLtMatmul result=0 .*batch=8 " "$TEST_TMP/r0"
expect_count 468 "^gemm .*api=cublasLtMatmul result=0 " "$TEST_TMP/r4"

train zero1 --zero1
check_structure 573
check_overlap ncclReduceScatter
expect_count 9 "^coll .*api=ncclAllGather .*dtype=9" "$TEST_TMP/r0"

train ownkernel --gemm kernel
check_structure 540
expect_count 0 "^gemm " "$TEST_TMP/r0"
