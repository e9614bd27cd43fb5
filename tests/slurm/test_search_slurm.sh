#!/usr/bin/env bash
# maya search --slurm on a real munge + slurmctld + 2 slurmd cluster: the
# trials run as job arrays and give the same table as a local search of the
# same space; a task that never finishes (cancelled under it, as a
# preemption does) is submitted again, or reported when out of retries;
# a search whose submitter was killed is resumed: the new one waits for the
# old array and takes its finished trials from the cache; budget.sh prints
# each GPU set's best with its hours and cost. Prints the
# array's overhead per trial (slurm_overhead_per_trial_s), measured on
# trials that do next to nothing, against the same trials run locally.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/slurm/cluster.sh"
cluster_start 2
cd "$JOBS_DIR"

# The same space as test_search: GPU-bound, so host timing hardly matters.
model=(--iters 3 --hidden 4096 --heads 32 --layers 20 --seq 2048)
search() {
    "$MAYA" search -g h100x2 -o "$1" "${@:2}" --param tp=1,2 --param pp=1,2 -- \
        "$WORKLOADS/minigpt" --tp {tp} --pp {pp} "${model[@]}"
}
MAYA_HOST_CLOCK=cpu search "$JOBS_DIR/local" -j 2 > local.out 2> local.err || fail "local search: $(tail -5 local.err)"
search "$JOBS_DIR/slurm" --slurm --sbatch --nodes=1 > slurm.out 2> slurm.err || fail "slurm search: $(tail -5 slurm.err)"
cat slurm.out slurm.err
expect_grep 'submitting 4 trials as a job array' slurm.err
expect_grep '1 job array of 4 tasks in all \(0 resubmitted\)' slurm.err
# DIR's search gave the local search's table: the same trials with the same
# status (and, when valid, peak memory and iteration time), and the same best.
same_as_local() {
    python3 - local/search.json "$1/search.json" <<'PY' || fail "the search in $1 differs from the local one (above)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rows = lambda s: {tuple(t["params"].values()): t for t in s["trials"]}
ra, rb = rows(a), rows(b)
assert ra.keys() == rb.keys() and len(ra) == 4
for k in ra:
    x, y = ra[k], rb[k]
    assert x["status"] == y["status"] and x["dir"] == y["dir"], (x, y)
    assert x["peak_memory_bytes"] == y["peak_memory_bytes"], (x, y)
    if x["status"] == "ok":
        assert abs(x["iteration_time_s"] - y["iteration_time_s"]) <= 1e-3 * x["iteration_time_s"], (x, y)
assert a["best"]["params"] == b["best"]["params"]
assert b["slurm"]["array_tasks"] == 4 and b["trials_run"] == 4
PY
}
same_as_local slurm
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["slurm"]["arrays"] == 1' slurm/search.json ||
    fail "the Slurm search took more than one array"
ls slurm/slurm/wave-1/task-0.sh slurm/slurm/wave-1/array.sh > /dev/null || fail "no task scripts kept"
[ ! -e slurm/slurm/job ] || fail "the finished job is still recorded"

# --srun-nodes 2: each array task is 2 nodes, and srun --maya-emulate runs
# its trial's 2 ranks one a node; the same table as the local search.
search "$JOBS_DIR/spread" --slurm --srun-nodes 2 > spread.out 2> spread.err ||
    fail "the spread search failed: $(tail -5 spread.err)"
cat spread.out
grep -q -- "'srun' '--nodes=2' '--ntasks-per-node=1' '--maya-emulate=H100-SXMx2,report=" spread/slurm/wave-1/task-0.sh ||
    fail "the task does not run its trial with srun --maya-emulate: $(cat spread/slurm/wave-1/task-0.sh)"
same_as_local spread
"$MAYA" search -o "$JOBS_DIR/bad" --srun-nodes 2 --param a=1 -- true {a} > bad.out 2>&1
expect_eq "$?" 2 "exit status of --srun-nodes without --slurm"
expect_grep 'spreading a trial.s ranks over nodes needs --slurm' bad.out

# A task cancelled under its trial (as preemption does) is submitted again.
cat > preempt.sh <<'SH'
#!/bin/sh
# first attempt of each trial: its own array task is cancelled
mark=$MARKS/$1
if [ ! -e "$mark" ]; then
    touch "$mark"
    scancel "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
    sleep 60
fi
exec "$WORKLOADS/minigpt" --layers "$1" --iters 2
SH
chmod +x preempt.sh
mkdir -p marks
export MARKS=$JOBS_DIR/marks WORKLOADS
"$MAYA" search -o "$JOBS_DIR/pre" --slurm --param layers=2,4 -- "$JOBS_DIR/preempt.sh" {layers} \
    > pre.out 2> pre.err || fail "the preempted search failed: $(tail -5 pre.err)"
