#!/usr/bin/env bash
# maya report on GPT-shaped jobs of many ranks (traces from the benchmarks'
# generator, bench/gpt_traces.c: Megatron's TP x PP x DP layout, 1F1B,
# bucketed DP all-reduce): the data-parallel replicas and each stage's
# tensor-parallel ranks are folded and the
# report, iterations and per-op times equal those of --fold no; --slow-rank
# replays the straggler's replica on its own and slows the job; the
# timelines are bounded by default (ranks, iterations, 2,000,000 events),
# full on request, none if asked, with the sizes the report states; progress
# shows on a terminal only; Ctrl-C and SIGTERM stop the pipeline with 130 /
# 143 and leave no file behind.
. "$MAYA_TOP/tests/lib.sh"

GEN=$MAYA_BUILD/tests/tools/gpt_traces
# rundir DIR NRANKS TP PP DP [KEY=VALUE...]: a run directory of generated traces
rundir() {
    local dir=$1 n=$2
    shift 2
    mkdir -p "$dir/traces"
    {
        printf 'version=1\nlauncher=test\ngpu=H100-SXM\ngpu_count=%d\nnprocs=%d\ncommand=gpt\n' "$n" "$n"
        for ((i = 0; i < n; i++)); do echo "rank.$i.exit=0"; done
    } > "$dir/run.conf"
    "$GEN" "$dir/traces" "$@" || fail "gpt_traces $* failed"
}

# 256 ranks: TP8 PP4 DP8 on 32 nodes, 3 iterations
d=$TEST_TMP/fold
rundir "$d" 256 8 4 8 layers=8 micro=4 iters=3
cp -r "$d" "$TEST_TMP/nofold"
cp -r "$d" "$TEST_TMP/slow"
cp -r "$d" "$TEST_TMP/none"
"$MAYA" report "$d" > "$TEST_TMP/out" 2>&1 || fail "maya report failed: $(tail -20 "$TEST_TMP/out")"
expect_no_grep $'\r' "$TEST_TMP/out" "progress lines went to a file that is not a terminal"
"$MAYA" report -q --fold no --timeline full "$TEST_TMP/nofold" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report --fold no failed: $(tail -20 "$TEST_TMP/out")"
"$MAYA" report -q --slow-rank 75:2 "$TEST_TMP/slow" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report --slow-rank failed: $(tail -20 "$TEST_TMP/out")"
"$MAYA" report -q --timeline none "$TEST_TMP/none" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report --timeline none failed: $(tail -20 "$TEST_TMP/out")"
python3 - "$d" "$TEST_TMP/nofold" "$TEST_TMP/slow" "$TEST_TMP/none" <<'PY' || fail "the folded report is wrong (above)"
import json, os, sys
fold, nofold, slow, none = sys.argv[1:]
a = json.load(open(fold + "/report.json"))
b = json.load(open(nofold + "/report.json"))
s = json.load(open(slow + "/report.json"))
n = json.load(open(none + "/report.json"))
# folding is exact: every figure the same
for k in ("iteration_time_s", "first_iteration_time_s", "makespan_s", "compute_time_s", "communication_time_s",
          "exposed_communication_time_s", "idle_time_s", "mfu", "peak_memory_bytes", "iterations"):
    assert a[k] == b[k], (k, a[k], b[k])
assert a["ranks"] == b["ranks"], "per-rank figures differ"
assert a["simulator"]["ops"] == b["simulator"]["ops"], (a["simulator"], b["simulator"])
# a NIC per GPU: the replicas and a stage's tensor-parallel ranks fold into one rank per stage
assert a["simulator"]["replayed_ranks"] == 4 and b["simulator"]["replayed_ranks"] == 256, (a["simulator"], b["simulator"])
assert len(a["iterations"]) == 3, a["iterations"]
# bounded: rank 0 and its pipeline's stages (ranks 0, 64, 128, 192), sizes as stated
ta, tb = a["timeline"], b["timeline"]
assert ta["view"] == "bounded" and ta["ranks"] == [0, 64, 128, 192], ta
assert ta["json_bytes"] == os.path.getsize(fold + "/timeline.json"), ta
assert ta["svg_bytes"] == os.path.getsize(fold + "/timeline.svg"), ta
assert tb["view"] == "full" and tb["ranks"] == list(range(256)), tb
assert tb["json_bytes"] == os.path.getsize(nofold + "/timeline.json") > 8 * ta["json_bytes"], (ta, tb)
# the folded timeline's ranks show what the unfolded replay gave them
def events(path):
    ev = {}
    for e in json.load(open(path))["traceEvents"]:
        if e["ph"] == "X":
            ev.setdefault(e["pid"], []).append((e["tid"], e["name"], e["ts"], e["dur"]))
    return ev
ea, eb = events(fold + "/timeline.json"), events(nofold + "/timeline.json")
assert sorted(ea) == [0, 64, 128, 192] and len(eb) == 256, (sorted(ea), len(eb))
for p in ea:
    assert ea[p] == eb[p], "rank %d's timeline differs folded and unfolded" % p
