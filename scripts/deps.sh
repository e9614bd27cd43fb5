#!/bin/sh
# Install the Debian packages maya needs to build and test, when any is missing.
# Idempotent: when everything is present it only asks dpkg and returns.
set -eu

PKGS="build-essential pkg-config libconfuse-dev zlib1g-dev liblz4-dev libzstd-dev
      libhwloc-dev libxgboost-dev libslurm-dev slurm-wlm munge python3-venv file valgrind
      clang chromium python3-protobuf protobuf-compiler"
# chromium: the test of report.html opens it in a real browser; python3-protobuf and
# protobuf-compiler: the Chakra export test decodes the ET files with them.

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing Debian packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "deps: missing packages:$missing; run as root or install them first" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# A stale package index is the usual reason an install fails on a fresh machine.
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
