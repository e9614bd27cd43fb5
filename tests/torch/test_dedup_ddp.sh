#!/usr/bin/env bash
# Duplicate-rank elimination (maya run --dedup, docs/dedup.md) on PyTorch:
# the DDP GPT script on 4 emulated H100s, 6 steps, with a model large
# enough that the GPU bounds the step (host gaps measured on shared cores
# then do not move the prediction). Rank 0 runs on (it serves the world's
# small exchanges, and its host work is its own), rank 1 stands for its
# class, ranks 2 and 3 stop once their NCCL operations have repeated and
# are rebuilt from rank 1 without the program noticing (every process exits
# 0); the predicted step is the one of the run without elimination to
# within 0.5 %.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

export MAYA_GPT=8192,4096,32,4,2048
steps=6
for mode in dedup plain; do
    flag=; [ $mode = dedup ] && flag=--dedup
    "$MAYA" run -q $flag -g h100x4 -o "$TEST_TMP/$mode" -- "$PY" "$TORCH_WORKLOADS/train_ddp_gpt.py" $steps \
        > "$TEST_TMP/$mode.out" 2>&1 || fail "maya run $flag train_ddp_gpt.py failed: $(tail -20 "$TEST_TMP/$mode.out")"
done
d=$TEST_TMP/dedup
for r in 2 3; do
    expect_grep "^rank\.$r\.note=eliminated, rebuilt from rank 1\$" "$d/run.conf" "rank $r's note in run.conf"
    expect_grep "^rank\.$r\.exit=0\$" "$d/run.conf" "rank $r exited 0"
    expect_grep "^source=1\$" "$d/traces/rank-$r.eliminated" "rank $r's elimination note"
    # it stopped before its last step: the program never printed its result
    expect_no_grep '^MAYA_RESULT ' "$d/logs/rank-$r.out" "rank $r ran to the end"
done
for r in 0 1; do
    [ -e "$d/traces/rank-$r.eliminated" ] && fail "rank $r, which runs on, was eliminated"
    expect_eq "$(result "$d/logs/rank-$r.out" steps)" $steps "steps trained by rank $r"
done
expect_grep "^status     all 4 processes exited 0; 2 of them eliminated" "$d/report.txt" "the report counts them"
dump "$d/job.mtrace" > "$TEST_TMP/job.dump"
expect_count 2 '^rank_rebuilt' "$TEST_TMP/job.dump"

python3 - "$d/report.json" "$TEST_TMP/plain/report.json" <<'PY' || fail "predictions differ (above)"
import json, sys
e, p = (json.load(open(f)) for f in sys.argv[1:3])
assert e["simulated"] and p["simulated"] and e["workload_ok"], (e["error"], p["error"])
assert len(e["iterations"]) == len(p["iterations"]) >= 4, (e["iterations"], p["iterations"])
assert e["idle_time_s"] < 0.05 * e["iteration_time_s"], "the GPU should bound this step"
err = abs(e["iteration_time_s"] - p["iteration_time_s"]) / p["iteration_time_s"]
print("step with elimination %.6f s, without %.6f s (%.3f %%)" % (e["iteration_time_s"], p["iteration_time_s"], 100 * err))
assert err < 0.005, err
PY
echo "dedup ddp: ok"
