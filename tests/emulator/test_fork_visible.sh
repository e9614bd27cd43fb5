#!/usr/bin/env bash
# CUDA_VISIBLE_DEVICES selects emulated GPUs by index or by UUID (a unique
# prefix is enough) and stops at the first entry naming no GPU; a child
# forked after CUDA started cannot use CUDA and writes nothing into the
# parent's trace.
. "$MAYA_TOP/tests/lib.sh"
w=$WORKLOADS/fork_visible

emu "$TEST_TMP/a" "$w" list > "$TEST_TMP/all" || fail "list failed"
expect_grep "^count 8 cudaSuccess" "$TEST_TMP/all"
uuid5=$(awk '$2 == 5 {print $6}' "$TEST_TMP/all")
uuid2=$(awk '$2 == 2 {print $6}' "$TEST_TMP/all")
[ -n "$uuid5" ] && [ "$uuid5" != "$uuid2" ] || fail "devices 2 and 5 need distinct UUIDs: '$uuid2' '$uuid5'"

CUDA_VISIBLE_DEVICES="$uuid5,2" emu "$TEST_TMP/b" "$w" list > "$TEST_TMP/sel" || fail "list by uuid failed"
expect_grep "^count 2 cudaSuccess" "$TEST_TMP/sel"
expect_grep "^device 0 bus [0-9]+ uuid $uuid5\$" "$TEST_TMP/sel" "device 0 should be the GPU named by UUID"
expect_grep "^device 1 bus [0-9]+ uuid $uuid2\$" "$TEST_TMP/sel"

# A UUID prefix (the first group) names the GPU when it is unique.
prefix=$(echo "$uuid5" | cut -d- -f1-2)
CUDA_VISIBLE_DEVICES="$prefix" emu "$TEST_TMP/c" "$w" list > "$TEST_TMP/pre" || fail "list by prefix failed"
expect_grep "^count 1 cudaSuccess" "$TEST_TMP/pre"
expect_grep "^device 0 .* uuid $uuid5\$" "$TEST_TMP/pre"

# An unknown UUID ends the list: here, before any device.
CUDA_VISIBLE_DEVICES="GPU-00000000-dead,1" emu "$TEST_TMP/d" "$w" list > "$TEST_TMP/none"
expect_grep "^count 0 cudaErrorNoDevice" "$TEST_TMP/none"

# fork: the child's calls fail and leave no record in the parent's trace.
RANK=0 emu "$TEST_TMP/f" "$w" fork > "$TEST_TMP/fork" 2>&1 || { cat "$TEST_TMP/fork"; fail "fork workload failed"; }
expect_grep "child: cudaGetDeviceCount=cudaErrorInitializationError cudaMalloc=cudaErrorInitializationError" "$TEST_TMP/fork"
expect_grep "parent: child exited 0" "$TEST_TMP/fork"
ls "$TEST_TMP/f" > "$TEST_TMP/files"
expect_eq "$(cat "$TEST_TMP/files")" "rank-0.mtrace" "the trace directory should hold only the parent's finished trace"
dump "$TEST_TMP/f/rank-0.mtrace" > "$TEST_TMP/dump"
expect_no_grep "cudaGraphicsUnregisterResource" "$TEST_TMP/dump" "the child's call reached the parent's trace"
expect_count 1 "api=cudaMalloc " "$TEST_TMP/dump"
expect_grep "^free .*api=cudaFree result=0" "$TEST_TMP/dump"
expect_grep "^end .*unsupported_calls=0" "$TEST_TMP/dump"
