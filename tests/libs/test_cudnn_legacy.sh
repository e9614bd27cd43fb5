#!/usr/bin/env bash
# A CNN step through cuDNN's legacy API, built against the real cuDNN, runs
# against maya's: convolutions (forward with the algorithm from
# GetConvolutionForwardAlgorithm_v7, backward data and filter with
# algorithms from Find*, a grouped, strided, dilated one in Nd form) are
# traced with shapes, strides, dtypes, padding, stride, dilation, groups,
# algorithm and workspace on the handle's stream; so are bias add, ReLU,
# pooling, batch norm, softmax and the bias gradient; output dimensions are
# computed; bad arguments get cuDNN's status codes.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/cudnn_legacy" > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
    fail "cudnn_legacy failed: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
expect_grep "^cudnn_legacy: ok$" "$TEST_TMP/out"
expect_grep "^cudnn version 92600$" "$TEST_TMP/out" "the default reported version, 9.26.0"
expect_grep "^conv output 32 128 56 56$" "$TEST_TMP/out"
expect_grep "^fwd algos 8, best [0-9] \(status 0\), workspace [0-9]+$" "$TEST_TMP/out"
expect_grep "^bwd filter algos 7, best [0-9] deterministic [01]$" "$TEST_TMP/out"
expect_grep "^grouped output 8 64 10 10$" "$TEST_TMP/out" "(20 + 2*2 - (2*2+1)) / 2 + 1 = 10"
expect_grep "^error string CUDNN_STATUS_NOT_SUPPORTED$" "$TEST_TMP/out"
# BAD_PARAM 2000, NOT_SUPPORTED 3000
while read -r what code; do
    expect_grep "^status $what $code\$" "$TEST_TMP/out" "$what should return $code"
done <<'CODES'
output_shape 2000
winograd_5x5 3000
no_workspace 3000
negative_dim 2000
nine_dims 3000
negative_pad 2000
null_handle 2000
channel_mismatch 2000
CODES
[ -s "$TEST_TMP/err" ] && fail "unexpected notes on stderr: $(cat "$TEST_TMP/err")"

# The reported version follows MAYA_CUDNN_VERSION; a malformed one is refused.
MAYA_CUDNN_VERSION=9.19.0 RANK=0 emu "$TEST_TMP/tr2" "$WORKLOADS/cudnn_legacy" > "$TEST_TMP/out2" 2>&1 ||
    fail "cudnn_legacy with MAYA_CUDNN_VERSION=9.19.0 failed: $(cat "$TEST_TMP/out2")"
expect_grep "^cudnn version 91900$" "$TEST_TMP/out2"
MAYA_CUDNN_VERSION=9.x RANK=0 emu "$TEST_TMP/tr3" "$WORKLOADS/cudnn_legacy" > "$TEST_TMP/out3" 2>&1 &&
    fail "cudnn_legacy ran with MAYA_CUDNN_VERSION=9.x"
expect_grep "MAYA_CUDNN_VERSION=9.x: expected MAJOR.MINOR.PATCH with major 9" "$TEST_TMP/out3"
expect_grep "cudnnCreate.*CUDNN_STATUS_NOT_INITIALIZED" "$TEST_TMP/out3"

dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
d='^dnn .* stream=1 api='
x='dtype2\[32,64,56,56\]/\[200704,3136,56,1\]'
w='dtype2\[128,64,3,3\]/\[576,9,3,1\]'
y='dtype2\[32,128,56,56\]/\[401408,3136,56,1\]'
expect_grep "${d}cudnnConvolutionForward result=0 op=conv_fwd pad=1,1 stride=1,1 dilation=1,1 groups=1 mode=1 compute=0 algo=[0-9] workspace=[0-9]+ x=$x w=$w y=$y\$" "$TEST_TMP/dump"
expect_grep "${d}cudnnConvolutionBackwardData result=0 op=conv_bwd_data pad=1,1 stride=1,1 dilation=1,1 groups=1 .* dx=$x w=$w dy=$y\$" "$TEST_TMP/dump"
expect_grep "${d}cudnnConvolutionBackwardFilter result=0 op=conv_bwd_filter pad=1,1 .* x=$x dw=$w dy=$y\$" "$TEST_TMP/dump"
expect_grep "${d}cudnnConvolutionForward result=0 op=conv_fwd pad=2,2 stride=2,2 dilation=2,2 groups=4 mode=1 compute=0 algo=0 workspace=0 x=dtype0\[8,32,20,20\]/\[12800,400,20,1\] w=dtype0\[64,8,3,3\]/\[72,9,3,1\] y=dtype0\[8,64,10,10\]/\[6400,100,10,1\]\$" "$TEST_TMP/dump"
expect_grep "${d}cudnnAddTensor result=0 op=pointwise .* t=$y t=dtype2\[1,128,1,1\]" "$TEST_TMP/dump"
expect_grep "${d}cudnnActivationForward result=0 op=pointwise " "$TEST_TMP/dump"
expect_grep "${d}cudnnPoolingForward result=0 op=other .* t=$y t=dtype2\[32,128,28,28\]/\[100352,784,28,1\]\$" "$TEST_TMP/dump"
expect_grep "${d}cudnnBatchNormalizationForwardTraining result=0 op=bn_fwd_train .* t=dtype0\[1,128,1,1\]/\[128,1,1,1\]\$" "$TEST_TMP/dump"
expect_grep "${d}cudnnSoftmaxForward result=0 op=softmax_fwd .* t=dtype0\[32,10,1,1\]" "$TEST_TMP/dump"
expect_grep "${d}cudnnConvolutionBackwardBias result=0 op=reduction " "$TEST_TMP/dump"
expect_count 10 "^dnn " "$TEST_TMP/dump"
expect_count 4 "^call .* stream=0 api=cudnnConvolutionForward result=(2000|3000)\$" "$TEST_TMP/dump"
expect_grep "^end .* unsupported_calls=0 " "$TEST_TMP/dump"
