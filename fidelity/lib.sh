# Helpers the fidelity suites share (sourced by fidelity/*.sh; not a suite).
# A suite prints one line per row on stdout, through fid_row / fid_skip /
# fid_fail; fidelity/run collects them and writes each suite's summary.
# Progress and per-row breakdowns go to stderr.
set -u

FID_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${MAYA_TOP:=$(cd "$FID_DIR/.." && pwd)}"
: "${MAYA_BUILD:=$MAYA_TOP/build}"
MAYA=$MAYA_BUILD/bin/maya
WORKLOADS=$MAYA_BUILD/tests/workloads
# PyTorch programs (make fidelity installs the venv)
PY=$MAYA_TOP/.venv/bin/python
FRAMEWORK_WORKLOADS=$MAYA_TOP/tests/workloads/frameworks
# nvdisasm, so that PyTorch's SASS-only kernels are priced from their code
# (make fidelity installs it; a value the caller set wins)
NVDISASM_TOOL=$MAYA_TOP/.tools/nvdisasm/nvidia/cu13/bin/nvdisasm
if [ -z "${MAYA_NVDISASM+set}" ] && [ -x "$NVDISASM_TOOL" ]; then
    export MAYA_NVDISASM=$NVDISASM_TOOL
fi
# FIDELITY_OUT: where the rows' run directories go
: "${FIDELITY_OUT:=$MAYA_BUILD/fidelity}"
# FIDELITY_MAX_RANKS: rows that need more emulated processes are skipped
# (each rank is a process on this machine; 256 take a few minutes on 2 CPUs)
: "${FIDELITY_MAX_RANKS:=256}"
# FIDELITY_MAX_GPUS: rows of more GPUs are skipped even when few of their
# ranks are emulated, to bound make fidelity's time: 512 GPUs took about 5
# minutes and 1.5 GB on 2 CPUs when rebuilt ranks were copied in full; they
# are references now (docs/dedup.md: 1,536 GPUs about 6 minutes, 4.6 GB)
: "${FIDELITY_MAX_GPUS:=512}"
# FIDELITY_RUN_OPTS: options added to every maya run (e.g. --dedup)
: "${FIDELITY_RUN_OPTS:=}"
# FIDELITY_ROWS: an extended regular expression; only rows whose name matches run
: "${FIDELITY_ROWS:=}"
# FIDELITY_KEEP=1 keeps each row's traces and timeline (large: ~7 MB a rank)
: "${FIDELITY_KEEP:=0}"

for v in FIDELITY_MAX_RANKS FIDELITY_MAX_GPUS; do
    case ${!v} in
        '' | *[!0-9]*) echo "fidelity: $v must be a whole number, got '${!v}'" >&2; exit 2 ;;
    esac
done

# fid_wanted ROW: whether FIDELITY_ROWS selects the row
fid_wanted() {
    [ -z "$FIDELITY_ROWS" ] || [[ $1 =~ $FIDELITY_ROWS ]]
}

# fid_row SUITE ROW PUBLISHED PREDICTED: the row's line, error in %
fid_row() {
    awk -v s="$1" -v r="$2" -v p="$3" -v y="$4" 'BEGIN {
        printf "fidelity %s %s published=%s predicted=%.4g error=%+.1f%%\n", s, r, p, y, (y - p) / p * 100 }'
}

# fid_skip SUITE ROW REASON / fid_fail SUITE ROW REASON
fid_skip() { echo "fidelity $1 $2 skipped: $3"; }
fid_fail() { echo "fidelity $1 $2 failed: $3"; }

