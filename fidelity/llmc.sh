#!/usr/bin/env bash
# llm.c's GPT-2 training (fidelity/data/llmc.csv, step times its author
# published for 8 x A100 and 8 x H100 runs): a CUDA C program nobody wrote
# for maya, its own kernels priced from their code, cuBLASLt GEMMs, cuDNN's
# flash attention, NCCL with ZeRO-1. The suite builds train_gpt2.cu from
# checkouts this repository does not carry:
#   git clone https://github.com/karpathy/llm.c LLMC
#   git clone -b v1.5.2 https://github.com/NVIDIA/cudnn-frontend FRONTEND
#   FIDELITY_LLMC=LLMC FIDELITY_CUDNN_FRONTEND=FRONTEND fidelity/run llmc
# Without them every row is skipped, saying so. The build is the one llm.c's
# Makefile makes with USE_CUDNN=1, for sm_80 and sm_90, linked with the
# shared CUDA runtime (maya emulates that one) and with
# fidelity/src/llmc_cuda13.h force-included (CUDA 13's cudaMemAdvise).
# Each row runs its script's arguments for 5 steps on token files of the
# format llm.c reads (made here: the tokens' values do not change the work),
# its 8 ranks as data-parallel replicas (--replicas 8:1: the 1558M model's
# host-side initialisation takes 3 GB a process); the prediction is one
# steady step.
. "$(dirname "$0")/lib.sh"

csv=$FID_DIR/data/llmc.csv
[ -r "$csv" ] || { echo "llmc.sh: cannot read $csv" >&2; exit 2; }
src=${FIDELITY_LLMC:-} fe=${FIDELITY_CUDNN_FRONTEND:-}
get="git clone https://github.com/karpathy/llm.c LLMC; git clone -b v1.5.2 https://github.com/NVIDIA/cudnn-frontend FRONTEND; then FIDELITY_LLMC=LLMC FIDELITY_CUDNN_FRONTEND=FRONTEND"
why=
if [ -z "$src" ] || [ -z "$fe" ]; then
    why="needs llm.c's and cuDNN frontend's sources: $get"
elif [ ! -r "$src/train_gpt2.cu" ] || [ ! -r "$src/llmc/cudnn_att.cpp" ]; then
    why="FIDELITY_LLMC=$src holds no train_gpt2.cu and llmc/cudnn_att.cpp (expected a checkout of karpathy/llm.c)"
elif [ ! -r "$fe/include/cudnn_frontend.h" ]; then
    why="FIDELITY_CUDNN_FRONTEND=$fe holds no include/cudnn_frontend.h (expected a checkout of NVIDIA/cudnn-frontend)"
fi

out=$FIDELITY_OUT/llmc
bin=$out/train_gpt2cu
if [ -z "$why" ]; then
    mkdir -p "$out"
    NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
    flags=(-std=c++17 -O3 --use_fast_math -cudart shared
        -gencode 'arch=compute_80,code=[sm_80,compute_80]' -gencode 'arch=compute_90,code=[sm_90,compute_90]'
        -DENABLE_CUDNN -DENABLE_BF16 -DMULTI_GPU -I"$src" -I"$fe/include" -include "$FID_DIR/src/llmc_cuda13.h")
    # built again when a source is newer than the binary
    if [ ! -x "$bin" ] || [ -n "$(find "$src/train_gpt2.cu" "$src/llmc" "$FID_DIR/src/llmc_cuda13.h" -newer "$bin" -print -quit)" ]; then
        echo "llmc: building $bin" >&2
        if ! { "$NVCC" "${flags[@]}" -c -o "$out/cudnn_att.o" "$src/llmc/cudnn_att.cpp" &&
               "$NVCC" "${flags[@]}" -o "$bin.tmp" "$src/train_gpt2.cu" "$out/cudnn_att.o" \
                   -lcublas -lcublasLt -lcudnn -lnccl -L"$MAYA_BUILD/lib/maya" -l:libnvidia-ml.so.1 &&
               mv "$bin.tmp" "$bin"; } > "$out/build.log" 2>&1; then
            echo "llmc.sh: building train_gpt2.cu failed ($out/build.log):" >&2
            grep -m5 -i error "$out/build.log" >&2
            exit 1
        fi
    fi
    # token files as llm.c's data loader reads them: a header of 256 int32
    # (magic 20240520, version 1, token count), then uint16 tokens; each
    # holds at least a step of 8 x 64 x 1,024 tokens, as the loader asks
    data=$out/data
    if [ ! -s "$data/val_000000.bin" ] || [ "$(stat -c %s "$data/val_000000.bin")" -lt 1200000 ]; then
        mkdir -p "$data"
        python3 - "$data" <<'PY' || exit 1
import array, os, sys
for name, n in (("train", 2_200_000), ("val", 600_000)):
    head = array.array("i", [20240520, 1, n] + [0] * 253)
    toks = array.array("H", ((i * 7919) % 50257 for i in range(n)))
    path = os.path.join(sys.argv[1], name + "_000000.bin")
    with open(path + ".tmp", "wb") as f:
        head.tofile(f)
        toks.tofile(f)
    os.replace(path + ".tmp", path)
PY
    fi
fi

grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r row gpu depth b total extra published; do
    fid_wanted "$row" || continue
    if [ -n "$why" ]; then
        fid_skip llmc "$row" "$why"
        continue
    fi
    dir=$out/$row
    rm -rf "$dir.sync" "$dir.logs"
    mkdir -p "$dir.sync"
    # the script's arguments; each rank its own -pr (NCCL's id through a file)
    # shellcheck disable=SC2086
    args=(-i "$data/train_*.bin" -j "$data/val_*.bin" -o "$dir.logs" -e "$depth" -b "$b" -t 1024 -d "$total"
        -r 0 -z 1 -c 0.1 -l 0.0006 -u 700 -x 5 -v 1000 -m 1 -s 0 -h 0 -n 0 -y 0 $extra -pi fs -pf "$dir.sync")
    cmd=(-g "${gpu}x8" --replicas 8:1 -- sh -c 'exec "$0" "$@" -pn "$WORLD_SIZE" -pr "$RANK"' "$bin" "${args[@]}")
    echo "llmc $row: maya run ${cmd[*]}" >&2
    if ! fid_run "$dir" 2 "${cmd[@]}"; then
        fid_fail llmc "$row" "$FID_WHY"
        continue
    fi
    pred=$(awk -v t="$(fid_iter_s "$dir")" 'BEGIN { printf "%.6g", t * 1e3 }')
    fid_breakdown "$dir"
    fid_row llmc "$row" "$published" "$pred"
done
