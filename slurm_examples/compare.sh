#!/bin/bash
# For site admins: what would one job cost on the GPU types and counts the
# site could buy or reserve? Runs the job once per configuration on CPU nodes
# under maya (sbatch --maya-emulate, man maya-srun), in parallel, and prints
# one line per configuration: steady-state iteration time, hours and GPU-hours
# for ITERATIONS iterations, peak GPU memory, out-of-memory.
#
#   compare.sh [-n ITERATIONS] GPUxCOUNT... -- CMD [ARGS...]
#
#   e.g.  compare.sh -n 10000 h100x8 a100x8 b200x8 h100x16 -- python train.py --max-steps 5
#
# CMD runs a few iterations; it is started with srun, whose tasks run their
# share of the emulated ranks. The jobs' size on the CPU nodes comes from
# COMPARE_SBATCH (default "--ntasks=1"), e.g. COMPARE_SBATCH="-N2 -c16".
# Each job's output and reports stay in the current directory
# (maya-compare-<jobid>.out, .maya.txt, .maya.json).
set -eu

usage() {
    echo "usage: $0 [-n ITERATIONS] GPUxCOUNT... -- CMD [ARGS...]" >&2
    [ $# -gt 0 ] && echo "$0: $*" >&2
    exit 2
}
iterations=1000
configs=()
while [ $# -gt 0 ]; do
    case $1 in
    -n) [ $# -ge 2 ] || usage "-n needs a number"; iterations=$2; shift 2 ;;
    --) shift; break ;;
    -*) usage "unknown option $1" ;;
    *) configs+=("$1"); shift ;;
    esac
done
[ ${#configs[@]} -gt 0 ] && [ $# -gt 0 ] || usage
case $iterations in '' | *[!0-9]*) usage "ITERATIONS must be a whole number, not \"$iterations\"" ;; esac
cmd=$(printf '%q ' "$@")

# Submit every configuration first: a bad one is refused here, at submission.
jobs=()
for c in "${configs[@]}"; do
    # shellcheck disable=SC2086
    job=$(sbatch --parsable --job-name="maya-$c" --output=maya-compare-%j.out --maya-emulate="$c" \
        ${COMPARE_SBATCH:---ntasks=1} --wrap "srun $cmd" < /dev/null) || {
        [ ${#jobs[@]} -gt 0 ] && scancel "${jobs[@]%%;*}"
        exit 1
    }
    jobs+=("${job%%;*}")
    echo "compare: $c is job ${job%%;*}" >&2
done

# Wait for the reports: they come after each job, once its epilog has run.
for job in "${jobs[@]}"; do
    until [ -f "maya-compare-$job.maya.json" ] || [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; do
        sleep 1
    done
done

reports=()
for job in "${jobs[@]}"; do reports+=("maya-compare-$job.maya.json"); done
python3 - "$iterations" "${configs[@]}" -- "${reports[@]}" <<'EOF'
import json, os, sys

args = sys.argv[1:]
n = int(args[0])
sep = args.index("--")
configs, reports = args[1:sep], args[sep + 1:]
print(f"{'config':<14} {'iteration':>12} {'hours':>9} {'GPU-hours':>10} {'peak memory':>12}  note  "
      f"({n} iterations)")
for c, path in zip(configs, reports):
    if not os.path.exists(path):
        print(f"{c:<14} {'-':>12} {'-':>9} {'-':>10} {'-':>12}  no report")
        continue
    r = json.load(open(path))
    peak = r.get("peak_memory_bytes")
    mem = f"{peak / 2**30:.2f} GiB" if peak is not None else "-"
    it = r.get("iteration_time_s")
    if not r.get("simulated") or it is None:
        print(f"{c:<14} {'-':>12} {'-':>9} {'-':>10} {mem:>12}  not simulated: {r.get('error')}")
        continue
    hours = it * n / 3600
    note = "OUT OF MEMORY" if r.get("oom") else ("workload failed" if not r.get("workload_ok", True) else "")
    print(f"{c:<14} {it * 1e3:>9.3f} ms {hours:>9.3f} {hours * r['gpu_count']:>10.3f} {mem:>12}  {note}")
EOF