# a slow rank: its replica (ranks 72..79 and their pipeline) is replayed on its own, the job is slower
assert s["simulator"]["replayed_ranks"] == 64, s["simulator"]
assert "symmetry breaks" in s["simulator"]["fold_note"], s["simulator"]
assert s["iteration_time_s"] > a["iteration_time_s"] * 1.01, (s["iteration_time_s"], a["iteration_time_s"])
# no timeline
assert n["timeline"] == {"view": "none"}, n["timeline"]
assert not os.path.exists(none + "/timeline.json") and not os.path.exists(none + "/timeline.svg")
assert n["iteration_time_s"] == a["iteration_time_s"]
PY
for svg in "$d/timeline.svg" "$TEST_TMP/nofold/timeline.svg" "$TEST_TMP/slow/timeline.svg"; do
    python3 -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])" "$svg" || fail "$svg is not well-formed"
done
expect_eq "$(grep -c '<text [^>]*text-anchor="end"[^>]*>rank ' "$d/timeline.svg")" 12 "lanes of the bounded SVG (4 ranks x 3 streams)"
expect_grep "^replayed   4 of them: the other 252 are replicas" "$d/report.txt"
expect_grep "^timeline   4 of 256 ranks: rank 0, its pipeline's other stages, the busiest \(rank [0-9]+\); iterations 1\.\.3 of 3" "$d/report.txt"
expect_grep "^files      report.html \(open in a browser\), report.json, timeline.json \([0-9.]+ (bytes|MiB|GiB); open in ui.perfetto.dev\), timeline.svg \(" "$d/report.txt"
expect_grep "^           \([0-9]+ ranks that could fold replayed on their own, as symmetry breaks: communicator" \
    "$TEST_TMP/slow/report.txt"
expect_grep "the busiest \(rank 75\)" "$TEST_TMP/slow/report.txt"

# a bounded timeline holds at most 2,000,000 events: a 24-stage pipeline of
# 2,048 micro-batches shows its first steady iteration alone and one in
# two of its stages (about 3.5 M events in the three iterations); 8 stages
# of 4,096 (8 ranks: all shown) the first part of that iteration
long=$TEST_TMP/long
rundir "$long" 24 1 24 1 layers=24 micro=2048 iters=3
"$MAYA" report -q "$long" > "$TEST_TMP/out" 2>&1 || fail "maya report (24 stages) failed: $(tail -5 "$TEST_TMP/out")"
expect_grep "^timeline   14 of 24 ranks: rank 0, 12 of its pipeline's 22 other stages \(one in 2, and the last\), the busiest \(rank 23\); iterations 2\.\.2 of 3 \(--timeline full" "$long/report.txt"
wide=$TEST_TMP/wide
rundir "$wide" 8 1 8 1 layers=8 micro=4096 iters=3
"$MAYA" report -q "$wide" > "$TEST_TMP/out" 2>&1 || fail "maya report (8 stages) failed: $(tail -5 "$TEST_TMP/out")"
expect_grep "^timeline   all 8 ranks; iterations 2\.\.2 of 3, timeline.json its first [0-9.]+ ms \(2000000 events at most\)" "$wide/report.txt"
python3 - "$long" "$wide" <<'PY' || fail "the bounded timelines are wrong (above)"
import json, sys
for d in sys.argv[1:]:
    r = json.load(open(d + "/report.json"))
    t = json.load(open(d + "/timeline.json"))
    n = sum(e["ph"] == "X" for e in t["traceEvents"])
    assert 1000000 < n <= 2000000, (d, n)
    lo, hi = t["otherData"]["window_ns"]
    assert r["timeline"]["first_iteration"] == r["timeline"]["last_iteration"] == 2, r["timeline"]
    assert (r["timeline"]["json_ns"] > 0) == d.endswith("wide"), r["timeline"]
    if d.endswith("wide"):
        assert hi - lo == r["timeline"]["json_ns"], (lo, hi, r["timeline"])
PY

# bad values are refused before anything runs
for bad in "--timeline some" "--fold maybe" "--slow-rank x" "--slow-rank 3:0" "--slow-rank 3:-1"; do
    # shellcheck disable=SC2086
    "$MAYA" report $bad "$d" > "$TEST_TMP/out" 2>&1
    expect_eq "$?" 2 "maya report $bad"
    expect_grep "expected" "$TEST_TMP/out"
done

# on a terminal: progress; Ctrl-C (during loading) and SIGTERM (during the
# replay) stop it, exit 128 + the signal, and leave the directory's files as
# they were (no report, no timeline, no temporary file)
big=$TEST_TMP/big
rundir "$big" 1024 8 8 16 layers=16 micro=8
python3 - "$MAYA" "$big" <<'PY' || fail "stopping maya report is wrong (above)"
import os, pty, signal, subprocess, sys, time
maya, d = sys.argv[1:]
def run(args, wait_for, sig):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(maya, [maya, "report"] + args + [d])
    out = b""
    deadline = time.time() + 300
    while wait_for.encode() not in out and time.time() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert wait_for.encode() in out, ("no progress line %r on the terminal" % wait_for, out[-500:])
    os.kill(pid, sig)
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except OSError:
            break
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out
rc, out = run([], "maya: loading the job", signal.SIGINT)
assert rc == 130, (rc, out[-500:])
left = sorted(os.listdir(d))
assert not [f for f in left if f.startswith(("report.", "timeline.")) or ".tmp" in f], left
rc, out = run(["--fold", "no"], "maya: replaying", signal.SIGTERM)
assert rc == 143, (rc, out[-500:])
left = sorted(os.listdir(d))
assert not [f for f in left if f.startswith(("report.", "timeline.")) or ".tmp" in f], left
assert "job.mtrace" in left, left   # collated whole before the stop
PY
exit 0
