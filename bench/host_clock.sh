#!/usr/bin/env bash
# How the trace's host clock (MAYA_HOST_CLOCK, docs/trace-format.md) holds
# up when the emulated ranks share few CPUs or the machine is busy: the
# predicted steady iteration time (report.json) measured with the wall, the
# active and the cpu clock, HOST_CLOCK_BENCH_RUNS runs each (default 3), as
# mean and standard deviation, and rank 0's mean host gap before each GEMM
# in the minigpt runs with --host-work (the program's own CPU work there:
# the reference is the single rank's on an otherwise idle machine).
#
#   gpt1   1 rank, minigpt --host-work 20 (host-bound)
#   gpt8   8 ranks (-g h100x8, --tp 2 --pp 2)
#   gpt8hw 8 ranks with --host-work 20
#   torch1 1 rank, PyTorch: tests/workloads/torch/train_ddp_gpt.py 8 (a
#          small GPT, host-bound; skipped without .venv)
#   alone: nothing else started (8 ranks still share this machine's CPUs)
#   load:  as many `yes > /dev/null` as CPUs compete meanwhile
#
# HOST_CLOCK_BENCH_JOBS (default "gpt1 gpt8 gpt8hw torch1") picks the jobs.
#
# Prints host_clock_<job>_<case>_<clock>_{iter_ms_mean,iter_ms_sd,gemm_gap_us}=V.
set -eu
top=${MAYA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$top/build
maya=$build/bin/maya
gpt=$build/tests/workloads/minigpt
py=$top/.venv/bin/python
train=$top/tests/workloads/torch/train_ddp_gpt.py
runs=${HOST_CLOCK_BENCH_RUNS:-3}
jobs=" ${HOST_CLOCK_BENCH_JOBS:-gpt1 gpt8 gpt8hw torch1} "
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-clock-bench.XXXXXX")
hogs=()
stop_hogs() {
    for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${hogs[@]}"; do wait "$p" 2>/dev/null || true; done
    hogs=()
}
trap 'stop_hogs; rm -rf "$tmp"' EXIT

# stats NAME DIR...: the figures of these run directories.
stats() {
    local name=$1
    shift
    python3 - "$name" "$maya" "$@" <<'EOF'
import json, re, statistics, subprocess, sys
name, maya, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
its, gaps = [], []
call = re.compile(r"t=(\d+)\.\.(\d+) .*api=(\S+)")
for d in dirs:
    its.append(json.load(open(d + "/report.json"))["iteration_time_s"] * 1e3)
    if "hw" not in name and not name.startswith("gpt1"):
        continue
    dump = subprocess.run([maya, "trace", "dump", d + "/traces/rank-0.mtrace"], capture_output=True,
                          text=True, check=True).stdout
    prev = None
    for line in dump.splitlines():
        m = call.search(line)
        if not m:
            continue
        if m.group(3) == "cublasLtMatmulDescCreate" and prev is not None:
            gaps.append((int(m.group(1)) - prev) / 1e3)
        prev = int(m.group(2))
print(f"host_clock_{name}_iter_ms_mean={statistics.mean(its):.3f}")
print(f"host_clock_{name}_iter_ms_sd={statistics.stdev(its) if len(its) > 1 else 0:.3f}")
if gaps:
    # the steady half: the first iterations also pay for first-use work
    gaps = gaps[len(gaps) // 2:]
    print(f"host_clock_{name}_gemm_gap_us={statistics.mean(gaps):.1f}")
EOF
}

# measure JOB CASE CLOCK GPUS COMMAND...: RUNS runs, then their figures.
measure() {
    local job=$1 case=$2 clock=$3 gpus=$4 i dirs=()
    shift 4
    [[ $jobs == *" $job "* ]] || return 0
    for ((i = 0; i < runs; i++)); do
        local d=$tmp/$job-$case-$clock-$i
        MAYA_HOST_CLOCK=$clock "$maya" run -q -g "$gpus" -o "$d" -- "$@" > "$d.out" 2>&1 ||
            { cat "$d.out" >&2; exit 1; }
        dirs+=("$d")
    done
    stats "${job}_${case}_$clock" "${dirs[@]}"
}

all() {
    local case=$1
    for clock in wall active cpu; do
        measure gpt1 "$case" "$clock" h100x1 "$gpt" --iters 6 --host-work 20
        measure gpt8 "$case" "$clock" h100x8 "$gpt" --iters 6 --tp 2 --pp 2
        measure gpt8hw "$case" "$clock" h100x8 "$gpt" --iters 6 --tp 2 --pp 2 --host-work 20
        if [ -x "$py" ]; then
            measure torch1 "$case" "$clock" h100x1 "$py" "$train" 8
        fi
    done
}

all alone
for ((i = 0; i < $(nproc); i++)); do
    yes > /dev/null &
    hogs+=($!)
done
all load
stop_hogs
