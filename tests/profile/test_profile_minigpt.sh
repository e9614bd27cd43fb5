#!/usr/bin/env bash
# maya profile on the bundled GPT training program (cuBLASLt GEMMs, NCCL
# collectives and grouped send/recv, events across streams), forwarding to
# maya's emulator libraries in place of a GPU, as it would to the real ones:
#  - each rank's profile holds the device ops of maya run's emulated ranks,
#    in order, each measured; communicators agree across ranks (the profile
#    collates);
#  - maya profile --compare matches every predicted op with its measured
#    twin and writes compare.txt/json; replaying the run with the profile's
#    durations (maya report --oracle-profile) gives the iteration time the
#    comparison reports for it;
#  - maya profile --export writes training tables that maya-est-train takes;
#  - with the emulator's device clock running underneath (it runs when the
#    emulator writes a trace: MAYA_TRACE_DIR), CUDA events time the emulated
#    GPU, whose op durations are the analytical model's: the profile then
#    measures, op by op, what maya run --estimator analytical predicts, up
#    to the events' own bias (an op on an idle stream is timed from when its
#    start event ran, so its issue time counts). That the two agree checks
#    that every op is bracketed by its own events on its own stream and
#    meets its own prediction.
# (Without the device clock the durations measured are the emulator's host
# times: what is checked then is that they travel, not what they are.)
# test: alone
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/profile/profile_lib.sh"

args=(--tp 2 --pp 2 --iters 3)
run=$TEST_TMP/run prof=$TEST_TMP/prof
"$MAYA" run -q -g h100x8 -n 4 -o "$run" -- "$WORKLOADS/minigpt" "${args[@]}" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run minigpt failed: $(tail -20 "$TEST_TMP/out")"
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -n 4 -o "$prof" -- "$WORKLOADS/minigpt" "${args[@]}" \
    > "$TEST_TMP/out" 2>&1 || fail "maya profile minigpt failed: $(tail -20 "$TEST_TMP/out")"
expect_grep "^maya profile: 4 ranks on this machine's 8 x H100-SXM" "$TEST_TMP/out"
for r in 0 1 2 3; do
    expect_grep "minigpt rank $r .*3 iterations of 4 micro-batches done" "$prof/logs/rank-$r.out"
    same_ops "$run/traces/rank-$r.mtrace" "$prof/traces/rank-$r.mtrace" "rank $r"
done
expect_grep "^gemm .*api=cublasLtMatmul " "$TEST_TMP/same.p.ops"
expect_grep "^coll .*api=ncclAllReduce .*op=allreduce" "$TEST_TMP/same.p.ops"
expect_grep "^coll .*api=ncclSend .*op=send" "$TEST_TMP/same.p.ops"
expect_grep "^comm " "$TEST_TMP/same.p.txt"

# the comparison: every device op matched, numbers where they belong
"$MAYA" profile --compare "$prof" "$run" > "$TEST_TMP/cmp" 2>&1 || fail "maya profile --compare failed: $(tail -20 "$TEST_TMP/cmp")"
expect_grep "^  measured on the GPU \(host clock\) +[0-9.]+ ms  \(3 iterations\)" "$TEST_TMP/cmp"
expect_grep "^  predicted +[0-9.]+ ms  error [-+][0-9.]+%  \(3 iterations\)" "$TEST_TMP/cmp"
[ -s "$run/compare.txt" ] || fail "no compare.txt"
python3 - "$run/compare.json" "$run/traces" "$prof" <<'PY' || fail "compare.json is wrong (above)"
import json, sys, subprocess, glob
c = json.load(open(sys.argv[1]))
assert c["run_gpu"] == "H100-SXM" and c["profile_gpu"] == "H100-SXM", c
assert c["measured_iterations"] == 3 and c["predicted_iterations"] == 3, c
# every device op of the run met its twin in the profile
ops = 0
for t in sorted(glob.glob(sys.argv[2] + "/rank-*.mtrace")):
    d = subprocess.run(["maya", "trace", "dump", t], capture_output=True, text=True, check=True).stdout
    ops += sum(1 for l in d.splitlines() if l.split(" ")[0] in ("launch", "memcpy", "memset", "gemm", "coll")
               and " result=0" in l)
assert c["device_ops"] == ops and c["matched_ops"] == ops, (c["device_ops"], c["matched_ops"], ops)
fam = c["families"]
for f in ("gemm", "kernel", "allreduce", "sendrecv"):
    assert fam[f]["ops"] > 0 and fam[f]["measured_s"] > 0 and fam[f]["predicted_s"] > 0, (f, fam.get(f))
assert sum(f["ops"] for f in fam.values()) == ops
# the per-name list adds up to the families
tot = sum(o["measured_s"] for o in c["ops"])
fs = sum(f["measured_s"] for f in fam.values())
assert abs(tot - fs) <= 1e-4 * fs, (tot, fs)  # json keeps 6 digits
for k in ("measured_iteration_time_s", "predicted_iteration_time_s", "predicted_with_measured_durations_s"):
    assert c[k] > 0, (k, c[k])
