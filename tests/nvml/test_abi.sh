#!/usr/bin/env bash
# The NVML API as maya declares it (emulator/nvml/nvml_types.h) is the real
# one: struct sizes and member offsets, constants, and the prototype of every
# function maya implements (its sources compile against the real nvml.h);
# and nvml.symbols has every function the header declares.
# The real header comes from PyPI's nvidia-nvml-dev wheels (CUDA 13, and the
# CUDA 12 one when at hand); the build never uses it. Without a header (no
# pip, or no network) there is nothing to compare with: the test says so and
# passes.
. "$MAYA_TOP/tests/lib.sh"

cache=$MAYA_BUILD/nvml-dev
dirs=()
find_headers() {
    local h
    for h in "$cache"/*/nvidia/*/include/nvml.h "$cache"/*/nvidia/*/*/include/nvml.h ${MAYA_NVML_H:-}; do
        [ -f "$h" ] && dirs+=("$(dirname "$h")")
    done
}
find_headers
if [ ${#dirs[@]} = 0 ]; then
    pip=()
    if [ -x "$MAYA_TOP/.venv/bin/python" ]; then pip=("$MAYA_TOP/.venv/bin/python" -m pip)
    elif python3 -m pip --version > /dev/null 2>&1; then pip=(python3 -m pip); fi
    if [ ${#pip[@]} -gt 0 ]; then
        for w in nvidia-nvml-dev==13.5.37 nvidia-nvml-dev-cu12==12.9.79; do
            d=$cache/${w%%=*}
            mkdir -p "$d"
            if timeout 120 "${pip[@]}" download -q --no-deps -d "$d" "$w" > "$TEST_TMP/pip.log" 2>&1; then
                (cd "$d" && python3 -m zipfile -e ./*.whl .) || fail "cannot unpack $(ls "$d"/*.whl)"
            fi
        done
        find_headers
    fi
fi
if [ ${#dirs[@]} = 0 ]; then
    echo "no real nvml.h (set MAYA_NVML_H=/path/nvml.h, or let pip fetch nvidia-nvml-dev): nothing compared"
    exit 0
fi

cflags=(-std=gnu11 -Wall -Werror)
for dir in "${dirs[@]}"; do
    echo "comparing with $dir/nvml.h"
    extra=()
    grep -q 'define nvmlGpuFabricInfo_v3' "$dir/nvml.h" || extra=(-DNO_FABRIC_V3)
    cc "${cflags[@]}" "${extra[@]}" -I"$MAYA_TOP/emulator/nvml" -o "$TEST_TMP/ours" "$MAYA_TOP/tests/nvml/abi_layout.c" ||
        fail "abi_layout.c does not build with nvml_types.h"
    cc "${cflags[@]}" "${extra[@]}" -DREAL_NVML_H -I"$dir" -o "$TEST_TMP/real" "$MAYA_TOP/tests/nvml/abi_layout.c" ||
        fail "abi_layout.c does not build with $dir/nvml.h"
    "$TEST_TMP/ours" > "$TEST_TMP/ours.txt"
    "$TEST_TMP/real" > "$TEST_TMP/real.txt"
    diff "$TEST_TMP/real.txt" "$TEST_TMP/ours.txt" > "$TEST_TMP/diff" ||
        fail "layouts or constants differ from $dir/nvml.h (< real, > maya): $(cat "$TEST_TMP/diff")"
    # every function the header declares is exported (nvml.symbols)
    grep -oE 'DECLDIR[[:space:]]+nvml[A-Za-z0-9_]+[[:space:]]*\(' "$dir/nvml.h" |
        sed -E 's/DECLDIR[[:space:]]+//; s/[[:space:]]*\(//' | sort -u > "$TEST_TMP/declared"
    grep -v '^#' "$MAYA_TOP/emulator/nvml/nvml.symbols" | sort -u > "$TEST_TMP/listed"
    missing=$(comm -23 "$TEST_TMP/declared" "$TEST_TMP/listed")
    [ -z "$missing" ] || fail "nvml.symbols lacks functions $dir/nvml.h declares: $missing"
    [ ${#extra[@]} = 0 ] || continue # maya's sources use the fabric v3 struct
    # maya's definitions against the real prototypes (its own header left out)
    for src in "$MAYA_TOP"/emulator/nvml/*.c; do
        cc "${cflags[@]}" -fsyntax-only -I"$MAYA_TOP/include" -I"${CUDA_HOME:-/usr/local/cuda}/include" \
            -I"$MAYA_TOP/emulator/core" -I"$MAYA_TOP/emulator/nvml" -DNVML_NO_UNVERSIONED_FUNC_DEFS \
            -include "$dir/nvml.h" -DMAYA_NVML_TYPES_H "$src" 2> "$TEST_TMP/cc.err" ||
            fail "$(basename "$src") does not compile against $dir/nvml.h: $(head -5 "$TEST_TMP/cc.err")"
    done
done
echo "compared with ${#dirs[@]} header(s)"
