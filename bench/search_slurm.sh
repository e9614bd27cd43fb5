#!/usr/bin/env bash
# What running a search's trials as a Slurm job array costs over running
# them as local processes: the same trials, `maya search --slurm` on a real
# munge + slurmctld + 2 slurmd cluster on this host (tests/slurm/cluster.sh,
# 2 nodes of 2 CPUs: 4 tasks at a time) against `maya search -j 4` here.
#
#   empty  N trials that fail at once (`true {a}`: nothing to trace), N = 4
#          and 16: the array's own cost, with a fixed part (sbatch, the
#          first task's start, the last squeue poll, at most 300 ms) and a
#          part per task (slurmstepd, the task script, the trial's files),
#          from the two sizes (the array's tasks after the first 4 wait
#          for Slurm to start them as earlier ones end)
#   gpt    8 minigpt trials of 0.6-0.8 s each (--layers 1..8): the overhead on
#          trials that do some work
#
# Each case runs SEARCH_SLURM_BENCH_RUNS times (default 3), each in a fresh
# directory (no trial from the cache). Needs root, slurm-wlm and munge
# (scripts/deps.sh); prints search_slurm=skipped (why) otherwise.
#
# Prints search_slurm_<case>_{local,slurm}_s_{mean,sd} (the search's wall
# time), search_slurm_<case>_overhead_per_trial_s_{mean,sd} ((slurm - local)
# / trials), and search_slurm_empty_array_fixed_s and
# search_slurm_empty_per_task_s (the array's wall time as fixed + N x per
# task, from the two sizes' means).
set -u
top=${MAYA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export MAYA_TOP=$top
if [ "$(id -u)" != 0 ] || ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    echo "search_slurm=skipped (needs root, slurm-wlm and munge)"
    exit 0
fi
. "$top/tests/lib.sh"
. "$top/tests/slurm/cluster.sh"
runs=${SEARCH_SLURM_BENCH_RUNS:-3}
cluster_start 2
cd "$JOBS_DIR"

values() { local n=$1 i v=; for ((i = 1; i <= n; i++)); do v+="${v:+,}$i"; done; echo "$v"; }
empty_search() { "$MAYA" search -q -o "$1" "${@:3}" --param a="$(values "$2")" -- true {a} > /dev/null 2>&1; }
gpt_search() {
    "$MAYA" search -q -o "$1" "${@:3}" --param layers="$(values "$2")" -- \
        "$WORKLOADS/minigpt" --layers {layers} --iters 2 > /dev/null 2>&1 || fail "the gpt search in $1 failed"
}

# time_search KIND N RUN: the wall time of a local and a Slurm search of N
# trials, appended to times.txt as "case local_s slurm_s trials".
time_search() {
    local kind=$1 n=$2 r=$3 t0 t1 t2
    t0=$(date +%s.%N)
    "${kind}_search" "$JOBS_DIR/$kind$n-local-$r" "$n" -j 4
    t1=$(date +%s.%N)
    "${kind}_search" "$JOBS_DIR/$kind$n-slurm-$r" "$n" --slurm
    t2=$(date +%s.%N)
    python3 - "$JOBS_DIR/$kind$n-slurm-$r/search.json" "$n" <<'PY' || fail "the Slurm search of $n $kind trials is wrong"
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert s["slurm"]["array_tasks"] == n and len(s["trials"]) == n, s["slurm"]
PY
    echo "$kind$n $t0 $t1 $t2 $n" >> times.txt
}

: > times.txt
# The cluster's first job pays the daemons' start-up (about 2 s more than
# later ones): one array first, not measured.
empty_search "$JOBS_DIR/warm-up" 1 --slurm
for ((r = 1; r <= runs; r++)); do
    time_search empty 4 "$r"
    time_search empty 16 "$r"
    time_search gpt 8 "$r"
done

python3 - times.txt <<'PY'
import statistics, sys
cases = {}
for line in open(sys.argv[1]):
    name, t0, t1, t2, n = line.split()
    t0, t1, t2 = float(t0), float(t1), float(t2)
    cases.setdefault(name, []).append((t1 - t0, t2 - t1, int(n)))
def stat(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)
mean = {}
for name, rows in cases.items():
    n = rows[0][2]
    for what, xs in (("local_s", [r[0] for r in rows]), ("slurm_s", [r[1] for r in rows]),
                     ("overhead_per_trial_s", [(r[1] - r[0]) / n for r in rows])):
        m, sd = stat(xs)
        mean[name, what] = m
        print(f"search_slurm_{name}_{what}_mean={m:.3f}")
        print(f"search_slurm_{name}_{what}_sd={sd:.3f}")
per_task = (mean["empty16", "slurm_s"] - mean["empty4", "slurm_s"]) / 12
print(f"search_slurm_empty_per_task_s={per_task:.3f}")
print(f"search_slurm_empty_array_fixed_s={mean['empty4', 'slurm_s'] - 4 * per_task:.3f}")
PY
