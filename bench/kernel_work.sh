#!/usr/bin/env bash
# What reading kernels' work from their SASS costs a rank
# (docs/kernel-cost.md), on tests/workloads/kernel_work.cu's six kernels, from
# whole traced runs against MAYA_KERNEL_WORK=0 (medians of wall times):
#   kwork_sass_cold_ms_per_kernel  SASS through nvdisasm, empty cache
#   kwork_sass_warm_ms_per_kernel  SASS from the cache (below a millisecond the
#                                  runs' own noise is of its size)
# Reading PTX is timed in the process, by kwork_bench (kwork_ptx_analysis_*:
# the runs' noise exceeded it here, and their difference came out negative).
# Per launch, see emu_bench (emu_launch_ns_median against emu_nowork_...).
set -eu
build=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$build/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH=$build/lib/maya${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} RANK=0
w=$build/tests/workloads
[ -x "$w/kernel_work" ] || { echo "kwork_bench=skipped (no $w/kernel_work)"; exit 0; }

# once PROGRAM ENV...: wall microseconds of one traced run
once() {
    local prog=$1 t0 t1
    shift
    rm -rf "$tmp/t"
    t0=$(date +%s%N)
    env "$@" MAYA_TRACE_DIR="$tmp/t" "$prog" 64 > /dev/null
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
}

# ms PROGRAM ENV...: median wall milliseconds of 5 traced runs
ms() {
    local i
    for i in 1 2 3 4 5; do
        once "$@"
    done | sort -n | sed -n 3p | awk '{ printf "%.3f\n", $1 / 1000 }'
}
nvd=${MAYA_NVDISASM:-$top/.tools/nvdisasm/nvidia/cu13/bin/nvdisasm}
if [ -x "$w/kernel_work_sass" ] && [ -x "$nvd" ]; then
    off=$(ms "$w/kernel_work_sass" MAYA_KERNEL_WORK=0)
    # each run with an empty cache of its own: median of 3
    cold=$(for i in 1 2 3; do once "$w/kernel_work_sass" MAYA_NVDISASM="$nvd" MAYA_CACHE_DIR="$tmp/c$i"; done |
        sort -n | sed -n 2p | awk '{ printf "%.3f\n", $1 / 1000 }')
    rm -rf "$tmp/c"
    env MAYA_NVDISASM="$nvd" MAYA_CACHE_DIR="$tmp/c" MAYA_TRACE_DIR="$tmp/t0" "$w/kernel_work_sass" 64 > /dev/null
    warm=$(ms "$w/kernel_work_sass" MAYA_NVDISASM="$nvd" MAYA_CACHE_DIR="$tmp/c")
    awk -v a="$cold" -v b="$off" 'BEGIN { printf "kwork_sass_cold_ms_per_kernel=%.3f\n", (a - b) / 6 }'
    awk -v a="$warm" -v b="$off" 'BEGIN { printf "kwork_sass_warm_ms_per_kernel=%.3f\n", (a - b) / 6 }'
else
    echo "kwork_sass_bench=skipped (no nvdisasm: scripts/nvdisasm.sh)"
fi
