#!/usr/bin/env bash
# What reading kernels' work from their SASS costs a rank (docs/kernel-cost.md),
# timed in the process by bench/kwork_first_launch.cu (tests/workloads/
# kernel_work.cu's six kernels, SASS only): each kernel's first launch less
# its second, the median over the kernels, the median of 3 runs:
#   kwork_sass_cold_ms_per_kernel  SASS through nvdisasm, an empty cache each run
#   kwork_sass_warm_ms_per_kernel  SASS from the cache
#   kwork_off_ms_per_kernel        MAYA_KERNEL_WORK=0: the first launch's other
#                                  costs (the kernel's layout), which both include
# Reading PTX is timed in the process too, by kwork_bench
# (kwork_ptx_analysis_*). Per launch, see emu_bench (emu_launch_ns_median).
set -eu
build=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$build/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH=$build/lib/maya${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} RANK=0
prog=$build/bench/cuda/kwork_first_launch
[ -x "$prog" ] || { echo "kwork_bench=skipped (no $prog)"; exit 0; }

# first ENV...: the program's median first-launch cost per kernel, in ms
first() {
    rm -rf "$tmp/t"
    env "$@" MAYA_TRACE_DIR="$tmp/t" "$prog" | sed -n 's/^first_launch_ms median=\([0-9.-]*\) .*/\1/p'
}
# median3 CMD...: the middle of three runs of CMD
median3() {
    local i
    for i in 1 2 3; do
        "$@"
    done | sort -g | sed -n 2p
}
cold_run() {
    local c
    c=$(mktemp -d "$tmp/cache.XXXXXX")
    first MAYA_NVDISASM="$nvd" MAYA_CACHE_DIR="$c"
}
nvd=${MAYA_NVDISASM:-$top/.tools/nvdisasm/nvidia/cu13/bin/nvdisasm}
if [ -x "$nvd" ]; then
    echo "kwork_sass_cold_ms_per_kernel=$(median3 cold_run)"
    first MAYA_NVDISASM="$nvd" MAYA_CACHE_DIR="$tmp/warm" > /dev/null # fills the cache
    echo "kwork_sass_warm_ms_per_kernel=$(median3 first MAYA_NVDISASM="$nvd" MAYA_CACHE_DIR="$tmp/warm")"
else
    echo "kwork_sass_bench=skipped (no nvdisasm: scripts/nvdisasm.sh)"
fi
echo "kwork_off_ms_per_kernel=$(median3 first MAYA_KERNEL_WORK=0)"
