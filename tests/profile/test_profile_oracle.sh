#!/usr/bin/env bash
# Measured durations from a profile, by hand-made traces with known numbers:
# a profile (passthrough traces, as maya profile records them) and an
# emulated run of the same program, whose trace holds calls the profile
# does not (cudaGetDevice, cudaGetLastError), so that sequence numbers
# differ between the two. The n-th op of a name on a rank takes what the
# n-th op of that name measured on that rank:
#   kA #1 100 us, kB 300 us, kA #2 200 us, the GEMM 50 us.
# The timeline of maya report --oracle-profile shows exactly those; the
# comparison reports them as measured and the profile's iteration (600 us
# from its first call to the end of its synchronisation); the export writes
# the GEMM and the all-reduce as table rows.
. "$MAYA_TOP/tests/lib.sh"

conf() { # DIR LAUNCHER
    printf 'version=1\nlauncher=%s\ngpu=H100-SXM\ngpu_count=1\nnprocs=1\ncommand=test\nrank.0.exit=0\n' "$2" > "$1/run.conf"
}
prof=$TEST_TMP/prof run=$TEST_TMP/run
mkdir -p "$prof/traces" "$run/traces"
cat > "$TEST_TMP/prof.txt" <<'TXT'
header rank=0 world_size=1 passthrough
stream id=1 dev=0
comm id=0x66 rank=0 nranks=1
launch t=0us..5us stream=1 api=cudaLaunchKernel kernel=kA measured=100us
launch t=10us..15us stream=1 api=cudaLaunchKernel kernel=kB measured=300us
gemm t=16us..17us stream=1 api=cublasSgemm_v2 m=1024 n=512 k=256 measured=50us
coll t=18us..19us stream=1 op=allreduce comm=0x66 cseq=0 rank=0 nranks=1 count=1M measured=20us
launch t=20us..25us stream=1 api=cudaLaunchKernel kernel=kA measured=200us
sync t=30us..600us sync=device
TXT
cat > "$TEST_TMP/run.txt" <<'TXT'
header rank=0 world_size=1
stream id=1 dev=0
comm id=0x66 rank=0 nranks=1
call t=0us..1us api=cudaGetDevice
launch t=3us..4us stream=1 api=cudaLaunchKernel kernel=kA
call t=6us..7us api=cudaGetLastError
launch t=9us..10us stream=1 api=cudaLaunchKernel kernel=kB
gemm t=11us..12us stream=1 api=cublasSgemm_v2 m=1024 n=512 k=256
coll t=13us..14us stream=1 op=allreduce comm=0x66 cseq=0 rank=0 nranks=1 count=1M
launch t=15us..16us stream=1 api=cudaLaunchKernel kernel=kA
sync t=18us..19us sync=device
TXT
"$MAYA" trace build "$TEST_TMP/prof.txt" "$prof/traces/rank-0.mtrace" || fail "maya trace build (profile) failed"
"$MAYA" trace build "$TEST_TMP/run.txt" "$run/traces/rank-0.mtrace" || fail "maya trace build (run) failed"
conf "$prof" maya-profile
conf "$run" maya-run
echo "name=* host=1us" > "$TEST_TMP/host.txt"

# the run replayed with the profile's device times (host costs from a file)
"$MAYA" report -q --oracle "$TEST_TMP/host.txt" --oracle-profile "$prof" "$run" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report --oracle-profile failed: $(cat "$TEST_TMP/out")"
python3 - "$run/timeline.json" <<'PY' || fail "the replay's device times are not the profile's (above)"
import json, sys
t = json.load(open(sys.argv[1]))
dev = [(e["name"], e["dur"]) for e in sorted((e for e in t["traceEvents"] if e["ph"] == "X" and e["tid"] != 0),
                                              key=lambda e: e["ts"])]
assert dev == [("kA", 100.0), ("kB", 300.0), ("cublasSgemm_v2", 50.0), ("ncclAllReduce", 20.0), ("kA", 200.0)], dev
PY

# the comparison
"$MAYA" profile --compare "$prof" "$run" > "$TEST_TMP/out" 2>&1 || fail "maya profile --compare failed: $(cat "$TEST_TMP/out")"
python3 - "$run/compare.json" <<'PY' || fail "compare.json is wrong (above)"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["device_ops"] == 5 and c["matched_ops"] == 5, c
assert abs(c["measured_iteration_time_s"] - 600e-6) < 1e-12, c["measured_iteration_time_s"]
f = c["families"]
assert f["kernel"]["ops"] == 3 and abs(f["kernel"]["measured_s"] - 600e-6) < 1e-12, f["kernel"]
assert f["gemm"]["ops"] == 1 and abs(f["gemm"]["measured_s"] - 50e-6) < 1e-12, f["gemm"]
assert f["allreduce"]["ops"] == 1 and abs(f["allreduce"]["measured_s"] - 20e-6) < 1e-12, f["allreduce"]
ka = [o for o in c["ops"] if o["name"] == "kA"][0]
assert ka["count"] == 2 and abs(ka["measured_s"] - 300e-6) < 1e-12, ka
# the GEMM's prediction is the estimator's: a 2mnk / peak figure, above 0
g = [o for o in c["ops"] if o["name"] == "cublasSgemm_v2"][0]
assert g["predicted_s"] > 0, g
PY
expect_grep "^  measured on the GPU \(host clock\) +0.600 ms  \(1 iterations\)" "$run/compare.txt"

# a profile of another GPU: said so
sed -i 's/^gpu=H100-SXM/gpu=A100-SXM4-80GB/' "$run/run.conf"
"$MAYA" profile --compare "$prof" "$run" > "$TEST_TMP/out" 2>&1 || fail "maya profile --compare (other GPU) failed"
expect_grep "the prediction is for A100-SXM4-80GB, the profile was measured on H100-SXM" "$TEST_TMP/out"
# arguments the wrong way round: the first must be a profile
"$MAYA" profile --compare "$run" "$prof" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status of --compare with a run where the profile goes"
expect_grep "made by maya-run, not by maya profile" "$TEST_TMP/out"

# training tables
"$MAYA" profile --export "$prof" > "$TEST_TMP/out" 2>&1 || fail "maya profile --export failed: $(cat "$TEST_TMP/out")"
expect_grep "^H100-SXM,maya-profile,m1024n512k256,1024,512,256,(fp32|tf32),50.000$" "$prof/tables/gemm.csv"
expect_grep "^H100-SXM,maya-profile,dgx,b4194304,1,1,1,4194304,20.000$" "$prof/tables/allreduce.csv"
expect_count 1 "" "$prof/tables/kernel.csv"   # the header only: kA and kB have no known class and bytes
expect_grep "rows \(gemm 1, kernel 0, allreduce 1, sendrecv 0\) from 5 measured ops; 3 ops fit no table" "$TEST_TMP/out"
# an emulated run is no profile
"$MAYA" profile --export "$run" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status of --export on an emulated run"
expect_grep "was not recorded by maya profile" "$TEST_TMP/out"
exit 0
