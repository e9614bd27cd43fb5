#!/usr/bin/env bash
# PyTorch's flash attention is priced from the work its SASS does, whatever
# the mask and the GPU: tests/workloads/torch/attention_ops.py runs a causal
# and a full attention, forward and backward, on an emulated A100 (sm_80
# code) and H100 (sm_90). The tensor-core FLOPs read from each kernel's code
# are those of the attention: 4 b h d per query and key pair computed,
# forward (a causal mask leaves the 128-query blocks' (m + 1) * 128 keys,
# the diagonal tiles whole), and 2.5 times that backward. Before the loop
# bounds of these kernels were read (a count computed with a signed
# division, a bound with a negated parameter, a counter spilled to the
# stack) the full attention and the A100's causal one were priced at a few
# percent of their work.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

[ -n "${MAYA_NVDISASM:-}" ] && [ -x "$MAYA_NVDISASM" ] ||
    skip "no nvdisasm to read PyTorch's SASS-only kernels: scripts/nvdisasm.sh installs it"

b=1 h=8 s=2048 d=128
for gpu in a100 h100; do
    dir=$TEST_TMP/$gpu
    torch_run "$dir" ${gpu}x1 attention_ops.py
    expect_grep '^attention_ops: ok' "$dir/logs/rank-0.out"
    flops=()
    for k in flash_fwd_kernel flash_bwd_dq_dk_dv; do
        for nth in 1 2; do # causal, then full
            o=$dir/est.$k.$nth
            "$MAYA" estimate launch "$dir/traces/rank-0.mtrace" "$k" nth=$nth > "$o" 2>&1 ||
                fail "$gpu: maya estimate launch $k nth=$nth: $(tail -2 "$o")"
            expect_grep '^code=sass ' "$o" "$gpu: $k priced from its SASS"
            flops+=("$(sed -n 's/.* mma_fp16=\([0-9.e+]*\) .*/\1/p' "$o")")
        done
    done
    "$PY" - "$gpu" "${flops[@]}" $b $h $s $d <<'PY' || fail "$gpu: flash attention's work read from its code is wrong (above)"
import sys
gpu = sys.argv[1]
fwd_causal, fwd_full, bwd_causal, bwd_full = (float(v) for v in sys.argv[2:6])
b, h, s, d = (int(v) for v in sys.argv[6:10])
blocks = s // 128
want = {"causal": 4 * b * h * d * 128 * 128 * blocks * (blocks + 1) / 2, "full": 4 * b * h * d * s * s}
for mask, fwd, bwd in (("causal", fwd_causal, bwd_causal), ("full", fwd_full, bwd_full)):
    print("%s %s: forward %.4g FLOPs (attention's %.4g), backward %.4g (%.2f times)"
          % (gpu, mask, fwd, want[mask], bwd, bwd / fwd))
    assert abs(fwd / want[mask] - 1) < 0.05, mask + " forward"
    assert abs(bwd / fwd - 2.5) < 0.25, mask + " backward"
PY
done
echo "flash attention: ok"
