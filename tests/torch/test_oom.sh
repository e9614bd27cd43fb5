#!/usr/bin/env bash
# A model too large for the emulated GPU fails as on the GPU: the caching
# allocator raises torch.OutOfMemoryError, the rank's trace records the
# out-of-memory, the run fails and its report says OOM for the rank.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

# 32 blocks of width 8192: 12 * 32 * 8192^2 fp32 parameters = 103 GB > 80 GB.
d=$TEST_TMP/oom
MAYA_GPT=1024,8192,64,32,128 "$MAYA" run -q -g h100x1 -o "$d" -- "$PY" "$TORCH_WORKLOADS/train_ddp_gpt.py" 1 \
    > "$d.out" 2>&1 && fail "a 103 GB model on an 80 GB GPU should fail"
expect_grep 'torch.OutOfMemoryError: CUDA out of memory' "$d/logs/rank-0.err" "the rank raises torch.OutOfMemoryError"
[ -f "$d/traces/rank-0.mtrace" ] || fail "the failed rank should still leave its trace"
dump "$d/traces/rank-0.mtrace" > "$d/dump"
expect_grep '^end .* oom=1' "$d/dump" "the trace records the out-of-memory"
# The peak is what fitted: within the 80 GB.
peak=$(peak_bytes "$d/dump" 0)
total=$(sed -n 's/^end .* dev0_total=\([0-9]*\).*/\1/p' "$d/dump")
[ "$peak" -le "$total" ] && [ "$peak" -gt $((total / 2)) ] || fail "peak $peak should be most of the GPU's $total bytes"
expect_eq "$(report_field "$d" "r['oom']")" true "report.json oom"
expect_eq "$(report_field "$d" "r['workload_ok']")" false "report.json workload_ok"
expect_grep 'rank 0 .*OUT OF MEMORY' "$d/report.txt" "report.txt names the rank that ran out of memory"
echo "oom: ok"
