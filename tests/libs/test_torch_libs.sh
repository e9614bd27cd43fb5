#!/usr/bin/env bash
# PyTorch (the project's .venv, CUDA 13 wheels built with cuDNN 9.26) runs
# its cuBLAS, cuBLASLt and cuDNN paths on maya's libraries: fp16 / bf16 /
# batched matmuls (cublasGemmEx, cublasGemmStridedBatchedEx), a linear
# layer through cuBLASLt with a bias epilogue (on the cuBLAS handle cast to
# a cuBLASLt one), a convolution forward and both backward passes through
# cuDNN's graph API, batch norm through the legacy API, and causal attention
# on cuDNN's backend: the SDPA operation forward and the frontend's backward
# graph. Every one is traced with its shapes; nothing is unsupported.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$PY" "$MAYA_TOP/tests/workloads/torch/libs_ops.py" > "$TEST_TMP/out" 2>&1 ||
    fail "libs_ops.py failed: $(tail -20 "$TEST_TMP/out")"
expect_grep "^libs_ops: ok \(256, 1024\) \(256, 1024\) \(12, 64, 48\) \(256, 384\) \(2, 8, 256, 64\)$" "$TEST_TMP/out"
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
g='^gemm .* result=0'
expect_grep "$g lib=cublas m=1024 n=256 k=512 batch=1 trans=NN .* atype=2 btype=2 ctype=2 dtype=2 compute=68 " "$TEST_TMP/dump"
expect_grep "$g lib=cublas m=1024 n=256 k=512 batch=1 trans=NN .* atype=14 btype=14 ctype=14 dtype=14 compute=68 " "$TEST_TMP/dump"
expect_grep "$g lib=cublas m=48 n=64 k=32 batch=12 trans=NN lda=48 ldb=32 ldc=48 ldd=48 stride=1536,2048,3072 " "$TEST_TMP/dump"
expect_grep "$g lib=cublasLt m=384 n=256 k=512 batch=1 trans=TN .* epilogue=4 " "$TEST_TMP/dump" "Linear: cuBLASLt with the bias epilogue"
d='^dnn .* api=cudnnBackendExecute result=0'
x='dtype0\[8,3,32,32\]/\[3072,1024,32,1\]'
w='dtype0\[16,3,3,3\]/\[27,9,3,1\]'
y='dtype0\[8,16,32,32\]/\[16384,1024,32,1\]'
expect_grep "$d op=conv_fwd pad=1,1 stride=1,1 dilation=1,1 groups=1 .* x=$x w=$w y=$y\$" "$TEST_TMP/dump"
expect_grep "$d op=conv_bwd_data pad=1,1 .* dx=$x w=$w dy=$y\$" "$TEST_TMP/dump"
expect_grep "$d op=conv_bwd_filter pad=1,1 .* x=$x dw=$w dy=$y\$" "$TEST_TMP/dump"
expect_grep "^dnn .* api=cudnnBatchNormalizationForwardTrainingEx result=0 op=bn_fwd_train .* t=$y t=$y t=dtype0\[1,16,1,1\]" "$TEST_TMP/dump"
expect_grep "^dnn .* api=cudnnBatchNormalizationBackwardEx result=0 op=bn_bwd " "$TEST_TMP/dump"
qkv='dtype9\[2,8,256,64\]/\[131072,16384,64,1\]'
expect_grep "$d op=sdpa_fwd causal=1 scale=0.125 .* q=$qkv k=$qkv v=$qkv " "$TEST_TMP/dump"
expect_grep "$d op=sdpa_bwd causal=1 scale=0.125 .* q=$qkv k=$qkv v=$qkv " "$TEST_TMP/dump"
expect_grep "^end .* unsupported_calls=0 " "$TEST_TMP/dump"
