#!/usr/bin/env bash
# The reference case of DESIGN.md end to end: a rank trace built from text,
# durations from an oracle file, `maya report DIR` collating, estimating,
# simulating and writing every report file. The arithmetic is in
# tests/sim/test_sim_fig6.c (host cost 1 ms per call, gaps of 2 ms):
# Sgemm 1-15, AllReduce 4-24, stall of stream 0 15-24, Sgemm 24-34,
# AllReduce 24-40; the job takes 40 ms.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/fig6
mkdir -p "$d/traces"
cat > "$TEST_TMP/fig6.txt" <<'TXT'
header rank=0 world_size=1
stream id=1 dev=0
stream id=2 dev=0
comm id=0x66 rank=0 nranks=1
gemm      t=0ms..0.5ms     stream=1 api=cublasSgemm_v2 m=4096 n=4096 k=4096
coll      t=2.5ms..3ms     stream=2 op=allreduce comm=0x66 cseq=0 rank=0 nranks=1 count=64M
event_record t=5ms..5.5ms  stream=2 event=7 version=1
stream_wait  t=7.5ms..8ms  stream=1 event=7 version=1
gemm      t=10ms..10.5ms   stream=1 api=cublasSgemm_v2 m=4096 n=4096 k=2048
coll      t=12.5ms..13ms   stream=2 op=allreduce comm=0x66 cseq=1 rank=0 nranks=1 count=32M
TXT
"$MAYA" trace build "$TEST_TMP/fig6.txt" "$d/traces/rank-0.mtrace" || fail "maya trace build failed"
cat > "$d/run.conf" <<'CONF'
version=1
launcher=test
gpu=H100-SXM
gpu_count=1
nprocs=1
command=fig6
rank.0.exit=0
CONF
cat > "$TEST_TMP/oracle.txt" <<'ORA'
name=cublasSgemm_v2 nth=1 device=14ms
name=cublasSgemm_v2 nth=2 device=10ms
name=ncclAllReduce  nth=1 device=20ms
name=ncclAllReduce  nth=2 device=16ms
name=* host=1ms
unmatched=error
ORA
"$MAYA" report --oracle "$TEST_TMP/oracle.txt" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report failed: $(cat "$TEST_TMP/out")"
for f in report.txt report.json timeline.json timeline.svg job.mtrace; do
    [ -s "$d/$f" ] || fail "maya report left no $f"
done
expect_grep "report in $d/report.txt" "$TEST_TMP/out"
expect_grep "^iteration  40.000 ms \(the whole run" "$d/report.txt"
expect_grep "^estimator  oracle" "$d/report.txt"

# report.json: the numbers, and that it is JSON
python3 - "$d/report.json" <<'PY' || fail "report.json is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
def near(k, v):
    assert abs(r[k] - v) < 1e-9, (k, r[k], v)
near("iteration_time_s", 0.040)
near("compute_time_s", 0.024)       # 1-15 and 24-34
near("communication_time_s", 0.036) # 4-40
near("exposed_communication_time_s", 0.015)
near("idle_time_s", 0.001)          # 0-1
assert r["gpu"] == "H100-SXM" and r["world_size"] == 1 and r["nodes"] == 1, r
assert r["iterations"] == [{"index": 1, "time_s": 0.04, "end_s": 0.04, "steady": True, "left_out": None}], r["iterations"]
b = r["breakdown"]  # the whole run as its one iteration, its classes adding up to it
assert abs(b["iteration_s"] - 0.040) < 1e-9 and b["iterations"] == 1, b
assert abs(b["compute_s"] + b["exposed_communication_s"] + b["exposed_copy_s"] + b["idle_s"] - b["iteration_s"]) < 1e-9, b
assert r["oom"] is False and r["simulated"] is True and r["workload_ok"] is True
assert r["ranks"][0]["rank"] == 0 and r["ranks"][0]["exit_status"] == 0, r["ranks"]
assert r["unsupported_calls"] == {}
# 2mnk FLOPs at FP32 over the GPU's peak, during 40 ms
assert r["mfu"] is not None and 0 < r["mfu"] < 1, r["mfu"]
PY

