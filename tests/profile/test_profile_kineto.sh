#!/usr/bin/env bash
# maya profile --compare against PyTorch profiler (Kineto) traces: a real
# run of the GPT workload under maya (tensor parallel on 2 GPUs: cuBLASLt
# GEMMs, NCCL all-reduces, copies, memsets, kernels), and Kineto-format
# traces of it with known measured durations (make_kineto.py writes them in
# torch.profiler's structure and naming from maya's timeline: no GPU here).
# Every op matches; with the durations as predicted the error is nil; with
# GEMMs 1.25x and rank 1 3x slower, the per-family errors are the known
# ones and rank 1 comes first as the straggler. Bad traces are refused.
. "$MAYA_TOP/tests/lib.sh"

# the run the traces are made from takes its host gaps on the cpu clock: a
# rank descheduled on a loaded machine would otherwise wait for its peer in
# the collectives, and those waits are in the traces' measured times
d=$TEST_TMP/run
MAYA_HOST_CLOCK=cpu "$MAYA" run -q --timeline full -g h100x2 -o "$d" -- "$WORKLOADS/minigpt" --tp 2 --iters 3 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run minigpt failed: $(tail -20 "$TEST_TMP/out")"
gen() { python3 "$MAYA_TOP/tests/profile/make_kineto.py" "$d/timeline.json" "$@" || fail "make_kineto.py failed"; }

# the durations as predicted: nothing differs but for the collectives
# (the timeline's include waiting for peers, as a profiler's NCCL kernels do)
gen "$TEST_TMP/same"
"$MAYA" profile --compare "$TEST_TMP/same" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare with Kineto traces failed: $(cat "$TEST_TMP/out")"
expect_grep "against 2 PyTorch profiler traces" "$TEST_TMP/out"
python3 - "$d/compare.json" <<'PY' || fail "compare.json is wrong (above)"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["source"] == "kineto", c["source"]
assert c["matched_ops"] == c["predicted_device_ops"] == c["measured_device_ops"] > 1000, c
f = c["families"]
for fam in ("gemm", "kernel", "copy", "memset"):
    assert abs(f[fam]["error_pct"]) < 0.5 and f[fam]["mape_pct"] < 0.5, (fam, f[fam])
assert "allreduce" in f and f["allreduce"]["ops"] > 100, f
assert c["note"] is None, c["note"]
PY
expect_no_grep "^note: " "$d/compare.txt"
cp "$d/compare.json" "$TEST_TMP/same.compare.json"

# a straggler alone: rank 1's measured time is 3x what it was, rank 0's
# is what it was (its collectives' waits are in both)
gen "$TEST_TMP/straggler" --slow-rank 1 --slow-factor 3
"$MAYA" profile -q --compare "$TEST_TMP/straggler" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare with a straggler failed: $(cat "$TEST_TMP/out")"
python3 - "$TEST_TMP/same.compare.json" "$d/compare.json" <<'PY' || fail "the straggler's measured time is wrong (above)"
import json, sys
same, slow = ({r["rank"]: r["measured_s"] for r in json.load(open(f))["ranks"]} for f in sys.argv[1:])
assert abs(slow[1] - 3 * same[1]) <= 1e-3 * slow[1], (same, slow)
assert abs(slow[0] - same[0]) <= 1e-3 * slow[0], (same, slow)
PY

# split-K GEMMs: two kernels on the GPU, one op for maya (the reduction is
# folded into its GEMM): everything still matches, the GEMM times whole
gen "$TEST_TMP/splitk" --split-k
"$MAYA" profile -q --compare "$TEST_TMP/splitk" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare with split-K GEMMs failed: $(cat "$TEST_TMP/out")"
python3 - "$d/compare.json" "$TEST_TMP/splitk" <<'PY' || fail "split-K GEMMs are not matched whole (above)"
import json, os, sys
c = json.load(open(sys.argv[1]))
kernels = sum(1 for f in os.listdir(sys.argv[2]) for e in json.load(open(os.path.join(sys.argv[2], f)))["traceEvents"]
              if "splitKreduce" in e.get("name", ""))
assert kernels > 100, kernels
assert c["matched_ops"] == c["predicted_device_ops"] == c["measured_device_ops"], c
g = c["families"]["gemm"]
assert abs(g["error_pct"]) < 0.5 and g["mape_pct"] < 0.5, g
PY

