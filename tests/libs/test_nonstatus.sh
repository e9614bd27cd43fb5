#!/usr/bin/env bash
# A function that returns something other than its library's status type
# (a version number, a string, a float result, nothing) cannot say "not
# supported", so none may be left to the generated stub: each one the
# headers declare is a strong (implemented) definition in the stand-in,
# never the weak stub gen_stubs.sh makes. Exported data objects are data.
. "$MAYA_TOP/tests/lib.sh"
export LC_ALL=C
. "$MAYA_TOP/tests/libs/standins.sh"

cuda=${CUDA_HOME:-/usr/local/cuda}
n=0
while read -r lib status headers; do
    ours=$MAYA_LIBS/$lib real=$cuda/lib64/$lib
    nm -D --defined-only "$ours" | awk '{print $3, $2}' | sed 's/@@[^ ]*//' | sort > "$TEST_TMP/kinds"
    # shellcheck disable=SC2086
    nm -D --defined-only "$real" | awk '$2 ~ /^[TW]$/ {print $3}' | sed 's/@@.*//' | sort -u |
        "$MAYA_TOP/tests/libs/return_types.py" "$cuda/include" $headers > "$TEST_TMP/types" ||
        fail "cannot read the return types of $lib from $headers"
    awk -F'\t' -v st="$status" '$2 != "?" && $2 != st {print $1}' "$TEST_TMP/types" > "$TEST_TMP/nonstatus"
    stubs=$(join "$TEST_TMP/nonstatus" "$TEST_TMP/kinds" | awk '$2 != "T" {print $1}')
    [ -z "$stubs" ] || fail "$lib leaves functions that do not return $status to stubs: $(echo "$stubs" | tr '\n' ' ')"
    # data objects of the real library are data in ours
    nm -D --defined-only "$real" | awk '$2 ~ /^[BDRV]$/ && $3 !~ /^_Z/ {print $3}' | sed 's/@@.*//' | sort -u > "$TEST_TMP/data"
    notdata=$(join "$TEST_TMP/data" "$TEST_TMP/kinds" | awk '$2 !~ /^[BDRV]$/ {print $1}')
    [ -z "$notdata" ] || fail "$lib exports data objects as functions: $notdata"
    n=$((n + $(wc -l < "$TEST_TMP/nonstatus")))
done <<< "$STANDINS"
[ "$n" -ge 100 ] || fail "only $n non-status functions found: the header reading is broken"
