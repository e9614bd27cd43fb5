#!/usr/bin/env bash
# Cost of the emulated NCCL: 8 ranks (processes) of nccl_bench under the
# emulator on this host; prints rank 0's name=value lines (microseconds of
# wall-clock time per call).
set -eu
top=${MAYA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$top/build
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-nccl-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=8
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
for ((r = 0; r < n; r++)); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port MAYA_TRACE_DIR=$tmp \
        LD_LIBRARY_PATH=$build/lib/maya "$build/tests/workloads/nccl_bench" --iters 200 > "$tmp/out.$r" 2>&1 &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] || { cat "$tmp"/out.* >&2; exit 1; }
cat "$tmp/out.0"
