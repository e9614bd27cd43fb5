#!/usr/bin/env bash
# NVTX ranges of a PyTorch program (tests/workloads/torch/train_nvtx.py:
# torch.cuda.nvtx.range_push("step N") around each step, nested "forward"
# and "backward"): PyTorch's bundled NVTX v3 loads the emulator's injection
# library (maya run sets NVTX_INJECTION64_PATH), the ranges are in the trace
# with their names, and --iteration-marker 'step*' makes each step an
# iteration; the automatic detection finds the loop too.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

steps=5
d=$TEST_TMP/nvtx
torch_run "$d" h100x1 train_nvtx.py $steps
check_rank_traces "$d" 1
check_report "$d"
dump=$d/dump-0
expect_count $steps 'api=nvtxRangePushA .*marker=push name="step [0-9]"$' "$dump"
expect_count $steps 'api=nvtxRangePop .*marker=pop name="step [0-9]"$' "$dump"
expect_count $steps 'marker=push name="forward"$' "$dump"
expect_count $steps 'marker=pop name="backward"$' "$dump"
# found without a marker: the steps after the first, less one where the
# loop's period begins inside a step (the second still allocates for the
# first time) and the last whole period ends before the tear-down
expect_eq "$(report_field "$d" "$((steps - 2)) <= len(r['iterations']) <= $((steps - 1))")" true \
    "iterations found without a marker"
"$MAYA" report --iteration-marker 'step*' "$d" > "$d.report" 2>&1 || fail "maya report --iteration-marker failed: $(cat "$d.report")"
expect_eq "$(report_field "$d" "len(r['iterations'])")" $steps "iterations at each NVTX range 'step*'"
expect_eq "$(report_field "$d" "r['iteration_marker']")" '"step*"' "the marker in report.json"
expect_eq "$(report_field "$d" "[x['left_out'] for x in r['iterations']]")" \
    '["warm-up", null, null, null, null]' "the first step left out of the steady state"
expect_grep '^found +5 iterations starting at each op or NVTX range matching "step\*"' "$d/report.txt"
echo "nvtx: ok"