# fid_run DIR NPROC ARGS...: maya run -q -o DIR ARGS (FIDELITY_RUN_OPTS added
# before the workload's --); 0 when the run and its report succeeded and no
# rank ran out of memory, else 1 with the reason in FID_WHY.
fid_run() {
    local dir=$1 nproc=$2
    shift 2
    local opts=() cmd=() seen=0 a
    for a in "$@"; do  # split at the first --: maya's options, then the workload
        if [ $seen = 0 ] && [ "$a" = -- ]; then seen=1; continue; fi
        if [ $seen = 0 ]; then opts+=("$a"); else cmd+=("$a"); fi
    done
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    # shellcheck disable=SC2086
    "$MAYA" run -q -o "$dir" "${opts[@]}" $FIDELITY_RUN_OPTS -- "${cmd[@]}" > "$dir.log" 2>&1
    local rc=$?
    FID_WHY=
    if [ ! -s "$dir/report.json" ]; then
        FID_WHY="maya run exit $rc, no report ($(tail -1 "$dir.log"))"
        return 1
    fi
    FID_WHY=$(python3 - "$dir/report.json" "$rc" <<'PY'
import json, sys
r, rc = json.load(open(sys.argv[1])), int(sys.argv[2])
if r.get("oom"):
    print("out of GPU memory (peak %.2f GiB of %.2f GiB)" % (r["peak_memory_bytes"] / 2**30, r["gpu_memory_bytes"] / 2**30))
elif rc != 0 or not r.get("simulated") or not r.get("iteration_time_s"):
    print("maya run exit %d: %s" % (rc, r.get("error") or r.get("cause") or "no iteration time"))
PY
)
    [ -z "$FID_WHY" ]
}

# fid_minigpt_table SUITE CSV HEADER: a minigpt suite's checks before its
# rows: CSV readable with the columns HEADER, minigpt built; else the
# suite stops (exit 2) saying which
fid_minigpt_table() {
    local got
    [ -r "$2" ] || { echo "$1.sh: cannot read $2" >&2; exit 2; }
    [ -x "$WORKLOADS/minigpt" ] || { echo "$1.sh: $WORKLOADS/minigpt is not built (make)" >&2; exit 2; }
    got=$(grep -v '^#' "$2" | head -1)
    [ "$got" = "$3" ] || { echo "$1.sh: $2: expected the columns $3, found $got" >&2; exit 2; }
}

# fid_minigpt_scale GPUS TP PP DP FOLD_TP: how a minigpt row of GPUS ranks
# runs. Up to FIDELITY_MAX_RANKS GPUs every rank is emulated; beyond, the
# row declares its replicas (minigpt orders ranks TP, DP, PP as Megatron
# does): only the ranks whose DP digit (and, FOLD_TP=1, TP digit) is 0 or 1
# are emulated, the others rebuilt from them (maya run --replicas,
# docs/dedup.md) and replayed with --fold similar (the emulated ranks of a
# stage measure slightly different host gaps; exact folding would replay
# each). Sets FID_SCALE (maya run's options) and FID_PROCS (the processes
# that run).
fid_minigpt_scale() {
    local gpus=$1 tp=$2 pp=$3 dp=$4 fold_tp=$5 spec=
    FID_SCALE=() FID_PROCS=$gpus
    [ "$gpus" -gt "$FIDELITY_MAX_RANKS" ] || return 0
    FID_SCALE=(--fold similar)
    [ "$dp" -gt 1 ] && spec="$dp:$tp"
    if [ "$tp" -gt 1 ] && [ "$fold_tp" = 1 ]; then
        spec="${spec:+$spec,}$tp:1"
        FID_PROCS=$((pp * (dp > 1 ? 2 : 1) * 2))
    else  # TP not folded (or 1)
        FID_PROCS=$((pp * (dp > 1 ? 2 : 1) * tp))
    fi
    [ -n "$spec" ] && FID_SCALE+=(--replicas "$spec")
    return 0
}

