#!/usr/bin/env bash
# libcuda.so.1 exports exactly the symbols of the real CUDA 13 driver (the
# toolkit's stub library lists them), unversioned like the real one, under
# the real soname; and the list the emulator is built from is that list.
. "$MAYA_TOP/tests/lib.sh"

lib=$MAYA_LIBS/libcuda.so.1
real=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
[ -f "$real" ] || fail "no CUDA toolkit stub at $real"
nm -D --defined-only "$real" | awk '{print $3}' | sort > "$TEST_TMP/real"
nm -D --defined-only "$lib" | awk '$2 ~ /[TW]/ {print $3}' | sort > "$TEST_TMP/ours"
grep -v '^#' "$MAYA_TOP/emulator/driver/driver.symbols" | grep -v '^$' | sort > "$TEST_TMP/list"
diff "$TEST_TMP/real" "$TEST_TMP/list" > "$TEST_TMP/diff1" || fail "driver.symbols differs from $real: $(head "$TEST_TMP/diff1")"
diff "$TEST_TMP/real" "$TEST_TMP/ours" > "$TEST_TMP/diff2" || fail "libcuda.so.1 exports differ: $(head "$TEST_TMP/diff2")"
[ "$(wc -l < "$TEST_TMP/ours")" -gt 600 ] || fail "too few exports"
readelf -d "$lib" | grep -q 'Library soname: \[libcuda.so.1\]' || fail "soname is not libcuda.so.1"
if readelf -V "$lib" | grep -q 'Version definition'; then
    fail "libcuda.so.1 defines symbol versions; the real driver's symbols are unversioned"
fi
