#!/bin/sh
# Create .venv/ with the CUDA build of PyTorch (and Triton) from PyPI, for the
# PyTorch tests. Idempotent: a venv that already has the pinned versions is
# left alone.
#
# torch's own nvidia-* wheels are NOT installed: maya's stand-in libraries
# take the place of every CUDA library torch loads (see README.md), and
# torch's RPATH would otherwise find the real ones before maya's.
set -eu
cd "$(dirname "$0")/.."
TORCH_VERSION=${MAYA_TORCH_VERSION:-2.15.0}
TRITON_VERSION=${MAYA_TRITON_VERSION:-3.9.0}
venv=.venv
py=$venv/bin/python

# Versions from the installed metadata: importing torch needs the CUDA
# libraries, which only maya's lib/maya provides.
if [ -x "$py" ] && "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('torch').split('+')[0] != '$TORCH_VERSION' or m.version('triton') != '$TRITON_VERSION')" 2>/dev/null; then
    exit 0
fi
echo "venv: installing torch $TORCH_VERSION and triton $TRITON_VERSION into $venv" >&2
[ -x "$py" ] || python3 -m venv "$venv"
"$py" -m pip install -q --upgrade pip >/dev/null
# torch's pure-Python dependencies (its METADATA Requires-Dist, minus nvidia-* / cuda-*).
"$py" -m pip install -q filelock 'typing-extensions>=4.13.0' 'setuptools>=77.0.3' 'sympy>=1.13.3' \
    'networkx>=2.5.1' jinja2 'fsspec>=0.8.5' numpy
"$py" -m pip install -q --no-deps "torch==$TORCH_VERSION" "triton==$TRITON_VERSION"