# fid_minigpt_row_ok SUITE ROW GPUS TP PP DP BATCH MICRO_BATCH FOLD_TP:
# whether a minigpt row can run here; if not, its skip line is printed and
# the status is 1. Else FID_SCALE and FID_PROCS are set (fid_minigpt_scale).
fid_minigpt_row_ok() {
    local suite=$1 row=$2 gpus=$3 tp=$4 pp=$5 dp=$6 gbs=$7 mbs=$8
    if [ $((tp * pp * dp)) != "$gpus" ] || [ $((gbs % (mbs * dp))) != 0 ]; then
        fid_skip "$suite" "$row" "inconsistent row: tp x pp x dp = $((tp * pp * dp)), $gpus GPUs, batch $gbs, micro-batch $mbs"
        return 1
    fi
    fid_minigpt_scale "$gpus" "$tp" "$pp" "$dp" "$9"
    if [ "$FID_PROCS" -gt "$FIDELITY_MAX_RANKS" ]; then
        fid_skip "$suite" "$row" "needs $FID_PROCS processes even with its replicas declared, more than FIDELITY_MAX_RANKS=$FIDELITY_MAX_RANKS"
        return 1
    fi
    if [ "$gpus" -gt "$FIDELITY_MAX_GPUS" ]; then
        fid_skip "$suite" "$row" "$gpus GPUs, more than FIDELITY_MAX_GPUS=$FIDELITY_MAX_GPUS (minutes each end to end; raise it to run them)"
        return 1
    fi
}

# fid_minigpt_run SUITE ROW CLUSTER GPU GPUS FLOPS PUBLISHED ARGS...: maya
# run of minigpt ARGS on GPUS x GPU of CLUSTER (with fid_minigpt_row_ok's
# FID_SCALE) into FIDELITY_OUT/SUITE/ROW, then the row's line: TFLOP/s per
# GPU, FLOPS (an iteration's count) over the predicted iteration time (or
# the row's failure); its breakdown on stderr
fid_minigpt_run() {
    local suite=$1 row=$2 cluster=$3 gpu=$4 gpus=$5 flops=$6 published=$7 start=$SECONDS it pred
    shift 7
    local dir=$FIDELITY_OUT/$suite/$row
    echo "$suite $row: maya run --cluster $cluster -g ${gpu}x$gpus ${FID_SCALE[*]} -- minigpt $*" >&2
    if ! fid_run "$dir" "$FID_PROCS" --cluster "$cluster" -g "${gpu}x$gpus" "${FID_SCALE[@]}" -- "$WORKLOADS/minigpt" "$@"; then
        fid_fail "$suite" "$row" "$FID_WHY"
        return
    fi
    it=$(fid_iter_s "$dir")
    pred=$(awk -v F="$flops" -v t="$it" -v g="$gpus" 'BEGIN { printf "%.6g", F / (t * g) / 1e12 }')
    echo "$suite $row: iteration $it s, $((SECONDS - start)) s to run" >&2
    fid_breakdown "$dir"
    fid_row "$suite" "$row" "$published" "$pred"
}

# fid_iter_s DIR: the predicted steady-state iteration time, seconds
fid_iter_s() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["iteration_time_s"])' "$1/report.json"
}

# fid_breakdown DIR: where rank 0's time goes (stderr), then drop the bulky
# files unless FIDELITY_KEEP=1
fid_breakdown() {
    python3 "$FID_DIR/breakdown.py" "$1" >&2 || true
    [ "$FIDELITY_KEEP" = 1 ] || rm -rf "$1/traces" "$1/timeline.json" "$1/timeline.svg" "$1/job.mtrace" "$1/job.mtrace.inputs"
}

# fid_ms_row SUITE ROW PUBLISHED ARGS...: a row whose prediction is one
# steady iteration in ms: maya run ARGS into FIDELITY_OUT/SUITE/ROW, then the
# row's line (or its failure), its breakdown on stderr
fid_ms_row() {
    local suite=$1 row=$2 published=$3
    shift 3
    local dir=$FIDELITY_OUT/$suite/$row pred
    echo "$suite $row: maya run $*" >&2
    if ! fid_run "$dir" 1 "$@"; then
        fid_fail "$suite" "$row" "$FID_WHY"
        return
    fi
    pred=$(awk -v t="$(fid_iter_s "$dir")" 'BEGIN { printf "%.6g", t * 1e3 }')
    fid_breakdown "$dir"
    fid_row "$suite" "$row" "$published" "$pred"
}
