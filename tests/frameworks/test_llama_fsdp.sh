#!/usr/bin/env bash
# Llama 3.1 8B's layers trained with FSDP2 as torchtitan trains them
# (tests/workloads/frameworks/llama_fsdp_train.py; fidelity/torchtitan.sh
# runs the published configuration), cut to 2 layers of 4096 tokens on 2
# emulated H100s. PyTorch's flash attention kernels carry SASS only, and a
# register-starved body: their loop counters live on the stack, their
# next-tile loads sit out of line before the loop, their loops close on an
# exit test. Checked: the per-op selective checkpointing keeps the attention
# (no forward recomputed), and the tensor-core work read from the kernels'
# code is the attention's own: 4 b h d FLOPs per query and key pair
# computed, forward, where a causal mask leaves the 128-query blocks'
# (m + 1) * 128 keys (the diagonal tiles whole), and 2.5 times that
# backward (the five products of dQ, dK, dV); warp-level mma.sync
# on an H100 is priced at no more than 2/3 of the tensor-core peak.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/frameworks/fw_lib.sh"

[ -n "${MAYA_NVDISASM:-}" ] && [ -x "$MAYA_NVDISASM" ] ||
    skip "no nvdisasm to read PyTorch's SASS-only kernels: scripts/nvdisasm.sh installs it"

layers=2 steps=3 seq=4096 batch=2 heads=32 hdim=128
d=$TEST_TMP/llama
torch_run "$d" h100x2 llama_fsdp_train.py --layers $layers --seq $seq --steps $steps
check_run "$d" 2 $steps
"$MAYA" trace dump "$d/traces/rank-0.mtrace" > "$d/dump-0" || fail "cannot dump rank 0's trace"

# one forward and one backward attention per layer and step: none recomputed
expect_count $((layers * steps)) '^launch .*kernel="void pytorch_flash::flash_fwd_kernel' "$d/dump-0"
expect_count $((layers * steps)) '^launch .*kernel="void pytorch_flash::flash_bwd_dq_dk_dv' "$d/dump-0"

mma() { # KERNEL: the tensor-core FLOPs and device time maya estimate reads from its first launch
    "$MAYA" estimate launch "$d/traces/rank-0.mtrace" "$1" > "$d/est.$1" 2>&1 ||
        fail "maya estimate launch $1: $(tail -2 "$d/est.$1")"
    sed -n 's/.* mma_fp16=\([0-9.e+]*\) .*/\1/p' "$d/est.$1"
}
fwd=$(mma flash_fwd_kernel) bwd=$(mma flash_bwd_dq_dk_dv)
fwd_us=$(sed -n 's/.* device_us=\([0-9.]*\) .*/\1/p' "$d/est.flash_fwd_kernel")
"$PY" - "$fwd" "$bwd" "$fwd_us" $batch $heads $seq $hdim <<'PY' || fail "flash attention's work read from its code is wrong (above)"
import sys
fwd, bwd, us = (float(v) for v in sys.argv[1:4])
b, h, s, d = (int(v) for v in sys.argv[4:8])
blocks = s // 128
want = 4 * b * h * d * 128 * 128 * blocks * (blocks + 1) / 2
print("flash forward: %.4g FLOPs (attention's %.4g), backward %.4g (%.2f times), forward %.0f us on H100"
      % (fwd, want, bwd, bwd / fwd, us))
assert abs(fwd / want - 1) < 0.05, "forward"
assert abs(bwd / fwd - 2.5) < 0.25, "backward"
assert us * 1e-6 >= fwd / (989.4e12 * 2 / 3), "faster than mma.sync can go on an H100"
PY
echo "llama fsdp: ok"
