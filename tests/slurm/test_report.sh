#!/usr/bin/env bash
# The report of a Slurm job is maya run's report for the same workload: an
# sbatch job on two nodes and an interactive srun of multi-rank CUDA
# workloads (up to a GPT trained with tensor, pipeline and data parallelism)
# get slurm-<jobid>.maya.txt/.json with the same configuration,
# estimates and memory figures as `maya run` gives (only what depends on the
# host's measured timing may differ), and the same content as the run
# directory's report.txt/report.json.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/slurm/cluster.sh"
cluster_start 2
cd "$JOBS_DIR"

# same_report A.json B.json [FIELD...]: equal but for host-timed fields
# (communication counts the wait for the last peer to arrive, and that
# arrival is host time; the timelines' sizes, as their times are written
# out; the ranks whose host gaps would fold), who launched, and the FIELDs
# given. Compute and copy
# time per iteration are those of the steady iteration, picked by its
# (host-timed) duration: iterations of a pipeline schedule hold slightly
# different work, so those agree within 1%.
same_report() {
    python3 - "$@" <<'EOF' || fail "the reports $1 and $2 differ"
import json, sys
timed = {"iteration_time_s", "first_iteration_time_s", "iterations", "makespan_s",
         "idle_time_s", "communication_time_s", "exposed_communication_time_s", "launcher", "timeline",
         "breakdown", "host_work_s", "host_bound", "warmup_emulation_s",
         # each run's communicators have ids of its own, and the times of
         # collectives (the slowest ops) count the wait for the last peer
         "communicators", "slowest_ops", *sys.argv[3:]}
near = {"compute_time_s", "copy_time_s"} - timed
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):  # how many ranks' measured host gaps are close enough to fold
    if isinstance(r.get("simulator"), dict):
        r["simulator"].pop("fold_gaps_only", None)
def close(x, y):
    return isinstance(x, float) and isinstance(y, float) and abs(x - y) <= 0.01 * max(abs(x), abs(y))
# a rank's split of the steady iteration (iteration_split) is host-timed as
# the job's breakdown is: it counts the ops that start in the job-wide
# steady windows, whose bounds are host time (a rank that lags there loses
# its ops from the window); the rest of a rank's entry is compared exactly
def strip(l):
    return [{f: v for f, v in r.items() if f != "iteration_split"} for r in l]
def same(k):
    x, y = a.get(k), b.get(k)
    if k in near and close(x, y):
        return True
    if k == "ranks" and isinstance(x, list) and isinstance(y, list):
        return strip(x) == strip(y)
    return x == y
bad = [k for k in sorted(set(a) | set(b)) if k not in timed and not same(k)]
if len(a.get("iterations") or []) != len(b.get("iterations") or []):
    bad.append("iterations")  # how many were found does not depend on timing
