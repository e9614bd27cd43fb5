#!/usr/bin/env bash
# fidelity/collectives.sh runs the real pipeline on a published curve and
# prints one line per size and a summary in the agreed format; the
# nccl-tests-style workload it drives traces the byte volumes NCCL counts
# (all-to-all's count per peer, all-gather's per rank).
. "$MAYA_TOP/tests/lib.sh"

MAYA=$MAYA NCCL_PERF=$WORKLOADS/nccl_perf "$MAYA_TOP/fidelity/collectives.sh" --curve all_reduce/A100-SXM4-80GB/8 \
    > "$TEST_TMP/out" 2> "$TEST_TMP/err" || fail "collectives.sh failed: $(cat "$TEST_TMP/err")"
expect_count 24 '^fidelity collectives all_reduce A100-SXM4-80GBx8 [0-9]+ published=[0-9.e+-]+ predicted=[0-9.e+-]+ error=[+-][0-9]+\.[0-9]%$' "$TEST_TMP/out"
expect_grep '^fidelity collectives all_reduce A100-SXM4-80GBx8 summary points=24 within_15pct=[0-9]+ median_abs_error=[0-9.]+% max_abs_error=[0-9.]+%$' "$TEST_TMP/out"
# at 8 GiB the ring is bandwidth-bound: published 231.6 GB/s; the model is within 15 %
awk '$4 == 8589934592 { sub("error=", "", $7); sub("%", "", $7); e = $7 < 0 ? -$7 : $7; exit !(e <= 15) }' \
    "$TEST_TMP/out" || fail "8 GiB all-reduce on 8 A100: $(grep ' 8589934592 ' "$TEST_TMP/out")"

# The workload's all-to-all: count per peer, 8 pieces per rank
"$MAYA" run -q -g h100x8 -n 1 -o "$TEST_TMP/a2a" -- "$WORKLOADS/nccl_perf" --op alltoall --min 64M --max 64M \
    --warmup 0 --iters 1 > "$TEST_TMP/a2a.out" 2>&1 || fail "nccl_perf alltoall: $(cat "$TEST_TMP/a2a.out")"
dump "$TEST_TMP/a2a/job.mtrace" > "$TEST_TMP/a2a.dump"
# 64 MiB of float32 spread over 8 peers: 2M elements to each
expect_count 8 '^coll .*op=alltoall .*count=2097152 .*bytes=8388608 ' "$TEST_TMP/a2a.dump"
# bad arguments are refused with what is allowed
"$MAYA_TOP/fidelity/collectives.sh" --bogus > "$TEST_TMP/bad" 2>&1 && fail "collectives.sh accepted --bogus"
expect_grep 'unknown argument --bogus \(expected --curve' "$TEST_TMP/bad"
exit 0
