#!/usr/bin/env bash
# Hand-written GEMM kernels (fidelity/data/gemm_kernels.csv, measured on an
# H100, with their source): kernels nobody wrote for maya, priced from their
# own code. The suite compiles them from a checkout of their repository,
# which this one does not carry:
#   git clone https://github.com/waynehacking8/blackwell-tensorcore-kernels DIR
#   FIDELITY_GEMM_KERNELS=DIR fidelity/run gemm_kernels
# Without it every row is skipped, saying so. fidelity/src/gemm_kernels_driver.cu
# runs one kernel a step; the prediction is one step's time.
. "$(dirname "$0")/lib.sh"

csv=$FID_DIR/data/gemm_kernels.csv
[ -r "$csv" ] || { echo "gemm_kernels.sh: cannot read $csv" >&2; exit 2; }
src=${FIDELITY_GEMM_KERNELS:-}
why=
if [ -z "$src" ]; then
    why="needs the kernels' sources: git clone https://github.com/waynehacking8/blackwell-tensorcore-kernels DIR, then FIDELITY_GEMM_KERNELS=DIR"
elif [ ! -r "$src/src/gemm_wmma.cu" ]; then
    why="FIDELITY_GEMM_KERNELS=$src holds no src/gemm_wmma.cu (expected a checkout of waynehacking8/blackwell-tensorcore-kernels)"
fi
drv=$FIDELITY_OUT/gemm_kernels/driver
if [ -z "$why" ]; then
    mkdir -p "$(dirname "$drv")"
    NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
    if ! "$NVCC" -std=c++17 -cudart shared -gencode arch=compute_90,code=[sm_90,compute_90] -I"$src/include" \
        -o "$drv" "$FID_DIR/src/gemm_kernels_driver.cu" "$src/src/gemm_naive.cu" "$src/src/gemm_tiled.cu" \
        "$src/src/gemm_wmma.cu" > "$drv.log" 2>&1; then
        echo "gemm_kernels.sh: building the driver failed ($drv.log):" >&2
        tail -5 "$drv.log" >&2
        exit 1
    fi
fi

grep -v '^#' "$csv" | tail -n +2 | while IFS=, read -r row gpu kernel size published; do
    fid_wanted "$row" || continue
    if [ -n "$why" ]; then
        fid_skip gemm_kernels "$row" "$why"
        continue
    fi
    fid_ms_row gemm_kernels "$row" "$published" -g "${gpu}x1" --iteration-marker step -- "$drv" "$kernel" "$size"
done
