#!/usr/bin/env bash
# The run directory records the GPU and cluster descriptions the run used
# (gpu.conf, cluster.conf) and maya report uses them, whatever
# MAYA_HWSPEC_DIR says later: a run on an edited H100 of 96 GB re-reported
# without that directory still says 96 GB. Other descriptions only when
# asked (-g NAME|FILE, --cluster, --hwspec-dir), and the report says which
# served; on the installed 80 GB H100 the same run says it would not fit.
. "$MAYA_TOP/tests/lib.sh"

json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

hw=$TEST_TMP/hw96
cp -r "$MAYA_BUILD/share/maya/hwspecs" "$hw"
sed -i 's/totalGlobalMem = 85017755648/totalGlobalMem = 103079215104/' "$hw/gpus/h100-sxm.conf"
grep -q "totalGlobalMem = 103079215104" "$hw/gpus/h100-sxm.conf" || fail "could not edit the H100's memory"

d=$TEST_TMP/run
MAYA_HWSPEC_DIR=$hw "$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/mem_fill" 88000 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run mem_fill 88000 on a 96 GB H100 failed: $(cat "$TEST_TMP/out")"
expect_grep "^mem_fill: 88000 MiB held$" "$d/logs/rank-0.out"
[ -f "$d/gpu.conf" ] && [ -f "$d/cluster.conf" ] || fail "the run directory lacks gpu.conf or cluster.conf: $(ls "$d")"
expect_grep "^        totalGlobalMem = 103079215104$" "$d/gpu.conf"
expect_grep "^cluster=cluster.conf$" "$d/run.conf"
"$MAYA" hwspecs check "$d/gpu.conf" > /dev/null || fail "the recorded gpu.conf does not parse"
"$MAYA" hwspecs check "$d/cluster.conf" > /dev/null || fail "the recorded cluster.conf does not parse"
expect_grep "^hardware   GPU H100-SXM as the run recorded it \(gpu.conf\); cluster dgx-h100 as the run recorded it \(cluster.conf\)$" "$d/report.txt"
expect_grep "^memory     peak 85.94 GiB of 96.00 GiB \(90%\) on rank 0; no rank ran out of memory$" "$d/report.txt"

# re-reported without MAYA_HWSPEC_DIR: the same report
cp "$d/report.json" "$TEST_TMP/first.json"
"$MAYA" report -q "$d" || fail "maya report on the run failed"
cmp -s "$d/report.json" "$TEST_TMP/first.json" || fail "maya report without MAYA_HWSPEC_DIR gave another report.json"
expect_grep "of 96.00 GiB \(90%\)" "$d/report.txt"

# the installed H100, asked for: 80 GB, and the peak would not fit
"$MAYA" report -q --hwspec-dir "$MAYA_BUILD/share/maya/hwspecs" "$d" || fail "maya report --hwspec-dir failed"
expect_grep "^hardware   GPU H100-SXM from --hwspec-dir .*/share/maya/hwspecs, not the description the run recorded; " "$d/report.txt"
expect_grep "^memory     peak 85.94 GiB of 79.18 GiB \(109%\) on rank 0; MORE THAN THIS GPU HOLDS: it would run out of memory" "$d/report.txt"
expect_eq "$(json "$d/report.json" 'r["gpu_overridden"], r["fits_memory"], r["oom"]')" "True False False" "report.json with --hwspec-dir"

# another GPU by name, and by file: its own speed
"$MAYA" report -q -g a100 "$d" || fail "maya report -g a100 failed"
expect_grep "^hardware   GPU A100-SXM4-80GB from the installed descriptions \(-g\), not the description the run recorded; " "$d/report.txt"
a100_it=$(json "$d/report.json" 'r["compute_time_s"]')
h100_it=$(json "$TEST_TMP/first.json" 'r["compute_time_s"]')
python3 -c "import sys; a, h = map(float, sys.argv[1:]); sys.exit(0 if a > 1.2 * h else 1)" "$a100_it" "$h100_it" ||
    fail "the A100's kernels should be slower than the H100's: $a100_it s against $h100_it s"
