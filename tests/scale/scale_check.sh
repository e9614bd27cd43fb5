#!/usr/bin/env bash
# make scale-check: duplicate-rank elimination (docs/dedup.md) at sizes too
# large for `make test`. Each case runs the same job without elimination,
# with --dedup and with --replicas; it checks that the predicted
# iteration agrees with the full run's to within 0.5 % and prints, for each
# run, name=value lines:
#   <case>_<mode>_emulation_wall_s   the workload's wall time (run.conf wall_s)
#   <case>_<mode>_emulation_cpu_s    CPU time of every process of the run but
#                                    maya's post-processing (maya run's children)
#   <case>_<mode>_emulation_peak_mib the most memory (RSS) its processes held at
#                                    once, sampled every 0.2 s
#   <case>_<mode>_post_wall_s, _post_cpu_s, _post_peak_mib   maya report DIR
#                                    alone (collate, estimate, simulate, write)
#   <case>_<mode>_iteration_ms, _emulated_ranks, _error_pct (against full)
# SCALE_CASES picks cases (default: all): mg128 mg256 mg256pp8 mg256iter ddp8 fsdp8
# mg1536e2e mg1536 mg1536auto ddp1024 ddp4096
# (mg256iter: emulation only, 8 and 16 iterations, for the CPU per iteration).
# mg256pp8 is the layout of the 1,536-GPU cases (TP8 x PP8, 1F1B over 8
# micro-batches) with DP4, compared with its full run; mg1536e2e runs it with
# DP24 on 1,536 GPUs end to end with --replicas and --dedup (no full run: 1,536
# processes do not fit). mg1536 (the 1,536-GPU row of Megatron's Table 1) runs
# end to end with --replicas and --dedup too; mg1536auto the same with
# --replicas auto (the layout from maya's own runs of 64 and 128 ranks).
set -u
top=${MAYA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
maya=$top/build/bin/maya
mg=$top/build/tests/workloads/minigpt
py=$top/.venv/bin/python
tmp=${SCALE_TMP:-$(mktemp -d "${TMPDIR:-/tmp}/maya-scale.XXXXXX")}
cases=${SCALE_CASES:-mg128 mg256 mg256pp8 mg256iter ddp8 fsdp8 mg1536e2e mg1536 ddp1024}
failed=0
export OMP_NUM_THREADS=1

# measure NAME DIR -- maya run ARGS: run it, sampling the RSS of its process
# tree; then maya report DIR alone.
measure() {
    local name=$1 dir=$2
    shift 3
    rm -rf "$dir"
    python3 "$top/tests/scale/sample_tree.py" "$tmp/$name.mem" "$@"
    read -r peak cpu rc _ < "$tmp/$name.mem"
    [ "$rc" = 0 ] || { echo "scale-check: $name: maya run failed ($rc): $(tail -5 "$tmp/$name.mem.err")" >&2; failed=1; }
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/$name.post" "$maya" report -q "$dir" > /dev/null 2>&1
    read -r pw pu ps pm < <(tail -1 "$tmp/$name.post")
    local post_cpu wall
    post_cpu=$(echo "$pu + $ps" | bc)
    wall=$(sed -n 's/^wall_s=//p' "$dir/run.conf")
    # maya run's CPU = emulation + its own post-processing, which maya report redoes
    echo "${name}_emulation_wall_s=$wall"
    echo "${name}_emulation_cpu_s=$(echo "$cpu - $post_cpu" | bc)"
    echo "${name}_emulation_peak_mib=$peak"
    echo "${name}_post_wall_s=$pw"
    echo "${name}_post_cpu_s=$post_cpu"
    echo "${name}_post_peak_mib=$((pm / 1024))"
    python3 - "$dir" "$name" <<'PY'
import json, os, sys
d, name = sys.argv[1:3]
r = json.load(open(os.path.join(d, "report.json")))
emulated = sum(1 for x in r["ranks"] if not (x.get("note") or "").startswith("a replica"))
stopped = sum(1 for x in r["ranks"] if (x.get("note") or "").startswith("eliminated"))
print("%s_iteration_ms=%s" % (name, None if r["iteration_time_s"] is None else round(1e3 * r["iteration_time_s"], 4)))
print("%s_emulated_ranks=%d" % (name, emulated))
print("%s_eliminated_ranks=%d" % (name, stopped))
PY
}

# emulation_only NAME DIR -- maya run ARGS: the workload's part of a run,
# stopped when run.conf says it ended (before the post-processing), with the
# sizes of the traces it left.
emulation_only() {
    local name=$1 dir=$2
    shift 3
    rm -rf "$dir"
    python3 "$top/tests/scale/sample_tree.py" "$tmp/$name.mem" --until-ended "$dir/run.conf" "$@"
    read -r peak cpu _ _ < "$tmp/$name.mem"
    echo "${name}_emulation_wall_s=$(sed -n 's/^wall_s=//p' "$dir/run.conf")"
    echo "${name}_emulation_cpu_s=$cpu"
    echo "${name}_emulation_peak_mib=$peak"
    echo "${name}_traces_mib=$(du -sm "$dir/traces" | cut -f1)"
    echo "${name}_emulated_ranks=$(grep -c '^rank\.[0-9]*\.exit=0' "$dir/run.conf" | \
        awk -v r="$(grep -c 'note=a replica' "$dir/run.conf")" '{ print $1 - r }')"
    echo "${name}_eliminated_ranks=$(grep -c 'note=eliminated' "$dir/run.conf")"
    grep -q "^rank\.[0-9]*\.exit=[1-9]\|^rank\.[0-9]*\.signal" "$dir/run.conf" &&
        { echo "scale-check: $name: a rank failed" >&2; failed=1; }
}

# compare CASE MODE: the iteration against the full run's
compare() {
    python3 - "$tmp/$1_full/report.json" "$tmp/$1_$2/report.json" "$1_$2" <<'PY' || failed=1
import json, sys
f, x = (json.load(open(p)) for p in sys.argv[1:3])
if f["iteration_time_s"] is None or x["iteration_time_s"] is None:
    print("scale-check: %s: no iteration time (%s / %s)" % (sys.argv[3], f["error"], x["error"]), file=sys.stderr)
    sys.exit(1)
err = 100 * abs(x["iteration_time_s"] - f["iteration_time_s"]) / f["iteration_time_s"]
print("%s_error_pct=%.3f" % (sys.argv[3], err))
if err >= 0.5:
    print("scale-check: %s: %.3f %% from the full run" % (sys.argv[3], err), file=sys.stderr)
    sys.exit(1)
PY
}

minigpt_case() {
    local name=$1 gpus=$2 repl=$3
    shift 3
    measure "${name}_full" "$tmp/${name}_full" -- "$maya" run -q -g "$gpus" -o "$tmp/${name}_full" -- "$mg" "$@"
    measure "${name}_dedup" "$tmp/${name}_dedup" -- "$maya" run -q --dedup -g "$gpus" -o "$tmp/${name}_dedup" -- "$mg" "$@"
    compare "$name" dedup
    measure "${name}_replicas" "$tmp/${name}_replicas" -- "$maya" run -q --replicas "$repl" --dedup -g "$gpus" \
        -o "$tmp/${name}_replicas" -- "$mg" "$@"
    compare "$name" replicas
}

torch_case() {
    local name=$1 gpus=$2 script=$3
    export MAYA_GPT=8192,4096,32,8,2048 # a 1.6 B-parameter GPT: the GPU bounds the step
    measure "${name}_full" "$tmp/${name}_full" -- "$maya" run -q -g "$gpus" -o "$tmp/${name}_full" -- \
        "$py" "$top/tests/workloads/torch/$script" 8
    measure "${name}_dedup" "$tmp/${name}_dedup" -- "$maya" run -q --dedup -g "$gpus" -o "$tmp/${name}_dedup" -- \
        "$py" "$top/tests/workloads/torch/$script" 8
    compare "$name" dedup
    # DP 8: ranks 0 and 1 run, 2-7 leave PyTorch's start-up at its first communicator
    measure "${name}_replicas" "$tmp/${name}_replicas" -- "$maya" run -q --replicas 8:1 -g "$gpus" \
        -o "$tmp/${name}_replicas" -- "$py" "$top/tests/workloads/torch/$script" 8
    compare "$name" replicas
    unset MAYA_GPT
}

# The CPU an iteration costs once elimination has stopped the duplicates: the
# difference between runs of ITERS and 2 x ITERS iterations, per iteration,
# against the fold factor (ranks per surviving rank).
per_iteration() {
    local name=$1 gpus=$2 repl=$3 iters=$4
    shift 4
    for mode in full dedup replicas; do
        local flags=
        [ $mode = dedup ] && flags=--dedup
        [ $mode = replicas ] && flags="--dedup --replicas $repl"
        for n in $iters $((2 * iters)); do
            emulation_only "${name}_${mode}_$n" "$tmp/${name}_${mode}_$n" -- "$maya" run -q $flags -g "$gpus" \
                -o "$tmp/${name}_${mode}_$n" -- "$mg" "$@" --iters $n > "$tmp/${name}_${mode}_$n.vals"
            cat "$tmp/${name}_${mode}_$n.vals"
        done
        local c1 c2
        c1=$(sed -n 's/.*_emulation_cpu_s=//p' "$tmp/${name}_${mode}_$iters.vals")
        c2=$(sed -n 's/.*_emulation_cpu_s=//p' "$tmp/${name}_${mode}_$((2 * iters)).vals")
        echo "${name}_${mode}_cpu_per_iteration_s=$(echo "scale=4; ($c2 - $c1) / $iters" | bc)"
    done
}

gpu_bound="--hidden 4096 --heads 32 --seq 1024 --layers 8 --iters 6"
pp8="--hidden 4096 --heads 32 --seq 1024 --layers 8 --micro-batches 8 --iters 4"
for c in $cases; do
    case $c in
    mg128) minigpt_case mg128 h100x128 4:8,8:1 --tp 8 --pp 4 $gpu_bound ;;
    mg256) minigpt_case mg256 h100x256 8:8,8:1 --tp 8 --pp 4 $gpu_bound ;;
    mg256pp8) minigpt_case mg256pp8 h200x256 4:8,8:1 --tp 8 --pp 8 $pp8 ;;
    mg1536e2e) measure mg1536e2e_replicas "$tmp/mg1536e2e_replicas" -- "$maya" run -q --replicas 24:8,8:1 --dedup \
        -g h200x1536 -o "$tmp/mg1536e2e_replicas" -- "$mg" --tp 8 --pp 8 $pp8 ;;
    mg256iter) per_iteration mg256iter h100x256 8:8,8:1 8 --tp 8 --pp 4 --hidden 4096 --heads 32 --seq 1024 \
        --layers 8 ;;
    ddp8) torch_case ddp8 h100x8 train_ddp_gpt.py ;;
    ddp1024|ddp4096)
        # PyTorch DDP end to end on 1,024 or 4,096 GPUs (128 or 512 nodes), every
        # rank but two a data-parallel replica: two of those start, maya run
        # joins PyTorch's store for the others, which never start (docs/dedup.md)
        n=${c#ddp}
        export MAYA_GPT=8192,4096,32,8,2048
        measure "${c}_replicas" "$tmp/${c}_replicas" -- "$maya" run -q --replicas "$n:1" -g "h100x$n" \
            -o "$tmp/${c}_replicas" -- "$py" "$top/tests/workloads/torch/train_ddp_gpt.py" 8
        echo "${c}_replicas_processes_started=$(grep -c '^rank\.[0-9]*\.pid=' "$tmp/${c}_replicas/run.conf")"
        unset MAYA_GPT ;;
    fsdp8) torch_case fsdp8 h100x8 train_fsdp_gpt.py ;;
    mg1536)
        # Megatron-LM Table 1, 145.6 B: hidden 12288, 96 heads, 80 layers, seq 2048,
        # micro-batch 2, global batch 2304 = 48 micro-batches x 2 x DP 24, on H200s:
        # minigpt keeps every activation (no recomputation, as Megatron used), which
        # does not fit an 80 GB GPU at this size. End to end: the job trace holds
        # the 1,504 replicas and the stopped ranks as references (docs/dedup.md).
        measure mg1536_replicas "$tmp/mg1536_replicas" -- "$maya" run -q --replicas 24:8,8:1 --dedup \
            -g h200x1536 -o "$tmp/mg1536_replicas" -- "$mg" --tp 8 --pp 8 --hidden 12288 --heads 96 --layers 80 \
            --seq 2048 --micro-batch-size 2 --micro-batches 48 --vocab 51200 --iters 3 ;;
    mg1536auto)
        # the same with the layout found by maya (--replicas auto: runs of 64 and
        # 128 ranks, stopped once their classes are written, in DIR/probes);
        # emulation_wall_s is the job's own run, probes_wall_s theirs
        measure mg1536auto_replicas "$tmp/mg1536auto_replicas" -- "$maya" run -q --replicas auto --dedup \
            -g h200x1536 -o "$tmp/mg1536auto_replicas" -- "$mg" --tp 8 --pp 8 --hidden 12288 --heads 96 --layers 80 \
            --seq 2048 --micro-batch-size 2 --micro-batches 48 --vocab 51200 --iters 3
        echo "mg1536auto_probes_wall_s=$(cat "$tmp"/mg1536auto_replicas/probes/*/run.conf | sed -n 's/^wall_s=//p' |
            paste -sd+ | bc)"
        echo "mg1536auto_layout=$(sed -n 's/^replicas=//p' "$tmp/mg1536auto_replicas/traces/rank-1535.eliminated")" ;;
    *) echo "scale-check: unknown case $c (mg128 mg256 mg256pp8 mg256iter ddp8 fsdp8 mg1536e2e mg1536 mg1536auto" \
            "ddp1024 ddp4096)" >&2
        exit 2 ;;
    esac
done
[ -n "${SCALE_TMP:-}" ] || rm -rf "$tmp"
exit $failed
