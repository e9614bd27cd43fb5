#!/usr/bin/env bash
# maya run on the bundled GPT training workload (tests/workloads/minigpt.cu:
# tensor parallel 2 x 1F1B pipeline 2 x data parallel 2 on 8 emulated H100s,
# 4 iterations): the iterations are found without a marker, the report and
# timelines cover the pipeline's send/recv and the DP all-reduces on their own
# stream, and every rank's memory is reported.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/mg
"$MAYA" run -q -g h100x8 -o "$d" -- "$WORKLOADS/minigpt" --tp 2 --pp 2 --iters 4 --gemm kernel \
    > "$TEST_TMP/out" 2>&1 || fail "maya run minigpt failed: $(tail -30 "$TEST_TMP/out")"
python3 - "$d/report.json" <<'PY' || fail "report.json is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["simulated"] and r["workload_ok"] and r["world_size"] == 8, r
assert len(r["iterations"]) == 4, r["iterations"]   # found from the repeating ops
assert r["iteration_marker"] is None
it = [x["time_s"] for x in r["iterations"]]
steady = sorted(it[1:])[1]                           # median of iterations 2..4
assert abs(r["iteration_time_s"] - steady) < 1e-12, (r["iteration_time_s"], it)
# no iteration is shorter than its compute, the same kernels every iteration (host
# gaps, measured on shared CPUs, make the rest vary)
assert all(t >= r["compute_time_s"] for t in it[1:]), (it, r["compute_time_s"])
assert r["compute_time_s"] > 0 and r["communication_time_s"] > 0, r
assert r["compute_time_s"] + r["communication_time_s"] > 0.3 * r["iteration_time_s"], r
assert all(x["peak_memory_bytes"] > 0 and x["exit_status"] == 0 for x in r["ranks"]), r["ranks"]
assert r["oom"] is False and r["unsupported_calls"] == {}, r
PY
python3 - "$d/timeline.json" <<'PY' || fail "timeline.json is wrong (above)"
import json, sys
t = json.load(open(sys.argv[1]))
names = {}
for e in t["traceEvents"]:
    if e["ph"] == "X" and e["tid"] > 0:
        names.setdefault(e["name"], set()).add(e["pid"])
assert names.get("ncclSend") == set(range(8)) and names.get("ncclRecv") == set(range(8)), names.keys()
assert names.get("ncclAllReduce") == set(range(8)), names.keys()
PY
python3 -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])" "$d/timeline.svg" ||
    fail "timeline.svg is not well-formed"
expect_grep "^found      4 iterations from the repeating sequence of ops" "$d/report.txt"
exit 0
