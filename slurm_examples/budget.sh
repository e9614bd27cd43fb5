#!/bin/bash
# For site admins: what does a training run cost on each GPU type and count
# the site could buy or reserve, at its best configuration on each? One
# maya search (man maya, "maya search") over the GPU sets and the job's
# parallelism knobs, its trials run as Slurm job arrays on CPU nodes
# (--slurm), priced per GPU-hour; prints, per GPU set, the fastest valid
# configuration, its time per iteration, GPU-hours and cost per 1,000
# iterations, and the hours, GPU-hours and cost of ITERATIONS iterations.
#
#   budget.sh [-n ITERATIONS] [-p PRICE] [-o DIR] GPUxCOUNT[,GPUxCOUNT...] [SEARCH OPTIONS] -- CMD [ARGS...]
#
#   e.g.  budget.sh -n 500000 -p 2.10 h100x64,b200x32 --param tp=2,4,8 --param pp=1,2,4 -- \
#             python train.py --tp {tp} --pp {pp} --max-steps 5
#
# PRICE is the cost of one GPU-hour (default: the cluster files'
# price_per_gpu_hour; maya-hwspec(5)). SEARCH OPTIONS are maya search's
# (--param, --flag, --prune, --cluster, --sbatch, -j, ...). BUDGET_LOCAL=1
# runs the trials on this machine instead of Slurm. The search directory
# (default maya-budget) keeps every trial: run the script again with more
# values and only the new trials run.
set -eu

usage() {
    echo "usage: $0 [-n ITERATIONS] [-p PRICE] [-o DIR] GPUxCOUNT[,...] [SEARCH OPTIONS] -- CMD [ARGS...]" >&2
    [ $# -gt 0 ] && echo "$0: $*" >&2
    exit 2
}
iterations=1000 price= dir=maya-budget
while [ $# -gt 0 ]; do
    case $1 in
    -n) [ $# -ge 2 ] || usage "-n needs a number"; iterations=$2; shift 2 ;;
    -p) [ $# -ge 2 ] || usage "-p needs a price per GPU-hour"; price=$2; shift 2 ;;
    -o) [ $# -ge 2 ] || usage "-o needs a directory"; dir=$2; shift 2 ;;
    -*) usage "unknown option $1" ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage "no GPU sets"
case $iterations in '' | *[!0-9]*) usage "-n \"$iterations\": expected a whole number of iterations" ;; esac
gpus=$1
shift
case " $* " in *" -- "*) ;; *) usage "no command: expected -- CMD [ARGS...]" ;; esac
maya=${MAYA:-maya}
opts=(-g "$gpus" -o "$dir")
[ -n "$price" ] && opts+=(--price "$price")
[ "${BUDGET_LOCAL:-0}" = 1 ] || opts+=(--slurm)
# exit status 1 (no valid trial) still leaves a table to read
"$maya" search "${opts[@]}" "$@" > "$dir.txt" || [ $? = 1 ] || exit $?
python3 - "$dir/search.json" "$iterations" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
best = {}
for t in s["trials"]:
    g = t["gpus"] or s["gpus"]
    if t["status"] == "ok" and (g not in best or t["iteration_time_s"] < best[g]["iteration_time_s"]):
        best[g] = t
print(f"{'GPUs':14} {'iteration':>10} {'GPU-h/1k':>9} {'cost/1k':>9} {'hours':>9} {'GPU-hours':>10} {'cost':>11}  configuration")
for g in sorted({t["gpus"] or s["gpus"] for t in s["trials"]}):
    t = best.get(g)
    if not t:
        print(f"{g:14} {'none fits':>10}")
        continue
    knobs = " ".join(f"{k}={v}" for k, v in t["params"].items() if k != "gpus")
    h, c = t["gpu_hours_per_1k_iterations"], t["cost_per_1k_iterations"]
    hours = t["iteration_time_s"] * n / 3600
    cost = f"{c * n / 1000:11.2f}" if c is not None else f"{'-':>11}"
    print(f"{g:14} {t['iteration_time_s'] * 1e3:8.1f}ms {h:9.3f} {(c if c is not None else float('nan')):9.2f} "
          f"{hours:9.1f} {h * n / 1000:10.1f} {cost}  {knobs}")
PY
