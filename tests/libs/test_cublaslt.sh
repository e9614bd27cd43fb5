#!/usr/bin/env bash
# A program built against the real cuBLASLt runs against maya's: the
# heuristic offers algorithms within the preference's workspace, every
# cublasLtMatmul is traced with m, n, k, batch, transposes, leading
# dimensions, strides, the four types, compute and scale types, epilogue
# (bias, GELU+aux), row-major layouts, the algorithm and workspace; an
# algorithm chosen by id is checked and configured; a cuBLAS handle serves
# as a cuBLASLt handle (cast, as PyTorch does); bad arguments get
# cuBLASLt's status codes.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/gemm_lt" > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
    fail "gemm_lt failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
expect_grep "^gemm_lt: ok$" "$TEST_TMP/out"
expect_grep "^cublasLt version 130100$" "$TEST_TMP/out"
expect_grep "^heuristic 3 algos, first workspace 0 waves 0.09$" "$TEST_TMP/out" "12 tiles of 128x128 on 132 SMs"
expect_grep "^algo ids 8, chose 7, check workspace 0$" "$TEST_TMP/out"
expect_grep "^epilogue size 4 value 4$" "$TEST_TMP/out"
while read -r what code; do
    expect_grep "^status $what $code\$" "$TEST_TMP/out" "$what should return $code"
done <<'CODES'
shape_mismatch 7
ld_too_small 7
null_handle 1
workspace_null 7
heuristic_zero 7
config_uninitialised 7
attribute_size 7
unknown_attribute 7
CODES
[ -s "$TEST_TMP/err" ] && fail "unexpected notes on stderr: $(cat "$TEST_TMP/err")"

dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
g='^gemm .* stream=1 api=cublasLtMatmul result=0 lib=cublasLt'
ws='workspace=33554432'
expect_grep "$g m=768 n=256 k=512 batch=1 trans=TN lda=512 ldb=512 ldc=768 ldd=768 stride=0,0,0 atype=2 btype=2 ctype=2 dtype=2 compute=68 scale=0 epilogue=4 algo=0 $ws\$" "$TEST_TMP/dump"
expect_grep "$g m=3072 n=512 k=768 batch=1 trans=TN .* atype=14 btype=14 ctype=14 dtype=14 compute=68 scale=0 epilogue=164 algo=0 $ws\$" "$TEST_TMP/dump" "bf16 GELU_AUX_BIAS (164)"
expect_grep "$g m=1024 n=1024 k=1024 batch=1 trans=NN .* atype=0 btype=0 ctype=0 dtype=0 compute=77 " "$TEST_TMP/dump"
expect_grep "$g m=128 n=128 k=64 batch=48 trans=NT lda=128 ldb=128 ldc=128 ldd=128 stride=8192,8192,16384 atype=2 .* algo=0 $ws\$" "$TEST_TMP/dump"
expect_grep "$g m=256 n=384 k=128 batch=1 trans=NN lda=128 ldb=384 ldc=384 ldd=384 .* atype=14 .* $ws row_major=ABCD\$" "$TEST_TMP/dump"
expect_grep "$g m=2048 n=1024 k=4096 batch=1 trans=TN lda=4096 ldb=4096 ldc=2048 ldd=2048 .* atype=28 btype=28 ctype=14 dtype=14 compute=68 " "$TEST_TMP/dump" "FP8 E4M3 inputs (28), bf16 output"
expect_grep "$g m=128 n=128 k=64 batch=48 .* algo=7 $ws\$" "$TEST_TMP/dump" "the algorithm chosen by id"
expect_count 2 "$g m=1024 n=1024 k=1024 batch=1 trans=NN .* compute=77 " "$TEST_TMP/dump" "the TF32 GEMM again through a cuBLAS handle cast to a cuBLASLt one"
expect_count 8 "^gemm " "$TEST_TMP/dump"
expect_count 4 "^call .* stream=0 api=cublasLtMatmul result=(7|1)$" "$TEST_TMP/dump"
expect_grep "^end .* unsupported_calls=0 " "$TEST_TMP/dump"
