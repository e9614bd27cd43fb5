#!/usr/bin/env bash
# A ResNet trains under `maya run` on 1 and on 2 emulated GPUs (DDP): its
# convolutions are cuDNN calls traced with their shapes, forward and
# backward, and no call is unsupported.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

steps=3
for n in 1 2; do
    d=$TEST_TMP/resnet$n
    torch_run "$d" h100x$n train_resnet.py $steps
    check_rank_traces "$d" $n
    check_report "$d"
    for ((r = 0; r < n; r++)); do
        out=$d/logs/rank-$r.out
        expect_eq "$(result "$out" steps)" $steps "$n GPUs: steps trained by rank $r"
        [ "$(result "$out" cudnn)" -ge 90000 ] || fail "$n GPUs: torch.backends.cudnn.version() should be cuDNN 9"
        dump=$d/dump-$r
        # The stem convolution: 16 images of 3x64x64 into 32 channels, 3x3.
        expect_grep '^dnn .*op=conv_fwd pad=1,1 stride=1,1 .* x=dtype0\[16,3,64,64\]/[^ ]* w=dtype0\[32,3,3,3\]/[^ ]* y=dtype0\[16,32,64,64\]' \
            "$dump" "$n GPUs rank $r: the stem convolution with its shapes"
        # 20 convolutions (stem, 16 in blocks, 3 shortcuts) forward and for
        # the weight gradient each step; the data gradient of all but the
        # stem (its input needs none).
        expect_count $((20 * steps)) '^dnn .*result=0 op=conv_fwd ' "$dump"
        expect_count $((20 * steps)) '^dnn .*result=0 op=conv_bwd_filter ' "$dump"
        expect_count $((19 * steps)) '^dnn .*result=0 op=conv_bwd_data ' "$dump"
        expect_count $((20 * steps)) '^dnn .*result=0 op=bn_fwd_train ' "$dump"
    done
    if [ $n = 2 ]; then
        expect_grep 'api=ncclAllReduce' "$d/dump-0" "DDP ResNet: gradients all-reduced"
    fi
done
echo "resnet: ok"