for k in bad:
    print(f"{k}: {json.dumps(a.get(k))[:200]} != {json.dumps(b.get(k))[:200]}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# json_get FILE KEY: a top-level value of a report.
json_get() { python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2"; }

# GPUS WORKLOAD ARGS...: vector_add (no collectives), nccl_colls (every NCCL
# collective), minigpt (a GPT trained with tensor, pipeline and data
# parallelism, 2 x 2 x 2).
for workload in "h100x4 vector_add 4096" "h100x4 nccl_colls" "h100x8 minigpt --tp 2 --pp 2 --iters 4 --gemm kernel"; do
    set -- $workload
    gpus=$1 name=$2 n=${1#*x}
    # nccl_colls has no training loop: its iterations are its repeated copy,
    # collective, copy blocks, whose ends cut through the ranks' synchronous
    # copies, so how much of a copy falls in the steady window is host-timed;
    # minigpt's host reads the gradient norm each step (a synchronous 4-byte
    # copy, as Megatron's clip_grad_norm), which the iterations' ends cut too
    timed=()
    [ "$name" != nccl_colls ] && [ "$name" != minigpt ] || timed=(copy_time_s)
    cmd=("$WORKLOADS/$2" "${@:3}")
    "$MAYA" run -q -g "$gpus" -o "$TEST_TMP/ref-$name" -- "${cmd[@]}" > /dev/null 2>&1
    [ -f "$TEST_TMP/ref-$name/report.json" ] || fail "maya run wrote no report for $name"

    # Batch: two nodes, one task each, half the ranks per task.
    job=$(sbatch --parsable -N2 -n2 --maya-emulate="$gpus" --wrap "srun ${cmd[*]}") || fail "sbatch failed"
    cluster_wait_job "$job"
    for ext in txt json; do
        [ -f "slurm-$job.maya.$ext" ] || fail "no slurm-$job.maya.$ext next to slurm-$job.out: $(ls)"
        cmp -s "slurm-$job.maya.$ext" "$TRACE_ROOT/root/job-$job/step-0/report.$ext" ||
            fail "slurm-$job.maya.$ext is not the run directory's report.$ext"
    done
    same_report "$TEST_TMP/ref-$name/report.json" "slurm-$job.maya.json" "${timed[@]}"
    expect_eq "$(json_get "slurm-$job.maya.json" launcher)" '"slurm"' "launcher in the $name batch report"
    expect_eq "$(json_get "slurm-$job.maya.json" world_size)" "$n" "world size in the $name batch report"
    expect_eq "$(json_get "slurm-$job.maya.json" simulated)" true "$name simulated"
    expect_grep "^launched +by slurm: $n processes" "slurm-$job.maya.txt"
    expect_grep "^status +all $n processes exited 0" "slurm-$job.maya.txt"

    # Interactive srun, one task running all the ranks: the report on its
    # stderr, the files in its working directory.
    srun -N1 -n1 --maya-emulate="$gpus" "${cmd[@]}" > "srun-$name.out" 2> "srun-$name.err" ||
        fail "srun $name failed: $(cat "srun-$name.err")"
    job=$(ls -t slurm-*.maya.json | head -1 | sed 's/^slurm-\([0-9]*\)\.maya\.json$/\1/')
    [ -f "$TRACE_ROOT/root/job-$job/step-0/report.json" ] || fail "the srun's report is not job $job's"
    same_report "$TEST_TMP/ref-$name/report.json" "slurm-$job.maya.json" "${timed[@]}"
    expect_grep '^maya report: ' "srun-$name.err" "srun printed the report"
    expect_grep "^status +all $n processes exited 0" "srun-$name.err"
done

# replicas=: declared replicas (docs/dedup.md), the layout maya run
# --replicas takes, given after the other keys (its dimensions are items of
# the value): minigpt TP2 x PP2 x DP4 on 16 GPUs, 8 of them replicas that
# stop at their first NCCL call; the prediction is the full run's (GPU-bound,
# so that host time does not differ between the two launchers' loads).
mg=("$WORKLOADS/minigpt" --tp 2 --pp 2 --iters 6 --hidden 4096 --heads 32 --seq 1024 --layers 4)
"$MAYA" run -q -g h100x16 -o "$TEST_TMP/ref-mg16" -- "${mg[@]}" > /dev/null 2>&1
[ -f "$TEST_TMP/ref-mg16/report.json" ] || fail "maya run wrote no report for minigpt on 16"
srun -N2 -n2 --maya-emulate=h100x16,dedup=no,replicas=2:1,4:2 "${mg[@]}" > srun-repl.out 2> srun-repl.err ||
    fail "srun replicas= failed: $(cat srun-repl.err)"
expect_grep "^status +all 16 processes exited 0; 8 replicas not emulated \(--replicas\)" srun-repl.err
job=$(ls -t slurm-*.maya.json | head -1 | sed 's/^slurm-\([0-9]*\)\.maya\.json$/\1/')
run=$TRACE_ROOT/root/job-$job/step-0
expect_grep '^replicas=2:1,4:2$' "$run/traces/rank-4.eliminated" "rank 4, a replica"
expect_grep '^rank\.4\.note=a replica, not emulated \(--replicas\), rebuilt from rank 2$' "$run/run.conf"
python3 - "$TEST_TMP/ref-mg16/report.json" "slurm-$job.maya.json" <<'PY' || fail "replicas= predicts otherwise (above)"
import json, sys
f, r = (json.load(open(x)) for x in sys.argv[1:3])
assert r["simulated"] and r["world_size"] == 16, r["error"]
err = abs(r["iteration_time_s"] - f["iteration_time_s"]) / f["iteration_time_s"]
print("replicas=: %.6f s against %.6f s (%.3f %%)" % (r["iteration_time_s"], f["iteration_time_s"], 100 * err))
assert err < 0.005, err
PY

# The keys: a cluster file (2 GPUs per node), an iteration marker, and where
# the report goes; maya run given the same gives the same report.
cat > pod.conf <<'EOF'
cluster "pod" {
    gpu = "H100-SXM"
    gpus_per_node = 2
    intra_node = "pcie"
    intra_latency_us = 3
    nics_per_node = 1
    nic_gbps = 25
    nic_latency_us = 5
}
EOF
cmd=("$WORKLOADS/vector_add" 4096)
"$MAYA" run -q -g h100x4 --cluster pod.conf --iteration-marker cudaMemcpy --iterations 2 -o "$TEST_TMP/ref-pod" \
    -- "${cmd[@]}" > /dev/null 2>&1
job=$(sbatch --parsable -N2 -n2 --maya-emulate=h100x4,cluster=pod.conf,marker=cudaMemcpy,iters=2,report=out/pod \
    --wrap "mkdir -p out; srun ${cmd[*]}") || fail "sbatch with keys failed"
cluster_wait_job "$job"
[ -f out/pod.txt ] && [ -f out/pod.json ] || fail "report=out/pod did not give out/pod.txt and out/pod.json: $(ls . out)"
[ ! -f "slurm-$job.maya.txt" ] || fail "with report=, the report also went next to the output"
# (which iteration is the steady one, and so its breakdown, depends on timing
# when iterations differ, as they do cut at each cudaMemcpy)
same_report "$TEST_TMP/ref-pod/report.json" out/pod.json compute_time_s copy_time_s
expect_eq "$(json_get out/pod.json gpus_per_node)" 2 "GPUs per node from the cluster file"
expect_eq "$(json_get out/pod.json iteration_marker)" '"cudaMemcpy"' "the iteration marker"
# iters=2: the report keeps the first 2 of the iterations the marker cuts.
expect_eq "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["iterations"]))' out/pod.json)" 2 \
    "iterations kept with iters=2"
[ "$(json_get out/pod.json iterations_found)" -gt 2 ] || fail "expected more than 2 iterations found by the marker"
expect_eq "$(json_get out/pod.json iterations_found)" "$(json_get "$TEST_TMP/ref-pod/report.json" iterations_found)" \
    "iterations found, against maya run"
cmp -s pod.conf "$TRACE_ROOT/root/job-$job/step-0/cluster.conf" || fail "the cluster file was not copied into the run directory"

# A batch job not given --maya-emulate whose srun is: that srun reports its
# step itself (the epilog knows nothing of the option), next to where it ran.
job=$(sbatch --parsable -N2 -n2 --wrap "srun --maya-emulate=h100x2 $WORKLOADS/vector_add 4096") || fail "sbatch failed"
cluster_wait_job "$job"
[ -f "slurm-$job.0.maya.json" ] || fail "the step of a batch job without the option has no report: $(ls)"
expect_eq "$(json_get "slurm-$job.0.maya.json" world_size)" 2 "world size of the step's report"
expect_grep '^maya report: ' "slurm-$job.out" "srun printed the step's report into the job's output"
[ ! -f "slurm-$job.maya.txt" ] || fail "a batch job without --maya-emulate got a job report too"

# The workload's own output went to the job's output, as without maya.
expect_count 4 'vector_add n=4096 blocks=16 threads=256: ok' "srun-vector_add.out"
cluster_wait_idle
