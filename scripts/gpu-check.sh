#!/usr/bin/env bash
# scripts/gpu-check.sh [OUT]: for whoever has a machine with NVIDIA GPUs
# (driver for CUDA 13): profile the bundled workloads on the real GPUs with
# `maya profile`, predict each with `maya run` for the same GPU, and compare
# (`maya profile --compare`): measured and predicted iteration time, per-op
# error by family. Also exports every profile as training tables.
#
#   make && scripts/gpu-check.sh [OUT]     (default OUT: gpu-check-YYYYmmdd-HHMMSS)
#
# Everything lands in OUT (one profile and one run directory per workload,
# their compare.txt/json, tables/) and OUT/summary.txt, printed at the end.
# Multi-GPU workloads run when the machine has the GPUs (2 for nccl_colls,
# 4 and 8 for minigpt). Each step is bounded by GPU_CHECK_TIMEOUT seconds
# (default 300). Exit status: 0 all ran, 1 some step failed, 4 no GPU.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
maya=$top/build/bin/maya
w=$top/build/tests/workloads
out=${1:-gpu-check-$(date +%Y%m%d-%H%M%S)}
limit=${GPU_CHECK_TIMEOUT:-300}
[ -x "$maya" ] && [ -x "$w/minigpt" ] || { echo "gpu-check: build first (make)" >&2; exit 1; }
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
log=$out/gpu-check.log
: > "$log"
failed=0

# The GPU, as maya profile sees it: a first profile of the smallest program.
MAYA_CHECK_RESULT=1 "$maya" profile -q --timeout "$limit" -o "$out/vector_add.prof" -- "$w/vector_add" 16777216 >> "$log" 2>&1
rc=$?
if [ $rc = 4 ]; then
    tail -3 "$log" >&2
    exit 4
fi
gpu=$(sed -n 's/^gpu=//p' "$out/vector_add.prof/run.conf" 2>/dev/null)
gpus=$(sed -n 's/^gpu_count=//p' "$out/vector_add.prof/run.conf" 2>/dev/null)
[ -n "$gpu" ] && [ -n "$gpus" ] || { echo "gpu-check: maya profile failed; see $log" >&2; exit 1; }
echo "gpu-check: $gpus x $gpu; results in $out" | tee -a "$log"

# check NAME NPROC CMD...: profile, predict, compare.
check() {
    local name=$1 n=$2
    shift 2
    if [ "$n" -gt "$gpus" ]; then
        echo "$name: skipped (needs $n GPUs)" >> "$out/summary.txt"
        return
    fi
    local prof=$out/$name.prof run=$out/$name.run
    if [ ! -d "$prof" ]; then
        echo "== maya profile $name" >> "$log"
        "$maya" profile -q --timeout "$limit" -n "$n" -o "$prof" -- "$@" >> "$log" 2>&1 ||
            { echo "$name: maya profile failed (exit $?)" >> "$out/summary.txt"; failed=1; return; }
    fi
    echo "== maya run $name" >> "$log"
    "$maya" run -q --timeout "$limit" -g "${gpu}x$gpus" -n "$n" -o "$run" -- "$@" >> "$log" 2>&1 ||
        { echo "$name: maya run failed (exit $?)" >> "$out/summary.txt"; failed=1; return; }
    "$maya" profile -q --compare "$prof" "$run" >> "$log" 2>&1 ||
        { echo "$name: maya profile --compare failed" >> "$out/summary.txt"; failed=1; return; }
    "$maya" profile --export "$prof" --out "$out/tables/$name" >> "$log" 2>&1 || failed=1
    python3 - "$name" "$run/compare.json" >> "$out/summary.txt" <<'PY'
import json, sys
name, c = sys.argv[1], json.load(open(sys.argv[2]))
ms = lambda s: "%.3f ms" % (s * 1e3) if s else "-"
print("%s: measured %s, predicted %s (%+.1f%%), predicted with measured op times %s; %d of %d ops matched"
      % (name, ms(c["measured_iteration_time_s"]), ms(c["predicted_iteration_time_s"]),
         c["iteration_time_error_pct"] or 0, ms(c["predicted_with_measured_durations_s"]),
         c["matched_ops"], c["device_ops"]))
for f, v in sorted(c["families"].items(), key=lambda kv: -kv[1]["measured_s"]):
    print("    %-14s %6d ops  measured %10.3f ms  predicted %10.3f ms  MAPE %7.1f%%"
          % (f, v["ops"], v["measured_s"] * 1e3, v["predicted_s"] * 1e3, v["mape_pct"]))
PY
}

: > "$out/summary.txt"
mkdir -p "$out/tables"
check vector_add 1 "$w/vector_add" 16777216
check gemm_cublas 1 "$w/gemm_cublas"
check gemm_lt 1 "$w/gemm_lt"
check streams_events 1 "$w/streams_events"
check minigpt_1 1 "$w/minigpt" --iters 5
check nccl_colls 2 "$w/nccl_colls"
check minigpt_tp2pp2 4 "$w/minigpt" --tp 2 --pp 2 --iters 5
check minigpt_tp2pp2dp2 8 "$w/minigpt" --tp 2 --pp 2 --iters 5
echo >> "$out/summary.txt"
echo "training tables: $out/tables/*/ (maya-est-train --data estimator/data --data DIR --accuracy)" >> "$out/summary.txt"
cat "$out/summary.txt"
exit $failed