# a profiler that recorded a third of the steps: said, not hidden
python3 - "$TEST_TMP/same" "$TEST_TMP/part" <<'PY' || fail "could not cut the traces"
import json, os, sys
os.makedirs(sys.argv[2])
for f in os.listdir(sys.argv[1]):
    t = json.load(open(os.path.join(sys.argv[1], f)))
    dev = [e for e in t["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    drop = {id(e) for e in dev[len(dev) // 3:]}
    t["traceEvents"] = [e for e in t["traceEvents"] if id(e) not in drop]
    json.dump(t, open(os.path.join(sys.argv[2], f), "w"))
PY
"$MAYA" profile -q --compare "$TEST_TMP/part" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare with part of the steps failed: $(cat "$TEST_TMP/out")"
expect_grep "^note: fewer than half of the ops matched" "$d/compare.txt"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); assert c["note"].startswith("fewer than half"), c' \
    "$d/compare.json" || fail "compare.json has no note on the ops left unmatched"

# GEMMs 1.25x slower everywhere, and rank 1 3x slower in everything (so
# much that it stands out whatever the collectives' waits: in the timeline
# the traces are made from, they vary from run to run with the host clock)
gen "$TEST_TMP/slow" --gemm-factor 1.25 --slow-rank 1 --slow-factor 3
"$MAYA" profile -q --compare "$TEST_TMP/slow" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare failed: $(cat "$TEST_TMP/out")"
python3 - "$d/compare.json" <<'PY' || fail "compare.json is wrong (above)"
import json, sys
c = json.load(open(sys.argv[1]))
f = c["families"]
# per op: rank 0 kernels 0 %, rank 1 |1 - 3| / 3; GEMMs 0.25 / 1.25 and 2.75 / 3.75
assert abs(f["kernel"]["mape_pct"] - 100 / 3) < 0.5, f["kernel"]
assert abs(f["gemm"]["mape_pct"] - 100 * (0.2 + 2.75 / 3.75) / 2) < 0.5, f["gemm"]
assert [r["rank"] for r in c["ranks"]] == [1, 0], c["ranks"]
# the computing op that differs most is the straggler's (of all ops, a
# collective of rank 0 may come first: its time includes its wait for rank
# 1, which the host clock of the run the traces are made from decides; a
# rank-0 all-reduce waiting 0.4 ms did on a loaded machine)
own = c["most_different_compute_ops"]
assert own and own[0]["rank"] == 1, own[:3]
assert all(o["family"] not in ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "sendrecv")
           for o in own), own
assert own[0] in c["most_different_ops"] or len(c["most_different_ops"]) == 50, c["most_different_ops"][:3]
PY
expect_grep "^the computing ops that differ most" "$d/compare.txt"
expect_grep "^ranks, furthest from the prediction first" "$d/compare.txt"
expect_grep "^       1 " "$d/compare.txt"

# gzip'd traces (tensorboard_trace_handler(use_gzip=True)) read as plain ones
mkdir -p "$TEST_TMP/gz"
for f in "$TEST_TMP"/same/*.json; do gzip -c "$f" > "$TEST_TMP/gz/$(basename "$f").gz"; done
"$MAYA" profile -q --compare "$TEST_TMP/gz" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare with gzip'd traces failed: $(cat "$TEST_TMP/out")"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))
assert len(c["traces"]) == 2 and c["traces"][0].endswith(".json.gz"), c["traces"]
assert c["matched_ops"] == c["predicted_device_ops"] == c["measured_device_ops"], c' "$d/compare.json" ||
    fail "gzip'd traces were not compared whole"

# a comma-separated list works as the directory does
"$MAYA" profile -q --compare "$(ls "$TEST_TMP"/slow/*.json | paste -sd,)" "$d" > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile --compare with a list of traces failed: $(cat "$TEST_TMP/out")"

# bad traces
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}' > "$TEST_TMP/cut.json"
"$MAYA" profile -q --compare "$TEST_TMP/cut.json" "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status for a cut trace"
expect_grep "cut.json: not a Chrome trace: expected ',' or ']' in traceEvents" "$TEST_TMP/out"
echo '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}' > "$TEST_TMP/cpu.json"
"$MAYA" profile -q --compare "$TEST_TMP/cpu.json" "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status for a trace without GPU events"
expect_grep "no kernel, gpu_memcpy or gpu_memset events" "$TEST_TMP/out"
sed 's/"rank": 1,/"rank": 5,/' "$TEST_TMP"/slow/worker1.*.json > "$TEST_TMP/r5.json"
"$MAYA" profile -q --compare "$TEST_TMP/r5.json" "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status for a rank the run does not have"
expect_grep "is rank 5's trace, and .* has no rank 5" "$TEST_TMP/out"
exit 0
