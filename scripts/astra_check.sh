#!/usr/bin/env bash
# make astra-check: ASTRA-sim's analytical backend on a small job maya exported
# as Chakra traces, against maya's own prediction of the same job. A test
# machine fetches nothing: the ASTRA-sim sources must be there beforehand, in
# ASTRA_SIM_SRC (default .deps/astra-sim), with their submodules (README,
# "Chakra traces and ASTRA-sim"); without them this says how to get them and
# exits 0. Prints name=value lines: astra_sim_time_s, maya_makespan_s, ratio.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
src=${ASTRA_SIM_SRC:-$top/.deps/astra-sim}
bin=$src/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Aware
maya=$top/build/bin/maya
if [ ! -f "$src/build/astra_analytical/build.sh" ] || [ ! -f "$src/extern/graph_frontend/chakra/schema/protobuf/et_def.proto" ]; then
    cat <<MSG
astra-check: skipped: no ASTRA-sim sources with their submodules in $src.
  Get them on a machine with network access, then copy the tree here (or set ASTRA_SIM_SRC):
    git clone --recursive https://github.com/astra-sim/astra-sim.git $src
    git -C $src checkout \$(git -C $src rev-list -1 --before=2025-09-01 HEAD)
    git -C $src submodule update --init --recursive
  (its August 2025 tree builds offline in about 25 minutes on 2 cores; at HEAD its CMake
  downloads yaml-cpp at configure time). Needs cmake, protobuf-compiler, libprotobuf-dev.
MSG
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "astra-check: building ASTRA-sim's analytical backend in $src (about 25 minutes on 2 cores)" >&2
    (cd "$src" && ./build/astra_analytical/build.sh -t congestion_aware) >&2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-astra.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A small job of what ASTRA-sim models natively: tensor-parallel all-reduces
# and pipeline send/recv between 4 GPUs of one H100 node.
"$maya" run -q -g h100x4 -o "$tmp/run" -- "$top/build/tests/workloads/minigpt" --tp 2 --pp 2 --iters 3 \
    --gemm kernel >&2
"$maya" trace export --chakra "$tmp/et" "$tmp/run" >&2
# The HGX-H100 node as ASTRA-sim's own validated example describes it.
cat > "$tmp/net.yml" <<'YML'
topology: [ Switch ]
npus_count: [ 4 ]
bandwidth: [ 400.0 ]
latency: [ 936.25 ]
YML
cat > "$tmp/sys.json" <<'JSON'
{ "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
  "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
  "local-mem-bw": 3350, "boost-mode": 0 }
JSON
echo '{ "memory-type": "NO_MEMORY_EXPANSION" }' > "$tmp/mem.json"
# (in $tmp: ASTRA-sim writes a log/ folder where it runs)
(cd "$tmp" && "$bin" --workload-configuration="$tmp/et/et" --comm-group-configuration="$tmp/et/et.comm_group.json" \
    --system-configuration="$tmp/sys.json" --remote-memory-configuration="$tmp/mem.json" \
    --network-configuration="$tmp/net.yml") > "$tmp/astra.out" 2>&1 || {
    tail -20 "$tmp/astra.out" >&2
    echo "astra-check: ASTRA-sim failed on maya's traces (above)" >&2
    exit 1
}
python3 - "$tmp/astra.out" "$tmp/run/report.json" <<'PY'
import json, re, sys
cycles = [int(m.group(1)) for m in re.finditer(r"sys\[\d+\] finished, (\d+) cycles", open(sys.argv[1]).read())]
if not cycles:
    sys.exit("astra-check: ASTRA-sim printed no 'sys[N] finished' line")
astra = max(cycles) / 1e9  # its cycles are ns
maya = json.load(open(sys.argv[2]))["makespan_s"]
print(f"astra_sim_time_s={astra:.6f}")
print(f"maya_makespan_s={maya:.6f}")
print(f"astra_over_maya={astra / maya:.3f}")
PY
