#!/usr/bin/env bash
# GPU descriptions: every shipped file parses and holds every cudaDeviceProp
# field; a malformed file fails with file:line and what was expected.
. "$MAYA_TOP/tests/lib.sh"

for f in "$MAYA_TOP"/hwspecs/gpus/*.conf "$MAYA_TOP"/hwspecs/clusters/*.conf; do
    [ -e "$f" ] || continue
    "$MAYA" hwspecs check "$f" >/dev/null || fail "$f does not parse"
done

"$MAYA" hwspecs list > "$TEST_TMP/list"
for g in V100-SXM2-32GB A100-SXM4-80GB A40 L40S H100-SXM H200 B200; do
    expect_grep "^$g " "$TEST_TMP/list" "maya hwspecs list lacks $g"
done

# show prints every field of cudaDeviceProp from the CUDA 13 headers.
"$MAYA" hwspecs show h100 > "$TEST_TMP/show"
fields=$(awk '/^struct __device_builtin__ cudaDeviceProp/,/^};/' /usr/local/cuda/include/driver_types.h |
         grep -oE '^\s+(int|unsigned int|size_t|char|cudaUUID_t)\s+[A-Za-z0-9_]+' | awk '{print $NF}' | grep -v '^reserved$')
n=0
for fld in $fields; do
    expect_grep "^        $fld = " "$TEST_TMP/show" "maya hwspecs show h100 lacks cudaDeviceProp.$fld"
    n=$((n + 1))
done
[ "$n" -gt 90 ] || fail "found only $n cudaDeviceProp fields in the CUDA headers"
expect_grep 'name = "NVIDIA H100 80GB HBM3"' "$TEST_TMP/show"
expect_grep "totalGlobalMem = 85017755648" "$TEST_TMP/show"

# Malformed variants of a real file: each fails naming file:line and the problem.
src=$MAYA_TOP/hwspecs/gpus/h100-sxm.conf
bad() { # bad NAME SED-EXPRESSION EXPECTED-MESSAGE-REGEX
    sed "$2" "$src" > "$TEST_TMP/$1.conf"
    if "$MAYA" hwspecs check "$TEST_TMP/$1.conf" > "$TEST_TMP/$1.out" 2>&1; then
        fail "$1: a malformed file was accepted"
    fi
    expect_grep "$3" "$TEST_TMP/$1.out" "$1: expected an error matching /$3/"
}
bad missing   '/maxSurface1D = /d'              "[a-z]+.conf:[0-9]+: .*props lacks maxSurface1D"
bad shortlist 's/maxThreadsDim = .*/maxThreadsDim = {1024, 1024}/' "[a-z]+.conf:[0-9]+: .*maxThreadsDim needs 3 integers, found 2"
bad unknown   's/warpSize = 32/warpSize = 32\n        wrapSize = 32/' "[a-z]+.conf:[0-9]+: .*wrapSize"
bad type      's/warpSize = 32/warpSize = thirty-two/' "[a-z]+.conf:[0-9]+: "
bad noperf    '/^    perf {/,/^    }/d'          "[a-z]+.conf:[0-9]+: .*expected a perf"
bad negative  's/hbm_gbps = .*/hbm_gbps = -5/'   "[a-z]+.conf:[0-9]+: .*hbm_gbps must not be negative"
bad nan       's/hbm_gbps = .*/hbm_gbps = nan/'  "[a-z]+.conf:[0-9]+: .*hbm_gbps must not be negative \(nor nan or inf\)"
bad uuid      's/uuid = .*/uuid = "GPU-xyz"/'     "uuid \"GPU-xyz\" is not GPU-"
printf 'gpu "X" {\n  props {\n' > "$TEST_TMP/trunc.conf"
"$MAYA" hwspecs check "$TEST_TMP/trunc.conf" > "$TEST_TMP/trunc.out" 2>&1 && fail "a truncated file was accepted"
expect_grep "trunc.conf:[0-9]+: " "$TEST_TMP/trunc.out"
"$MAYA" hwspecs check "$TEST_TMP/absent.conf" > "$TEST_TMP/absent.out" 2>&1 && fail "an absent file was accepted"
expect_grep "cannot read .*absent.conf" "$TEST_TMP/absent.out"
# A directory is checked as a hwspecs folder (it used to print only libconfuse's
# "input in flex scanner failed"); a FIFO or a directory named .conf is refused
# naming it (a FIFO used to block the reader).
"$MAYA" hwspecs check "$MAYA_TOP/hwspecs" > "$TEST_TMP/dir.out" 2>&1 || fail "the hwspecs folder: $(cat "$TEST_TMP/dir.out")"
expect_grep "hwspecs: [0-9]+ GPU\(s\), [0-9]+ cluster\(s\): ok" "$TEST_TMP/dir.out"
"$MAYA" hwspecs check "$MAYA_TOP/hwspecs/clusters" > "$TEST_TMP/dir.out" 2>&1 || fail "a folder of .conf files: $(cat "$TEST_TMP/dir.out")"
mkdir -p "$TEST_TMP/empty" "$TEST_TMP/bad/gpus/x.conf"
"$MAYA" hwspecs check "$TEST_TMP/empty" > "$TEST_TMP/dir.out" 2>&1 && fail "an empty folder was accepted"
expect_grep "holds no \*.conf file" "$TEST_TMP/dir.out"
"$MAYA" hwspecs check "$TEST_TMP/bad" > "$TEST_TMP/dir.out" 2>&1 && fail "a directory named x.conf was accepted"
expect_grep "x.conf is a directory: expected a hwspec file" "$TEST_TMP/dir.out"
expect_no_grep "flex scanner" "$TEST_TMP/dir.out"
mkfifo "$TEST_TMP/fifo.conf"
timeout 10 "$MAYA" hwspecs check "$TEST_TMP/fifo.conf" > "$TEST_TMP/fifo.out" 2>&1
expect_eq "$?" 1 "maya hwspecs check of a FIFO (124: it blocked)"
expect_grep "fifo.conf is not a regular file: expected a hwspec file" "$TEST_TMP/fifo.out"