# timeline.json: Chrome trace events with the hand-computed times (us)
python3 - "$d/timeline.json" <<'PY' || fail "timeline.json is wrong (above)"
import json, sys
t = json.load(open(sys.argv[1]))
ev = [e for e in t["traceEvents"] if e["ph"] == "X"]
dev = sorted((e["tid"], e["ts"], e["dur"], e["name"]) for e in ev if e["tid"] != 0)
want = [(1, 1000.0, 14000.0, "cublasSgemm_v2"), (1, 24000.0, 10000.0, "cublasSgemm_v2"),
        (2, 4000.0, 20000.0, "ncclAllReduce"), (2, 24000.0, 16000.0, "ncclAllReduce")]
assert dev == want, dev
host = [e for e in ev if e["tid"] == 0]
assert len(host) == 6 and host[0]["ts"] == 0 and host[0]["dur"] == 1000.0, host
names = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"host", "stream 1 (device 0)", "stream 2 (device 0)"} <= names, names
PY

# timeline.svg: well-formed, one lane per stream, the four ops as bars
python3 - "$d/timeline.svg" <<'PY' || fail "timeline.svg is wrong (above)"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
titles = [r.find(ns + "title").text for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
assert sorted(titles) == ["cublasSgemm_v2: 10 ms", "cublasSgemm_v2: 14 ms",
                          "ncclAllReduce: 16 ms", "ncclAllReduce: 20 ms"], titles
labels = [t.text for t in root.iter(ns + "text") if t.text and t.text.startswith("rank ")]
assert labels == ["rank 0 stream 1 (dev 0)", "rank 0 stream 2 (dev 0)"], labels
PY

# the job trace prints
dump "$d/job.mtrace" > "$TEST_TMP/dump"
expect_grep "^header .*kind=job" "$TEST_TMP/dump"
expect_grep "^job          world_size=1 ranks=1 nodes=1 .*collectives=2" "$TEST_TMP/dump"
expect_grep "^rank_begin   rank=0 " "$TEST_TMP/dump"
expect_count 2 "^gemm " "$TEST_TMP/dump"

# bad options: clear errors, exit 2
"$MAYA" report --estimator bogus "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status with an unknown model"
expect_grep "bogus" "$TEST_TMP/out"
"$MAYA" report --estimator oracle "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status of oracle without a file"
expect_grep "give its durations with --oracle FILE" "$TEST_TMP/out"
"$MAYA" report "$TEST_TMP/nowhere" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status without a run directory"
expect_grep "cannot open $TEST_TMP/nowhere/run.conf" "$TEST_TMP/out"
# an iteration marker that names nothing: the report says why nothing was simulated
"$MAYA" report --oracle "$TEST_TMP/oracle.txt" --iteration-marker nothing_like_it "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status when the simulation cannot finish"
expect_grep "NOT SIMULATED: simulation: iteration marker \"nothing_like_it\" matches no op" "$d/report.txt"
grep -q '"simulated": false' "$d/report.json" || fail "report.json does not say simulated: false"
expect_grep "^options    --iteration-marker nothing_like_it .*not kept in run.conf: the report did not finish" "$d/report.txt"
expect_grep "^iteration_marker=$" "$d/run.conf"

# options given to maya report are kept in run.conf once the report is whole,
# and a later plain maya report uses them (and says so)
expect_grep "^oracle=$TEST_TMP/oracle.txt$" "$d/run.conf"
"$MAYA" report -q --estimator analytical "$d" > "$TEST_TMP/out" 2>&1 || fail "maya report --estimator analytical failed"
expect_grep "^options    --estimator analytical \(run.conf: default\); given to maya report and kept in run.conf" "$d/report.txt"
expect_grep "^estimator=analytical$" "$d/run.conf"
"$MAYA" report -q "$d" > "$TEST_TMP/out" 2>&1 || fail "a plain maya report after --estimator failed"
expect_grep "^estimator  analytical" "$d/report.txt"
expect_grep "^options    as run.conf records them$" "$d/report.txt"
grep -q '"options": "as run.conf records them"' "$d/report.json" || fail "report.json does not say which options served"
exit 0
