#!/usr/bin/env bash
# Kernels with SASS only (PyTorch's) and no nvdisasm to read them: the
# emulator warns once, the trace flags them (sass_unread), and the report's
# kernels line says how many launches that left to the fallback rule and
# how to install nvdisasm; a binary that carries its PTX says nothing of it.
# Needs no nvdisasm (MAYA_NVDISASM=0 turns it off; an empty cache holds no
# summary read before).
. "$MAYA_TOP/tests/lib.sh"

for b in kernel_work_sass kernel_work; do
    MAYA_NVDISASM=0 MAYA_CACHE_DIR=$TEST_TMP/cache "$MAYA" run -q -g h100x1 -o "$TEST_TMP/$b" -- "$WORKLOADS/$b" \
        > "$TEST_TMP/$b.out" 2>&1 || fail "maya run $b failed: $(tail -5 "$TEST_TMP/$b.out")"
    "$MAYA" trace dump "$TEST_TMP/$b/traces/rank-0.mtrace" > "$TEST_TMP/$b.dump" || fail "cannot dump $b's trace"
done

d=$TEST_TMP/kernel_work_sass
expect_count 1 '^maya-emu: warning: kernel .* has SASS only and no nvdisasm was found' "$d/logs/rank-0.err"
expect_grep 'set MAYA_NVDISASM' "$d/logs/rank-0.err" "the warning says what to do"
expect_count 6 '^kernel .* sass_unread' "$TEST_TMP/kernel_work_sass.dump"
expect_no_grep ' work=' "$TEST_TMP/kernel_work_sass.dump" "a work summary without nvdisasm"
expect_grep '^kernels .* of them have SASS only and nvdisasm was not found when the job ran' "$d/report.txt" \
    "the report's kernels line names the cause"
python3 - "$d/report.json" "$TEST_TMP/kernel_work/report.json" <<'PY' || fail "report.json kernels (above)"
import json, sys
k, p = (json.load(open(f))["kernels"] for f in sys.argv[1:3])
print(k, p, sep="\n")
assert k["launches"] > 0 and k["without_code"] == k["launches"] == k["without_code_sass_unread"], k
assert p["without_code_sass_unread"] == 0 and p["priced_from_code"] == p["launches"] > 0, p
PY

# the binary with PTX: read from it, nothing to warn of
d=$TEST_TMP/kernel_work
expect_no_grep 'nvdisasm' "$d/logs/rank-0.err" "a warning for kernels that carry PTX"
expect_no_grep 'sass_unread' "$TEST_TMP/kernel_work.dump" "a PTX kernel flagged"
expect_no_grep 'nvdisasm' "$d/report.txt" "the report of a PTX binary"
exit 0