# The NIC each GPU uses: one per GPU on rail-optimised nodes, shared in pairs
# on a DGX-1V; a list of the wrong length or naming a NIC the node lacks fails.
"$MAYA" hwspecs show dgx-h100 > "$TEST_TMP/dgxh" 2>&1 || fail "show dgx-h100"
expect_grep 'nic_of_gpu = \{0, 1, 2, 3, 4, 5, 6, 7\}' "$TEST_TMP/dgxh"
"$MAYA" hwspecs show dgx-1v > "$TEST_TMP/dgx1" 2>&1 || fail "show dgx-1v"
expect_grep 'nic_of_gpu = \{0, 0, 1, 1, 2, 2, 3, 3\}' "$TEST_TMP/dgx1"
src=$MAYA_TOP/hwspecs/clusters/dgx-h100.conf
bad nicshort  's/nic_of_gpu = .*/nic_of_gpu = {0, 1}/' "[a-z0-9-]+.conf:[0-9]+: .*nic_of_gpu lists 2 NICs; expected one per GPU \(8\)"
bad nicrange  's/nic_of_gpu = .*/nic_of_gpu = {0, 1, 2, 3, 4, 5, 6, 8}/' "nic_of_gpu\[7\] is 8; expected a NIC index 0..7"
# NICs size the simulator's tables: a count beyond any node is refused
bad nicmany   's/nics_per_node = .*/nics_per_node = 2147483647/' "[a-z0-9-]+.conf:[0-9]+: .*nics_per_node is 2147483647; expected 0..1024"
bad nicinf    's/nic_gbps = .*/nic_gbps = inf/' "[a-z0-9-]+.conf:[0-9]+: .*must not be negative \(nor nan or inf\)"

# Unknown names get the list of known ones.
"$MAYA" hwspecs show h900 > "$TEST_TMP/h900" 2>&1 && fail "unknown GPU accepted"
expect_grep 'no GPU or cluster named "h900".*H100-SXM' "$TEST_TMP/h900"
exit 0
