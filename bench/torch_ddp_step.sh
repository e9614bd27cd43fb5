#!/usr/bin/env bash
# Cost of emulating PyTorch: the DDP GPT workload (tests/workloads/torch/
# train_ddp_gpt.py, NCCL, bf16 autocast, fused AdamW) on 4 emulated H100s
# under `maya run`, on this host. Per rank: the wall and CPU seconds of one
# training step (median of the steady steps, as the script measures them:
# CPU of all the process's threads), the process's peak RSS, and the traced
# calls and device ops of one step (the difference between an S1- and an
# S2-step run over S2 - S1). Prints name=value lines.
set -eu
top=${MAYA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
py=$top/.venv/bin/python
if [ ! -x "$py" ]; then
    echo "torch_ddp_step=skipped (no .venv: run scripts/venv.sh)"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-torch-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
S1=${S1:-2} S2=${S2:-6} n=4

run() {
    "$top/build/bin/maya" run -q -g h100x$n -o "$tmp/s$1" -- "$py" "$top/tests/workloads/torch/train_ddp_gpt.py" "$1" \
        > "$tmp/s$1.out" 2>&1 || { cat "$tmp/s$1.out" "$tmp/s$1"/logs/*.err >&2; exit 1; }
    for ((r = 0; r < n; r++)); do
        "$top/build/bin/maya" trace dump "$tmp/s$1/traces/rank-$r.mtrace" |
            awk '$1 ~ /^(call|launch|memcpy|memset|alloc|free|event_record|stream_wait|sync|host_func|gemm|dnn|coll|graph|marker)$/ { calls++ }
                 $1 ~ /^(launch|memcpy|memset|gemm|dnn|coll)$/ { ops++ }
                 END { print calls + 0, ops + 0 }' > "$tmp/s$1.ops.$r"
    done
}

run "$S1"
run "$S2"
for ((r = 0; r < n; r++)); do
    grep '^MAYA_RESULT ' "$tmp/s$S2/logs/rank-$r.out" | "$py" -c '
import json, statistics, sys
r = json.loads(sys.stdin.read()[len("MAYA_RESULT "):])
rank = r["rank"]
steady = slice(1, None)  # the first step builds DDP buckets and caches
wall, cpu = statistics.median(r["host_s"][steady]), statistics.median(r["cpu_s"][steady])
print("torch_ddp_step_wall_s_rank%d=%.4f" % (rank, wall))
print("torch_ddp_step_cpu_s_rank%d=%.4f" % (rank, cpu))
print("torch_ddp_peak_rss_mib_rank%d=%.0f" % (rank, r["max_rss_mib"]))'
    read -r c1 o1 < "$tmp/s$S1.ops.$r"
    read -r c2 o2 < "$tmp/s$S2.ops.$r"
    echo "torch_ddp_step_traced_calls_rank$r=$(( (c2 - c1) / (S2 - S1) ))"
    echo "torch_ddp_step_traced_ops_rank$r=$(( (o2 - o1) / (S2 - S1) ))"
done
echo "torch_ddp_run_${S2}steps_wall_s=$(sed -n 's/^wall_s=//p' "$tmp/s$S2/run.conf")"
