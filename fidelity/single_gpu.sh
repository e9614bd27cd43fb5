#!/usr/bin/env bash
# Single-GPU rows: published single-GPU training figures of real programs
# (fidelity/data/single_gpu.csv, each with its source), re-created under
# maya run. Each row's program and configuration are named below.
. "$(dirname "$0")/lib.sh"

csv=$FID_DIR/data/single_gpu.csv
[ -r "$csv" ] || { echo "single_gpu.sh: cannot read $csv" >&2; exit 2; }

# row_cmd ROW: the maya run options and the program of a row (GPU: its gpu column)
row_cmd() {
    case $1 in
        megatron_1.2B_v100)  # Megatron-LM's 1.2 B GPT-2 as its 2019 code ran it, with the bundled minigpt
            cmd=(-g "${gpu}x1" -- "$WORKLOADS/minigpt" --micro-batch-size 8 --micro-batches 1 --seq 1024 --hidden 1536
                --heads 16 --layers 40 --vocab 51200 --fp16 --recompute full --bias --hidden-dropout 0.1
                --attention-dropout 0.1 --fp32-cross-entropy --tie-embeddings --iters 3) ;;
        resnet50_amp_*|resnet50_tf32_*|resnet50_fp32_*)  # DeepLearningExamples' ResNet-50 benchmark
            batch=256
            local amp=()
            case $1 in
                resnet50_amp_*) amp=(--amp) ;;
                resnet50_fp32_v100) batch=112 ;;
            esac
            cmd=(-g "${gpu}x1" -- "$PY" "$FRAMEWORK_WORKLOADS/resnet50_train.py" --batch "$batch" --steps 6 "${amp[@]}") ;;
        *) return 1 ;;
    esac
}

grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r row gpu metric published; do
    fid_wanted "$row" || continue
    if ! row_cmd "$row"; then
        fid_skip single_gpu "$row" "single_gpu.sh does not know how to run it"
        continue
    fi
    dir=$FIDELITY_OUT/single_gpu/$row
    echo "single_gpu $row: maya run ${cmd[*]}" >&2
    if ! fid_run "$dir" 1 "${cmd[@]}"; then
        fid_fail single_gpu "$row" "$FID_WHY"
        continue
    fi
    it=$(fid_iter_s "$dir")
    case $metric in
        iteration_ms) pred=$(awk -v t="$it" 'BEGIN { printf "%.6g", t * 1e3 }') ;;
        images_per_s) pred=$(awk -v t="$it" -v b="$batch" 'BEGIN { printf "%.6g", b / t }') ;;
        *) fid_fail single_gpu "$row" "unknown metric $metric"; continue ;;
    esac
    fid_breakdown "$dir"
    fid_row single_gpu "$row" "$published" "$pred"
done
