#!/usr/bin/env bash
# Each cuBLAS / cuBLASLt / cuDNN stand-in has the real library's soname and
# exports every dynamic symbol the real one (CUDA 13 toolkit,
# /usr/local/cuda/lib64) exports, under the same version node; its
# .symbols list is exactly the real library's list. A missing symbol is
# named.
. "$MAYA_TOP/tests/lib.sh"
export LC_ALL=C
. "$MAYA_TOP/tests/libs/standins.sh"

cuda=${CUDA_HOME:-/usr/local/cuda}
# name@@node of every defined dynamic symbol but the version node's own
versioned() {
    nm -D --defined-only --with-symbol-versions "$1" | awk '$2 != "A" {print $3}' | sort -u
}
n=0
while read -r lib status headers; do
    ours=$MAYA_LIBS/$lib real=$cuda/lib64/$lib
    [ -f "$ours" ] || fail "no stand-in $ours"
    [ -f "$real" ] || fail "no real $real to compare with"
    objdump -p "$ours" | grep -q "SONAME *$lib\$" || fail "$ours has no soname $lib"
    versioned "$real" > "$TEST_TMP/real"
    versioned "$ours" > "$TEST_TMP/ours"
    missing=$(comm -23 "$TEST_TMP/real" "$TEST_TMP/ours")
    [ -z "$missing" ] || fail "$lib lacks $(echo "$missing" | wc -l) symbols of the real one: $(echo "$missing" | head -20 | tr '\n' ' ')"
    extra=$(comm -13 "$TEST_TMP/real" "$TEST_TMP/ours")
    [ -z "$extra" ] || fail "$lib exports symbols the real one does not: $(echo "$extra" | head -20 | tr '\n' ' ')"
    sym=$(find "$MAYA_TOP/emulator" -name "$(echo "${lib%%.so*}" | sed 's/^lib//').symbols" | head -1)
    [ -n "$sym" ] || fail "no .symbols list for $lib"
    sed 's/@@.*//' "$TEST_TMP/real" | sort -u > "$TEST_TMP/real_names"
    grep -v '^#' "$sym" | grep -v '^$' | sort -u > "$TEST_TMP/list"
    cmp -s "$TEST_TMP/real_names" "$TEST_TMP/list" ||
        fail "$sym differs from $real: $(diff "$TEST_TMP/real_names" "$TEST_TMP/list" | head -5 | tr '\n' ' ')"
    n=$((n + 1))
done <<< "$STANDINS"
[ "$n" -ge 1 ] || fail "no stand-ins checked"
