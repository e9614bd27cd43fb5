#!/usr/bin/env bash
# Cost of emulating PyTorch: the DDP GPT workload (tests/workloads/torch/
# train_ddp_gpt.py, NCCL, bf16 autocast, fused AdamW) on 4 emulated H100s
# under `maya run`, on this host. Each rank runs under /usr/bin/time; two
# runs (S1 and S2 steps) give the cost of one training step per rank as the
# difference over S2 - S1 steps (start-up, import and the first step's
# set-up cancel out). Prints name=value lines: per rank, wall and CPU seconds
# and traced calls/ops per step, peak RSS of the whole run; and the whole
# 1-step process for reference.
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
    "$top/build/bin/maya" run -q -g h100x$n -o "$tmp/s$1" -- /usr/bin/time -o /dev/stderr \
        -f 'TIME wall=%e cpu=%U+%S rss_kb=%M' "$py" "$top/tests/workloads/torch/train_ddp_gpt.py" "$1" \
        > "$tmp/s$1.out" 2>&1 || { cat "$tmp/s$1.out" "$tmp/s$1"/logs/*.err >&2; exit 1; }
    for ((r = 0; r < n; r++)); do
        sed -n 's/^TIME //p' "$tmp/s$1/logs/rank-$r.err" | tail -1 > "$tmp/s$1.time.$r"
        "$top/build/bin/maya" trace dump "$tmp/s$1/traces/rank-$r.mtrace" |
            awk '$1 ~ /^(call|launch|memcpy|memset|alloc|free|event|wait|sync|host_func|gemm|dnn|coll|graph|marker)$/ { calls++ }
                 $1 ~ /^(launch|memcpy|memset|gemm|dnn|coll)$/ { ops++ }
                 END { printf "calls=%d ops=%d\n", calls, ops }' > "$tmp/s$1.ops.$r"
    done
}
field() { sed -n "s/.*$2=\([^ ]*\).*/\1/p" "$1"; }

run "$S1"
run "$S2"
for ((r = 0; r < n; r++)); do
    a=$tmp/s$S1.time.$r b=$tmp/s$S2.time.$r
    awk -v w1="$(field "$a" wall)" -v w2="$(field "$b" wall)" -v c1="$(field "$a" cpu)" -v c2="$(field "$b" cpu)" \
        -v d="$((S2 - S1))" -v r=$r 'BEGIN {
            split(c1, x, "+"); split(c2, y, "+");
            printf "torch_ddp_step_wall_s_rank%d=%.3f\n", r, (w2 - w1) / d;
            printf "torch_ddp_step_cpu_s_rank%d=%.3f\n", r, (y[1] + y[2] - x[1] - x[2]) / d }'
    echo "torch_ddp_peak_rss_mib_rank$r=$(( $(field "$b" rss_kb) / 1024 ))"
    for k in calls ops; do
        echo "torch_ddp_step_traced_${k}_rank$r=$(( ($(field "$tmp/s$S2.ops.$r" $k) - $(field "$tmp/s$S1.ops.$r" $k)) / (S2 - S1) ))"
    done
done
echo "torch_ddp_process_${S1}steps_wall_s_rank0=$(field "$tmp/s$S1.time.0" wall)"
echo "torch_ddp_process_${S1}steps_cpu_s_rank0=$(awk -v c="$(field "$tmp/s$S1.time.0" cpu)" 'BEGIN { split(c, x, "+"); print x[1] + x[2] }')"
