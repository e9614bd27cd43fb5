#!/bin/sh
# Install nvdisasm (the nvidia-cuda-nvdisasm wheel from PyPI, pinned) into
# .tools/nvdisasm/, for the tests that read SASS-only kernels (PyTorch's CUDA
# wheels carry no PTX; docs/kernel-cost.md). tests/lib.sh points the
# emulator at it (MAYA_NVDISASM). A tool in nvidia/cu13/bin, no library;
# kept out of .venv, which other checkouts may share. Idempotent; without
# network the tests that need it say so and skip.
set -u
cd "$(dirname "$0")/.."
VERSION=${MAYA_NVDISASM_VERSION:-13.5.37}
dir=.tools/nvdisasm
bin=$dir/nvidia/cu13/bin/nvdisasm
if [ -x "$bin" ] && [ -d "$dir/nvidia_cuda_nvdisasm-$VERSION.dist-info" ]; then
    exit 0
fi
echo "tools: installing nvdisasm $VERSION into $dir" >&2
rm -rf "$dir"
if ! python3 -m pip install -q --no-deps --disable-pip-version-check --target "$dir" \
        "nvidia-cuda-nvdisasm==$VERSION" >/dev/null 2>&1 || [ ! -x "$bin" ]; then
    echo "tools: could not install nvidia-cuda-nvdisasm==$VERSION (no network?); the SASS tests will skip" >&2
    rm -rf "$dir"
fi
exit 0
