#!/usr/bin/env bash
# A program built with nvcc against the real cuBLAS runs against maya's:
# every GEMM (fp32, TF32 math, fp64, fp16 and bf16 GemmEx, strided and
# pointer-array batches, GEMV) is traced with its shape, types, transposes,
# leading dimensions, strides, stream and workspace; a dot product of
# vectors copied from the host is computed; bad arguments get cuBLAS's
# status codes; the handle's default workspace is device memory.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/gemm_cublas" > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
    fail "gemm_cublas failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
expect_grep "^gemm_cublas: ok$" "$TEST_TMP/out"
expect_grep "^cublas version 130100$" "$TEST_TMP/out"
expect_grep "^dot 62 back 8$" "$TEST_TMP/out" "the dot product of the host's vectors"
# cuBLAS's status codes: INVALID_VALUE 7, NOT_INITIALIZED 1, NOT_SUPPORTED 15
while read -r what code; do
    expect_grep "^status $what $code\$" "$TEST_TMP/out" "$what should return $code"
done <<'CODES'
lda_too_small 7
negative_m 7
bad_trans 7
null_handle 1
null_alpha 7
ldc_too_small 7
mixed_types 15
bad_compute 7
negative_batch 7
misaligned_workspace 7
bad_pointer_mode 7
set_vector_inc0 7
empty 0
CODES
[ -s "$TEST_TMP/err" ] && fail "unexpected notes on stderr: $(cat "$TEST_TMP/err")"

dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
g='^gemm .* stream=1 api='
expect_grep "${g}cublasSgemm_v2 result=0 lib=cublas m=128 n=64 k=32 batch=1 trans=NN lda=128 ldb=32 ldc=128 .* atype=0 btype=0 ctype=0 dtype=0 compute=68 scale=0 epilogue=1 algo=-1 workspace=33554432$" "$TEST_TMP/dump"
expect_grep "${g}cublasSgemm_v2 result=0 lib=cublas m=96 n=48 k=200 batch=1 trans=TN lda=256 ldb=256 ldc=128 " "$TEST_TMP/dump"
expect_grep "${g}cublasSgemm_v2 result=0 lib=cublas m=1024 n=512 k=256 batch=1 trans=NT .* compute=77 " "$TEST_TMP/dump" "TF32 math mode makes the fp32 GEMM's compute type FAST_TF32 (77)"
expect_grep "${g}cublasDgemm_v2 result=0 lib=cublas m=64 n=64 k=64 .* atype=1 btype=1 ctype=1 dtype=1 compute=70 scale=1 " "$TEST_TMP/dump"
expect_grep "${g}cublasGemmEx result=0 lib=cublas m=768 n=512 k=256 batch=1 trans=TN lda=256 ldb=256 ldc=768 .* atype=2 btype=2 ctype=2 dtype=2 compute=68 scale=0 epilogue=1 algo=-1 " "$TEST_TMP/dump"
expect_grep "${g}cublasGemmEx result=0 lib=cublas m=1024 n=256 k=128 .* atype=14 btype=14 ctype=0 dtype=0 compute=68 scale=0 epilogue=1 algo=99 " "$TEST_TMP/dump"
expect_grep "${g}cublasGemmStridedBatchedEx result=0 lib=cublas m=64 n=64 k=64 batch=16 trans=TN lda=64 ldb=64 ldc=64 ldd=64 stride=4096,4096,4096 atype=2 " "$TEST_TMP/dump"
expect_grep "${g}cublasSgemmStridedBatched result=0 lib=cublas m=32 n=32 k=16 batch=4 trans=NN lda=32 ldb=16 ldc=32 ldd=32 stride=512,512,1024 " "$TEST_TMP/dump"
expect_grep "${g}cublasSgemmBatched result=0 lib=cublas m=16 n=8 k=4 batch=3 .* pointer_arrays$" "$TEST_TMP/dump"
expect_grep "${g}cublasSgemv_v2 result=0 lib=cublas m=300 n=1 k=200 batch=1 trans=NN lda=300 ldb=1 ldc=1 .* matvec$" "$TEST_TMP/dump"
expect_count 10 "^gemm " "$TEST_TMP/dump"
# the handle's stream is the program's stream (id 1), not the legacy one
expect_grep "^call .* stream=1 api=cublasSetStream_v2 result=0$" "$TEST_TMP/dump"
expect_grep "^call .* stream=1 api=cublasSdot_v2 result=0$" "$TEST_TMP/dump"
expect_grep "^memcpy .* api=cublasSetVector result=0 host_waits kind=h2d bytes=32 .* performed" "$TEST_TMP/dump"
expect_grep "^memcpy .* api=cublasGetVector result=0 host_waits kind=d2h bytes=32 .* performed" "$TEST_TMP/dump"
# refused calls run nothing: CALL records without a stream
expect_count 5 "^call .* stream=0 api=cublasSgemm_v2 result=(7|1)$" "$TEST_TMP/dump"
expect_grep "^call .* stream=0 api=cublasGemmEx result=15$" "$TEST_TMP/dump"
expect_grep "^call .* stream=0 api=cublasSgemm_v2 result=0$" "$TEST_TMP/dump" "an empty GEMM launches nothing"
# cuBLAS's default workspace (32 MiB on Hopper) is allocated with the handle
expect_grep "^alloc .* api=cublasCreate_v2 result=0 kind=device .* bytes=33554432 " "$TEST_TMP/dump"
expect_grep "^free .* api=cublasDestroy_v2 result=0 kind=device .* bytes=33554432 " "$TEST_TMP/dump"
expect_grep "^end .* unsupported_calls=0 " "$TEST_TMP/dump"
