#!/usr/bin/env bash
# Attention rows: FlashAttention-2's forward and backward passes as measured
# on one GPU (fidelity/data/attention.csv, with their source), re-created
# with PyTorch's flash scaled_dot_product_attention
# (tests/workloads/frameworks/attention_bench.py) under maya run; the
# prediction is the steady-state time of one pass.
. "$(dirname "$0")/lib.sh"

csv=$FID_DIR/data/attention.csv
[ -r "$csv" ] || { echo "attention.sh: cannot read $csv" >&2; exit 2; }

grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r row gpu seq hd causal pass metric published; do
    fid_wanted "$row" || continue
    if [ "$metric" != ms ]; then
        fid_fail attention "$row" "unknown metric $metric"
        continue
    fi
    opts=(--seq "$seq" --head-dim "$hd" --pass "$pass")
    [ "$causal" = 1 ] && opts+=(--causal)
    fid_ms_row attention "$row" "$published" -g "${gpu}x1" --iteration-marker step -- \
        "$PY" "$FRAMEWORK_WORKLOADS/attention_bench.py" "${opts[@]}"
done
