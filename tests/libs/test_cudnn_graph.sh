#!/usr/bin/env bash
# cuDNN's backend (graph) API, driven as cuDNN's frontend drives it, runs
# against maya's cuDNN: heuristics give a count and then fill the caller's
# engine configs, plans finalize with their workspace, and each execution is
# traced on the handle's stream: a convolution graph with its geometry and
# NHWC strides; the frontend's attention graph (two matmuls around a scale,
# a causal mask and a softmax) as ONE sdpa_fwd record with q, k, v, o, the
# causal flag and the scale read from the variant pack (also when built
# with cuDNN 9.20's band-mask and softmax operations); its backward graph
# (five matmuls around the recomputed softmax) as ONE sdpa_bwd; cuDNN's own SDPA
# operation with grouped K/V heads; a matmul with its fused bias as one
# matmul. Descriptors are deep copies (the program destroys its own before
# executing). Misuse gets the real library's status codes.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/cudnn_graph" > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
    fail "cudnn_graph failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
expect_grep "^cudnn_graph: ok$" "$TEST_TMP/out"
for g in "conv" "sdpa graph" "sdpa graph 9.20" "sdpa backward graph" "sdpa op" "matmul\+bias"; do
    expect_grep "^$g: 3 engines, 2 configs, engine 0, 0 notes, workspace 0$" "$TEST_TMP/out"
done
# BAD_PARAM 2000, BAD_PARAM_ATTRIBUTE_TYPE 2010, NOT_INITIALIZED 1001,
# BAD_PARAM_NULL_POINTER 2002; an unknown type fails as the real one does (4003)
while read -r what code; do
    expect_grep "^status $what $code\$" "$TEST_TMP/out" "$what should return $code"
done <<'CODES'
missing_pointer 2000
wrong_type 2010
wrong_descriptor 2000
finalize_incomplete 2000
get_before_finalize 1001
set_after_finalize 2000
finalize_twice 2000
unknown_type 4003
null_descriptor 2002
CODES
[ -s "$TEST_TMP/err" ] && fail "unexpected notes on stderr: $(cat "$TEST_TMP/err")"

dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
d='^dnn .* stream=1 api=cudnnBackendExecute result=0'
expect_grep "$d op=conv_fwd pad=1,1 stride=1,1 dilation=1,1 groups=1 mode=1 compute=0 algo=0 workspace=0 graph_ops=1 x=dtype2\[8,64,56,56\]/\[200704,1,3584,64\] w=dtype2\[128,64,3,3\]/\[576,1,192,64\] y=dtype2\[8,128,56,56\]/\[401408,1,7168,128\]\$" "$TEST_TMP/dump"
qkvo='dtype2\[2,8,512,64\]/\[262144,32768,64,1\]'
expect_grep "$d op=sdpa_fwd causal=1 scale=0.125 dropout=0 compute=0 algo=0 workspace=0 graph_ops=13 q=$qkvo k=$qkvo v=$qkvo o=$qkvo\$" "$TEST_TMP/dump" "the frontend's attention graph as one causal SDPA (K recovered from K^T)"
expect_grep "$d op=sdpa_fwd causal=1 scale=0.0883883 .* graph_ops=5 q=dtype2\[4,16,256,128\]/\[524288,32768,128,1\] k=dtype2\[4,16,256,128\]/\[524288,32768,128,1\]" "$TEST_TMP/dump" "attention with cuDNN 9.20's band-mask and softmax operations"
expect_grep "$d op=sdpa_bwd causal=0 scale=0.125 dropout=0 compute=0 algo=0 workspace=0 graph_ops=15 q=$qkvo k=$qkvo v=$qkvo o=$qkvo\$" "$TEST_TMP/dump" "the frontend's attention backward graph (5 matmuls) as one SDPA backward, v from V^T, o shaped as dO"
expect_grep "$d op=sdpa_fwd causal=0 scale=0.088388 .* graph_ops=1 q=dtype9\[4,8,1024,128\]/\[1048576,131072,128,1\] k=dtype9\[4,2,1024,128\]/\[262144,131072,128,1\] v=dtype9\[4,2,1024,128\]" "$TEST_TMP/dump"
expect_grep "$d op=matmul compute=0 algo=0 workspace=0 graph_ops=2 a=dtype2\[16,256,1024\]/\[262144,1024,1\] b=dtype2\[16,1024,4096\]/\[4194304,4096,1\] c=dtype0\[16,256,4096\]" "$TEST_TMP/dump"
expect_count 6 "^dnn " "$TEST_TMP/dump"
expect_grep "^call .* stream=0 api=cudnnBackendExecute result=2000$" "$TEST_TMP/dump"
expect_grep "^end .* unsupported_calls=0 " "$TEST_TMP/dump"
