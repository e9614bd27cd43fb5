#!/usr/bin/env bash
# cuBLAS, cuBLASLt and cuDNN work captured into a CUDA graph: at capture
# each call is traced as capturing (nothing runs) and becomes a node of the
# graph; each launch of the graph traces the GEMMs and the convolution again
# with their whole problem, flagged from_graph, between the launch's graph
# records.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/lib_graphs" > "$TEST_TMP/out" 2>&1 || fail "lib_graphs failed: $(cat "$TEST_TMP/out")"
expect_grep "^lib_graphs: ok, 3 nodes$" "$TEST_TMP/out"
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
for api in cublasSgemm_v2 cublasLtMatmul cudnnConvolutionForward; do
    expect_count 1 "^call .* stream=1 api=$api result=0 capturing$" "$TEST_TMP/dump"
done
expect_count 2 "^gemm .* stream=1 api=cublasSgemm_v2 result=0 from_graph lib=cublas m=512 n=384 k=256 batch=1 " "$TEST_TMP/dump"
expect_count 2 "^gemm .* stream=1 api=cublasLtMatmul result=0 from_graph lib=cublasLt m=256 n=64 k=128 batch=1 .* atype=2 " "$TEST_TMP/dump"
expect_count 2 "^dnn .* stream=1 api=cudnnConvolutionForward result=0 from_graph op=conv_fwd pad=1,1 stride=1,1 .* x=dtype0\[4,8,16,16\]" "$TEST_TMP/dump"
expect_count 4 "^graph .* api=cudaGraphLaunch result=0 graph_exec=1 (begin|end) nodes=3$" "$TEST_TMP/dump"
expect_count 4 "^gemm " "$TEST_TMP/dump"
expect_count 2 "^dnn " "$TEST_TMP/dump"