PY

# the run replayed with the profile's durations: maya report --oracle-profile
"$MAYA" report -q --oracle-profile "$prof" "$run" > "$TEST_TMP/out" 2>&1 || fail "maya report --oracle-profile failed: $(cat "$TEST_TMP/out")"
expect_grep "^estimator  oracle" "$run/report.txt"
python3 - "$run/report.json" "$run/compare.json" <<'PY' || fail "the oracle replay disagrees with the comparison (above)"
import json, sys
r, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = c["predicted_with_measured_durations_s"]  # json keeps 6 digits
assert abs(r["iteration_time_s"] - want) <= 1e-5 * want, (r["iteration_time_s"], want)
PY
"$MAYA" report -q --oracle-profile "$TEST_TMP/nowhere" "$run" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status with a missing --oracle-profile"
expect_grep "oracle-profile .*nowhere: no traces/ in it" "$TEST_TMP/out"
"$MAYA" report -q --oracle-profile "$run" "$run" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status when --oracle-profile is not a profile"
expect_grep "was not recorded by maya profile" "$TEST_TMP/out"

# measurements of the emulated GPU's clock against the model that drives it
"$MAYA" run -q -g h100x8 -n 4 --estimator analytical -o "$TEST_TMP/run_a" -- "$WORKLOADS/minigpt" "${args[@]}" \
    > "$TEST_TMP/out" 2>&1 || fail "maya run --estimator analytical failed: $(tail -20 "$TEST_TMP/out")"
MAYA_TRACE_DIR=$TEST_TMP/under MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -q -n 4 -o "$TEST_TMP/prof_c" -- \
    "$WORKLOADS/minigpt" "${args[@]}" > "$TEST_TMP/out" 2>&1 || fail "maya profile over the device clock failed"
"$MAYA" profile -q --compare "$TEST_TMP/prof_c" "$TEST_TMP/run_a" > "$TEST_TMP/out" 2>&1 || fail "--compare failed"
python3 - "$TEST_TMP/run_a/compare.json" <<'PY' || fail "the measured durations are not the emulated GPU's (above)"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["matched_ops"] == c["device_ops"] > 0, c
fam = c["families"]
# measured >= predicted (the events' bias only adds), and close
for f, limit in (("gemm", 10), ("kernel", 10), ("copy", 10), ("allreduce", 5)):
    v = fam[f]
    assert v["mape_pct"] < limit, (f, v)
    assert v["measured_s"] >= v["predicted_s"] * 0.999, (f, v)
PY

# training tables from the profile, and a training run that takes them
"$MAYA" profile --export "$prof" --out "$TEST_TMP/tables" > "$TEST_TMP/out" 2>&1 || fail "maya profile --export failed: $(cat "$TEST_TMP/out")"
expect_grep "^gpu,source,group,m,n,k,prec,time_us$" "$TEST_TMP/tables/gemm.csv"
expect_grep "^H100-SXM,maya-profile,m[0-9]+n[0-9]+k[0-9]+,[0-9]+,[0-9]+,[0-9]+,bf16,[0-9.]+$" "$TEST_TMP/tables/gemm.csv"
expect_grep "^H100-SXM,maya-profile,dgx,b[0-9]+,2,1,2,[0-9]+,[0-9.]+$" "$TEST_TMP/tables/allreduce.csv"
expect_grep "^H100-SXM,maya-profile,dgx,b[0-9]+,2,1,2,[0-9]+,[0-9.]+$" "$TEST_TMP/tables/sendrecv.csv"
rows=$(( $(wc -l < "$TEST_TMP/tables/gemm.csv") - 1 ))
expect_grep "rows \(gemm $rows, " "$TEST_TMP/out"
"$MAYA_BUILD/bin/maya-est-train" --data "$MAYA_TOP/estimator/data" --hwspecs "$MAYA_TOP/hwspecs" --out "$TEST_TMP/m0" > "$TEST_TMP/t0" ||
    fail "maya-est-train failed"
"$MAYA_BUILD/bin/maya-est-train" --data "$MAYA_TOP/estimator/data" --data "$TEST_TMP/tables" --hwspecs "$MAYA_TOP/hwspecs" \
    --out "$TEST_TMP/m1" > "$TEST_TMP/t1" || fail "maya-est-train with the profile's tables failed"
before=$(sed -n 's|.*/gemm-H100-SXM.json: \([0-9]*\) rows|\1|p' "$TEST_TMP/t0")
after=$(sed -n 's|.*/gemm-H100-SXM.json: \([0-9]*\) rows|\1|p' "$TEST_TMP/t1")
expect_eq "$after" "$((before + rows))" "rows of the H100 GEMM model trained with the profile"
exit 0