"$MAYA" hwspecs show a40 > "$TEST_TMP/a40.conf"
"$MAYA" report -q -g "$TEST_TMP/a40.conf" "$d" || fail "maya report -g FILE failed"
expect_grep "^hardware   GPU A40 from .*/a40.conf \(-g\), not the description the run recorded; " "$d/report.txt"
expect_eq "$(json "$d/report.json" 'r["gpu"]')" "A40" "GPU of the report made with -g FILE"

# another cluster
cat > "$TEST_TMP/pod.conf" <<'CONF'
cluster "pod" {
    gpu = "H100-SXM"
    gpus_per_node = 4
    intra_node = "pcie"
    intra_latency_us = 3
    nics_per_node = 1
    nic_gbps = 25
    nic_latency_us = 5
}
CONF
"$MAYA" report -q --cluster "$TEST_TMP/pod.conf" "$d" || fail "maya report --cluster failed"
expect_grep "^hardware   GPU H100-SXM as the run recorded it \(gpu.conf\); cluster pod given with --cluster, not the one the run recorded$" "$d/report.txt"
expect_eq "$(json "$d/report.json" 'r["cluster"]')" "pod" "cluster of the report made with --cluster"

# a run that ran out of memory, reported for a bigger GPU: the shortage was the run's GPU's
d5=$TEST_TMP/oom
"$MAYA" run -q -g a40x1 -o "$d5" -- "$WORKLOADS/mem_fill" 50000 > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "exit status of mem_fill 50000 on an A40"
expect_grep "; OUT OF MEMORY on some rank$" "$d5/report.txt"
"$MAYA" report -q -g h100 "$d5"
expect_grep "^memory     peak .* of 79.18 GiB .*; OUT OF MEMORY on some rank \(on the GPU the run emulated\)$" "$d5/report.txt"

# bad requests
"$MAYA" report -q -g nosuchgpu "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status of maya report -g nosuchgpu"
expect_grep "^NOT SIMULATED: configuration: -g nosuchgpu: no such file and no GPU of that name in the installed descriptions; known: " "$d/report.txt"
"$MAYA" report -q -g "" "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status of maya report -g ''"
expect_grep "-g: expected a name or a file" "$TEST_TMP/out"
"$MAYA" report -q --hwspec-dir "$TEST_TMP/nowhere" "$d" > "$TEST_TMP/out" 2>&1
[ $? -ne 0 ] || fail "maya report --hwspec-dir of a missing directory succeeded"
expect_grep "no GPU descriptions in .*/nowhere/gpus" "$TEST_TMP/out"

# a damaged gpu.conf: the report says so, nothing is simulated on a guess
cp "$d/gpu.conf" "$TEST_TMP/gpu.conf.good"
echo 'gpu { broken' > "$d/gpu.conf"
"$MAYA" report -q "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status of maya report with a damaged gpu.conf"
expect_grep "gpu.conf:1: missing title for section 'gpu'" "$TEST_TMP/out"
expect_grep "^NOT SIMULATED: configuration: .*/gpu.conf: not a valid hwspec file" "$d/report.txt"
"$MAYA" hwspecs show a40 | sed 's/^gpu "A40"/gpu "OTHER"/' > "$d/gpu.conf"
"$MAYA" hwspecs show a100 >> "$d/gpu.conf"
"$MAYA" report -q "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status of maya report with a gpu.conf of two other GPUs"
expect_grep "gpu.conf: expected one gpu \"NAME\" \{ ... \} or one named H100-SXM, found 2 GPU descriptions" "$TEST_TMP/out"
cp "$TEST_TMP/gpu.conf.good" "$d/gpu.conf"

# a run directory from before the descriptions were recorded: the installed ones, said so
rm "$d/gpu.conf"
"$MAYA" report -q "$d" || fail "maya report without gpu.conf failed"
expect_grep "^hardware   GPU H100-SXM from the installed descriptions \(the run directory records none\); " "$d/report.txt"
exit 0
