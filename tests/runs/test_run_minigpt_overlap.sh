#!/usr/bin/env bash
# minigpt's Megatron-Core knobs under maya run (tests/workloads/minigpt.cu):
# --attention flash runs one fused kernel each way and keeps no s x s
# scores (less memory than the unfused attention by at least the kept
# probabilities); --overlap-param-gather leaves the distributed optimizer's
# all-gathers to the next forward, where they run beside its kernels;
# --tp-comm-overlap turns SP's all-gathers and reduce-scatters into a ring
# exchange of send/recv between TP neighbours beside the GEMMs; bad
# combinations are refused with a message.
. "$MAYA_TOP/tests/lib.sh"

mg=$WORKLOADS/minigpt
# one run; its report.json's peak memory of rank 0 on stdout
run() {
    local d=$1
    shift
    "$MAYA" run -q -o "$d" "$@" > "$d.out" 2>&1 || fail "maya run $* failed: $(tail -30 "$d.out")"
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["simulated"] and r["oom"] is False, r; print(r["ranks"][0]["peak_memory_bytes"])' "$d/report.json" ||
        fail "no simulated report in $d"
}

# flash attention against the unfused one: 2 layers, 4 heads of 128, 1024
# tokens; DP 2 with the distributed optimizer and its overlapped gathers
model=(--seq 1024 --hidden 512 --heads 4 --layers 2 --vocab 1024 --micro-batches 2 --micro-batch-size 1 --iters 4
    --zero1 --ddp torch --bucket-mb 1)
m_unfused=$(run "$TEST_TMP/unfused" -g h100x2 -- "$mg" "${model[@]}")
m_flash=$(run "$TEST_TMP/flash" -g h100x2 -- "$mg" "${model[@]}" --attention flash --overlap-param-gather)
# the unfused attention keeps each layer's 4 x 1024 x 1024 probabilities per
# micro-batch in flight (16-bit), and its work set one more set of scores
python3 - "$m_unfused" "$m_flash" <<'PY' || fail "flash attention does not save the scores' memory (above)"
import sys
unfused, flash = map(int, sys.argv[1:])
probs = 4 * 1024 * 1024 * 2
assert unfused - flash >= 2 * probs, (unfused, flash, unfused - flash)
PY
python3 - "$TEST_TMP/flash/timeline.json" "$TEST_TMP/unfused/timeline.json" <<'PY' || fail "flash/param-gather timeline is wrong (above)"
import json, sys
def events(f):
    return [e for e in json.load(open(f))["traceEvents"] if e["ph"] == "X" and e["pid"] == 0 and e["tid"] > 0]
def overlaps(ev):
    """ncclAllGathers that run while a kernel of the compute stream does, of all"""
    ag = [e for e in ev if e["name"] == "ncclAllGather"]
    comp = [e for e in ev if e.get("cat") == "compute"]
    return sum(any(c["ts"] < a["ts"] + a["dur"] and a["ts"] < c["ts"] + c["dur"] for c in comp) for a in ag), len(ag)
flash, unfused = events(sys.argv[1]), events(sys.argv[2])
names = {e["name"] for e in flash}
assert any("flash::fwd<" in n for n in names) and any("flash::bwd<" in n for n in names), names
assert not any("softmax_causal" in n for n in names), names
assert any("softmax_causal" in e["name"] for e in unfused)
# after each step the parameters are gathered in the next forward, beside
# its kernels; without --overlap-param-gather the forward waits for them all
busy, n = overlaps(flash)
busy0, n0 = overlaps(unfused)
print("all-gathers beside a kernel: %d of %d with --overlap-param-gather, %d of %d without" % (busy, n, busy0, n0))
# (the last step's gathers but the first wait for a forward that never comes)
assert 0 < n < n0 and busy0 == 0 and busy >= 3, ("gathers after the step", busy0, n0, busy, n)
PY

# the TP ring exchange: TP 4 with SP; the forward's layers issue no
# all-gather or reduce-scatter of their own, the sends and receives run on
# the TP stream beside the GEMMs
ring=(--tp 4 --sequence-parallel --seq 1024 --hidden 4096 --heads 32 --layers 2 --vocab 1024 --iters 3)
run "$TEST_TMP/ring" -g h100x4 -- "$mg" "${ring[@]}" --tp-comm-overlap > /dev/null
run "$TEST_TMP/noring" -g h100x4 -- "$mg" "${ring[@]}" > /dev/null
python3 - "$TEST_TMP/ring/timeline.json" "$TEST_TMP/noring/timeline.json" <<'PY' || fail "the TP ring exchange's timeline is wrong (above)"
import json, sys
def events(f):
    return [e for e in json.load(open(f))["traceEvents"] if e["ph"] == "X" and e["pid"] == 1 and e["tid"] > 0]
ring, plain = events(sys.argv[1]), events(sys.argv[2])
count = lambda ev, n: sum(e["name"] == n for e in ev)
# per layer and micro-batch: 2 all-gathers and 2 reduce-scatters of the
# forward and 2 all-gathers of the row-parallel input gradients become 3 hops
# each (TP 4); the backward's re-gathers and its reduce-scatters stay
assert count(plain, "ncclSend") == 0 and count(ring, "ncclSend") > 0
assert count(ring, "ncclSend") == count(ring, "ncclRecv")
assert count(ring, "ncclAllGather") < count(plain, "ncclAllGather"), (count(ring, "ncclAllGather"), count(plain, "ncclAllGather"))
assert count(ring, "ncclReduceScatter") < count(plain, "ncclReduceScatter")
sends = [e for e in ring if e["name"] in ("ncclSend", "ncclRecv")]
gemm = [e for e in ring if e.get("cat") == "compute" and "Matmul" in e["name"]]
beside = sum(any(g["ts"] < s["ts"] + s["dur"] and s["ts"] < g["ts"] + g["dur"] for g in gemm) for s in sends)
print("sends and receives beside a GEMM: %d of %d" % (beside, len(sends)))
assert beside >= len(sends) // 2, ("sends beside a GEMM", beside, len(sends))
PY

# refused combinations: the run fails, its ranks saying why
refused() {
    local want=$1
    shift
    rm -rf "$TEST_TMP/bad"
    "$MAYA" run -q -g h100x2 -o "$TEST_TMP/bad" -- "$mg" "$@" > "$TEST_TMP/bad.out" 2>&1 &&
        fail "minigpt $* was not refused"
    cat "$TEST_TMP/bad/logs/"rank-*.err > "$TEST_TMP/bad.err"
    expect_grep "$want" "$TEST_TMP/bad.err"
}
refused '--tp-comm-overlap needs --sequence-parallel' --tp 2 --tp-comm-overlap
refused '--overlap-param-gather needs --zero1 and --ddp torch' --overlap-param-gather
refused '--attention flash needs a head dim \(--hidden / --heads\) of 64 or 128' --attention flash --hidden 256 --heads 8
refused '--attention flash needs --seq a multiple of 128' --attention flash --hidden 256 --heads 4 --seq 192
refused 'minigpt: --attention expects unfused or flash, got "fast"' --attention fast
exit 0