cat pre.out pre.err
expect_grep '2 job arrays of 4 tasks in all \(2 resubmitted\)' pre.err
expect_count 2 '^ +[0-9]+  [24] +[0-9.]+ ms .* ok$' pre.out
rm -f marks/*
"$MAYA" search -o "$JOBS_DIR/pre0" --slurm --retries 0 --param layers=2 -- "$JOBS_DIR/preempt.sh" {layers} \
    > pre0.out 2> pre0.err
expect_eq "$?" 1 "exit status when the only trial's task never finished"
expect_grep '^ +1  2  +- .* failed: its Slurm array task never finished, 1 submission \(last: job [0-9]+ task 0, slurm/wave-1/task-0.out\)$' \
    pre0.out

# Resume: the submitter is killed while its array runs; a new search waits
# for that array and finds its trials in the cache.
cat > slow.sh <<'SH'
#!/bin/sh
sleep 3
exec "$WORKLOADS/minigpt" --layers "$1" --iters 2
SH
chmod +x slow.sh
"$MAYA" search -o "$JOBS_DIR/resume" --slurm --param layers=1,2,4 -- "$JOBS_DIR/slow.sh" {layers} \
    > resume1.out 2> resume1.err &
pid=$!
for ((i = 0; i < 200; i++)); do [ -s resume/slurm/job ] && break; sleep 0.05; done
[ -s resume/slurm/job ] || fail "the first search submitted nothing: $(cat resume1.err)"
kill -9 $pid
wait $pid 2>/dev/null
job=$(cat resume/slurm/job)
"$MAYA" search -o "$JOBS_DIR/resume" --slurm --param layers=1,2,4 -- "$JOBS_DIR/slow.sh" {layers} \
    > resume2.out 2> resume2.err || fail "the resumed search failed: $(tail -5 resume2.err)"
cat resume2.err
expect_grep "waiting for job $job, submitted by an earlier search in this directory" resume2.err
expect_grep '3 trials finished \(0 run, 3 from the cache\)' resume2.err
expect_count 3 '^ +[0-9]+  [124] +[0-9.]+ ms .* ok$' resume2.out

# Overhead per trial: 12 trials that fail at once (nothing to trace), as
# one array on the cluster's 4 CPUs (2 nodes of 2) against 4 at a time on
# this host.
quick() { "$MAYA" search -q -o "$JOBS_DIR/$1" "${@:2}" --param a=1,2,3,4,5,6,7,8,9,10,11,12 -- true {a} > /dev/null 2>&1; }
t0=$(date +%s.%N); quick quick-local -j 4; t1=$(date +%s.%N); quick quick-slurm --slurm; t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" quick-slurm/search.json <<'PY' || fail "the quick searches are wrong"
import json, sys
t0, t1, t2 = map(float, sys.argv[1:4])
s = json.load(open(sys.argv[4]))
assert s["slurm"]["array_tasks"] == 12 and len(s["trials"]) == 12, s["slurm"]
print(f"local_per_trial_s={(t1 - t0) / 12:.3f}")
print(f"slurm_per_trial_s={(t2 - t1) / 12:.3f}")
print(f"slurm_overhead_per_trial_s={((t2 - t1) - (t1 - t0)) / 12:.3f}")
print(f"slurm_array_s={s['slurm']['array_s']:.2f}")
PY

# slurm_examples/budget.sh: the best configuration of each GPU set as array
# tasks, with the hours, GPU-hours and cost of the whole run from the
# search's own figures.
MAYA=$MAYA "$MAYA_TOP/slurm_examples/budget.sh" -n 500000 -p 2.5 -o "$JOBS_DIR/budget" h100x2,b200x2 \
    --param tp=1,2 -- "$WORKLOADS/minigpt" --tp {tp} --iters 2 > budget.out 2> budget.err ||
    fail "budget.sh failed: $(tail -5 budget.err)"
cat budget.out
expect_grep '^GPUs +iteration +GPU-h/1k +cost/1k +hours +GPU-hours +cost  configuration$' budget.out
python3 - budget/search.json budget.out <<'PY' || fail "budget.sh's figures are not the search's (above)"
import json, sys
s = json.load(open(sys.argv[1]))
rows = {l.split()[0]: l.split() for l in open(sys.argv[2]).read().splitlines()[1:]}
assert sorted(rows) == ["b200x2", "h100x2"], rows
assert s["slurm"]["array_tasks"] >= 2, s["slurm"]
for g, r in rows.items():
    ok = [t for t in s["trials"] if t["gpus"] == g and t["status"] == "ok"]
    t = min(ok, key=lambda t: t["iteration_time_s"])
    it = t["iteration_time_s"]
    assert r[-1] == f"tp={t['params']['tp']}", (r, t["params"])
    want = [it * 1e3, it * 2000 / 3600, 2.5 * it * 2000 / 3600, it * 500000 / 3600, it * 2 * 500000 / 3600,
            2.5 * it * 2 * 500000 / 3600]
    got = [float(r[1][:-2])] + [float(x) for x in r[2:7]]
    # as printed: ms, hours and GPU-hours to 0.1, GPU-hours per 1k to 0.001, costs to 0.01
    for w, x, d in zip(want, got, (0.1, 0.001, 0.01, 0.1, 0.1, 0.01)):
        assert abs(w - x) <= 0.51 * d + 1e-6 * abs(w), (g, want, got)
PY
"$MAYA_TOP/slurm_examples/budget.sh" -n many h100x2 -- true > budget-bad.out 2>&1
expect_eq "$?" 2 "exit status of budget.sh -n many"
expect_grep 'expected a whole number of iterations' budget-bad.out
