#!/usr/bin/env bash
# torchtitan's published H100 rows (fidelity/data/torchtitan.csv, with their
# source): Llama 3.1 8B trained with FSDP2 on 8 and 128 GPUs, re-created by
# tests/workloads/frameworks/llama_fsdp_train.py (plain PyTorch, the same
# model, sharding, activation checkpointing and optimizer), under maya run on
# the GPUs and hosts the source names (fidelity/data/hwspecs: H100 96 GB
# HBM2e at 500 W in Grand Teton hosts). Throughput rows compare tokens per
# second and GPU; memory rows the largest peak of any GPU (GiB) with what
# torchtitan printed. The 128-GPU rows emulate 2 of the ranks
# (--replicas 128:1: data-parallel replicas) and rebuild the others; of those
# only the first few start (maya run joins PyTorch's store for the rest,
# docs/dedup.md).
. "$(dirname "$0")/lib.sh"

csv=$FID_DIR/data/torchtitan.csv
[ -r "$csv" ] || { echo "torchtitan.sh: cannot read $csv" >&2; exit 2; }

# The source's GPU and cluster, beside the installed descriptions.
hw=$FIDELITY_OUT/hwspecs
rm -rf "$hw"
mkdir -p "$hw/gpus" "$hw/clusters"
ln -s "$MAYA_TOP"/hwspecs/gpus/*.conf "$FID_DIR"/data/hwspecs/gpus/*.conf "$hw/gpus/"
ln -s "$MAYA_TOP"/hwspecs/clusters/*.conf "$FID_DIR"/data/hwspecs/clusters/*.conf "$hw/clusters/"
export MAYA_HWSPEC_DIR=$hw

declare -A ran # run directory of each GPU count, shared by its throughput and memory rows
grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r row gpus metric published; do
    fid_wanted "$row" || continue
    nproc=$gpus reps=()
    if [ "$gpus" -gt 8 ]; then
        nproc=2 reps=(--replicas "$gpus:1")
    fi
    if [ "$gpus" -gt "$FIDELITY_MAX_GPUS" ] || [ "$nproc" -gt "$FIDELITY_MAX_RANKS" ]; then
        fid_skip torchtitan "$row" "$gpus GPUs: above FIDELITY_MAX_GPUS=$FIDELITY_MAX_GPUS"
        continue
    fi
    dir=$FIDELITY_OUT/torchtitan/llama3_8b_${gpus}gpu
    if [ -z "${ran[$gpus]:-}" ]; then
        cmd=(-g "h100-96gb-500wx$gpus" --cluster grand-teton-h100 "${reps[@]}" --
            "$PY" "$FRAMEWORK_WORKLOADS/llama_fsdp_train.py" --steps 4)
        echo "torchtitan $row: maya run ${cmd[*]}" >&2
        if ! fid_run "$dir" "$nproc" "${cmd[@]}"; then
            ran[$gpus]="failed: $FID_WHY"
        else
            ran[$gpus]=ok
            fid_breakdown "$dir"
        fi
    fi
    if [ "${ran[$gpus]}" != ok ]; then
        fid_fail torchtitan "$row" "${ran[$gpus]#failed: }"
        continue
    fi
    case $metric in
        tokens_per_s_per_gpu)
            it=$(fid_iter_s "$dir")
            # llama_fsdp_train.py's default: 2 sequences of 8192 tokens a rank and step
            pred=$(awk -v t="$it" 'BEGIN { printf "%.6g", 2 * 8192 / t }') ;;
        memory_gib)
            pred=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_memory_bytes"] / 2**30)' \
                "$dir/report.json") ;;
        *) fid_fail torchtitan "$row" "unknown metric $metric"; continue ;;
    esac
    fid_row torchtitan "$row" "$published" "$pred"
done
