#!/bin/sh
# Create .venv/ with the CUDA build of PyTorch (and Triton) from PyPI, for the
# PyTorch tests, and the frameworks the framework tests run (tests/frameworks,
# docs/compatibility.md). Idempotent: a venv that already has the pinned
# versions is left alone; one that lacks only the frameworks gets them added.
#
# torch's own nvidia-* wheels are NOT installed: maya's stand-in libraries
# take the place of every CUDA library torch loads (see README.md), and
# torch's RPATH would otherwise find the real ones before maya's. For the
# same reason every package goes in with --no-deps and its dependencies are
# named here, pinned: pip's resolver would otherwise pull nvidia-* wheels
# (DeepSpeed, torchvision) or replace torch.
set -eu
cd "$(dirname "$0")/.."
TORCH_VERSION=${MAYA_TORCH_VERSION:-2.15.0}
TRITON_VERSION=${MAYA_TRITON_VERSION:-3.9.0}
venv=.venv
py=$venv/bin/python

# The frameworks, at versions tested with torch 2.15.0 (docs/compatibility.md).
# torchvision 0.29.2 is built for torch 2.14: its compiled ops (nms, roi_align,
# image decoding) do not load against 2.15 and it says so in a warning; its
# models are plain Python and work.
FRAMEWORKS="torchvision==0.29.2 transformers==5.24.0 accelerate==1.15.0
    deepspeed==0.19.8 megatron-core==0.16.1"
# Their pure-Python (or self-contained) dependencies, as pip resolves them
# against torch 2.15.0, minus nvidia-* / cuda-*.
FRAMEWORK_DEPS="huggingface-hub==2.4.0 hf-xet==1.8.0 tokenizers==0.23.3
    safetensors==0.8.0 regex==2026.11.19 PyYAML==6.0.4 packaging==26.4
    tqdm==4.70.1 pillow==13.0.0 click==8.5.1 httpx2==2.16.2 httpcore2==2.16.2
    anyio==4.16.0 h11==0.16.0 idna==3.20 truststore==0.10.5 typer==0.29.2
    annotated-doc==0.0.7 rich==15.0.0 Pygments==2.21.0 markdown-it-py==4.3.0
    mdurl==0.1.2 shellingham==1.5.4 pydantic==2.14.4 pydantic-core==2.50.5
    annotated-types==0.8.0 typing-inspection==0.4.5 einops==0.8.2 hjson==3.1.0
    msgpack==1.2.4 ninja==1.13.2 psutil==7.2.2 py-cpuinfo==9.0.0"

# pinned_ok SPEC...: every NAME==VERSION is installed at that version (read
# from the installed metadata: importing torch needs the CUDA libraries,
# which only maya's lib/maya provides).
pinned_ok() {
    "$py" - "$@" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    if m.version(name).split("+")[0] != want:
        sys.exit(1)
PY
}

# torchtitan and the packages its training path imports (docs/compatibility.md)
# go into their own directory, .venv-torchtitan/, put on PYTHONPATH only for
# torchtitan's runs: datasets, pandas, pyarrow and tensorboard stay out of the
# venv the other frameworks run in. `scripts/venv.sh --torchtitan` adds them
# (after the venv itself).
TORCHTITAN="torchtitan==0.3.0 spmd_types==0.2.3 tyro==1.0.17 docstring_parser==0.18.0
    typeguard==4.6.1 torchdata==0.11.0 torch_checkpointing==0.1.1 tensorboard==2.21.0
    protobuf==7.36.2 absl_py==2.5.1 datasets==4.7.0 pyarrow==26.0.1 pandas==3.1.1
    python_dateutil==4.0.0 pytz==2026.6 tzdata==2026.6 dill==0.4.1 multiprocess==0.70.19
    xxhash==4.1.0 requests==2.34.2 urllib3==2.8.0 certifi==2026.10.19.post1
    charset_normalizer==3.5.3 six==1.17.0 httpx==0.29.0 httpcore==1.0.9"
titan_dir=.venv-torchtitan
if [ "${1:-}" = --torchtitan ]; then
    "$0"
    [ -f "$titan_dir/torchtitan-0.3.0.dist-info/METADATA" ] && exit 0
    echo "venv: installing torchtitan 0.3.0 into $titan_dir" >&2
    rm -rf "$titan_dir.tmp"
    # shellcheck disable=SC2086
    "$py" -m pip install -q --no-deps --target "$titan_dir.tmp" $TORCHTITAN
    rm -rf "$titan_dir" && mv "$titan_dir.tmp" "$titan_dir"
    exit 0
fi

torch_ok=0
if [ -x "$py" ] && pinned_ok "torch==$TORCH_VERSION" "triton==$TRITON_VERSION"; then
    torch_ok=1
    # shellcheck disable=SC2086
    pinned_ok $FRAMEWORKS $FRAMEWORK_DEPS && exit 0
fi
if [ $torch_ok = 0 ]; then
    echo "venv: installing torch $TORCH_VERSION and triton $TRITON_VERSION into $venv" >&2
    [ -x "$py" ] || python3 -m venv "$venv"
    "$py" -m pip install -q --upgrade pip >/dev/null
    # torch's pure-Python dependencies (its METADATA Requires-Dist, minus nvidia-* / cuda-*).
    "$py" -m pip install -q filelock 'typing-extensions>=4.13.0' 'setuptools>=77.0.3' 'sympy>=1.13.3' \
        'networkx>=2.5.1' jinja2 'fsspec>=0.8.5' numpy
    "$py" -m pip install -q --no-deps "torch==$TORCH_VERSION" "triton==$TRITON_VERSION"
fi
echo "venv: installing the frameworks ($(echo $FRAMEWORKS | tr '\n' ' ')) into $venv" >&2
# DeepSpeed comes as a source package; DS_BUILD_OPS=0 leaves its CUDA ops to
# be JIT-built when first used (the tests keep that cache in their scratch
# directory). Without build isolation its setup.py sees the venv's torch
# instead of downloading one.
# shellcheck disable=SC2086
DS_BUILD_OPS=0 "$py" -m pip install -q --no-deps --no-build-isolation $FRAMEWORK_DEPS $FRAMEWORKS
# torch and triton must be the ones pinned above, whatever the frameworks asked.
pinned_ok "torch==$TORCH_VERSION" "triton==$TRITON_VERSION" || {
    echo "venv: torch/triton are no longer $TORCH_VERSION/$TRITON_VERSION after installing the frameworks" >&2
    exit 1
}
