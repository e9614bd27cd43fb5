#!/usr/bin/env bash
# Duplicate-rank elimination (maya run --dedup, docs/dedup.md) on PyTorch:
# the DDP and the FSDP GPT scripts on 4 emulated H100s, 6 steps, each with a
# model large enough that the GPU bounds the step (host gaps measured on
# shared cores then do not move the prediction: two wide layers, since the
# host's work per layer is the same at any width). Rank 0 runs on (it serves the world's small
# exchanges, and its host work is its own), rank 1 stands for its class,
# ranks 2 and 3 stop once their NCCL operations have repeated and are
# rebuilt from rank 1 without the program noticing (every process exits 0;
# one that ran ahead may end before the verdict reaches it, and runs on);
# the predicted step is the one of the run without elimination to within
# 0.5 %. DDP runs a third time with --replicas 4:1 (ranks 2 and 3 never get
# past PyTorch's start-up: they leave at their first communicator call and
# are rebuilt from rank 1): the same bound. Then DDP on 8 ranks with
# --replicas 8:1, the layout taken from the 4-rank --dedup run
# (--replicas-like): PyTorch's TCP-store rendezvous needs every rank
# connected before rank 0 goes on, so the two replicas the launcher starts
# at first (its usual few on a machine of 2 CPUs) wait, and it joins the
# store for the four others, which never start: their traces are written
# from rank 1's after the job. Six replicas, every one rebuilt; the step
# is the one of the 8-rank run without elimination to within 0.5 %.
# test: alone
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

steps=6

# compare DIR PLAIN NAME: DIR's predicted step is PLAIN's to within 0.5 %.
compare() {
    python3 - "$1/report.json" "$2/report.json" "$3" <<'PY' || fail "$3: predictions differ (above)"
import json, sys
e, p = (json.load(open(f)) for f in sys.argv[1:3])
assert e["simulated"] and p["simulated"] and e["workload_ok"], (e["error"], p["error"])
assert len(e["iterations"]) >= 3 and len(p["iterations"]) >= 3, (e["iterations"], p["iterations"])
assert e["idle_time_s"] < 0.05 * e["iteration_time_s"], "the GPU should bound this step"
err = abs(e["iteration_time_s"] - p["iteration_time_s"]) / p["iteration_time_s"]
print("%s: step %.6f s, without elimination %.6f s (%.3f %%)" % (sys.argv[3], e["iteration_time_s"], p["iteration_time_s"], 100 * err))
assert err < 0.005, err
PY
}

# check SCRIPT MAYA_GPT [replicas]: replicas adds a run with --replicas 4:1
check() {
    local script=$1 r mode flag modes="dedup plain ${3:-}"
    export MAYA_GPT=$2
    for mode in $modes; do
        flag=; [ $mode = dedup ] && flag=--dedup
        [ $mode = replicas ] && flag="--replicas 4:1"
        "$MAYA" run -q $flag -g h100x4 -o "$TEST_TMP/$script.$mode" -- "$PY" "$TORCH_WORKLOADS/$script" $steps \
            > "$TEST_TMP/$script.$mode.out" 2>&1 ||
            fail "maya run $flag $script failed: $(tail -20 "$TEST_TMP/$script.$mode.out")"
    done
    local d=$TEST_TMP/$script.dedup stopped=0
    for r in 2 3; do
        expect_grep "^rank\.$r\.exit=0\$" "$d/run.conf" "$script: rank $r exited 0"
        # Large collectives wait for nobody, so a rank may run ahead of the
        # others and end before the verdict reaches it: then it ran every step.
        if ! grep -q "^rank\.$r\.note=" "$d/run.conf"; then
            expect_eq "$(result "$d/logs/rank-$r.out" steps)" $steps "$script: steps trained by rank $r, not stopped"
            continue
        fi
        stopped=$((stopped + 1))
        expect_grep "^rank\.$r\.note=eliminated, rebuilt from rank 1\$" "$d/run.conf" "$script: rank $r's note in run.conf"
        expect_grep "^source=1\$" "$d/traces/rank-$r.eliminated" "$script: rank $r's elimination note"
        # it stopped before its last step: the program never printed its result
        expect_no_grep '^MAYA_RESULT ' "$d/logs/rank-$r.out" "$script: rank $r ran to the end"
    done
    [ $stopped -ge 1 ] || fail "$script: neither rank 2 nor rank 3 was eliminated"
    for r in 0 1; do
        [ -e "$d/traces/rank-$r.eliminated" ] && fail "$script: rank $r, which runs on, was eliminated"
        expect_eq "$(result "$d/logs/rank-$r.out" steps)" $steps "$script: steps trained by rank $r"
    done
    expect_grep "^status     all 4 processes exited 0; $stopped of them eliminated" "$d/report.txt" \
        "$script: the report counts them"
    dump "$d/job.mtrace" > "$TEST_TMP/$script.job.dump"
    expect_count $stopped '^rank_rebuilt' "$TEST_TMP/$script.job.dump"

    compare "$d" "$TEST_TMP/$script.plain" "$script --dedup"
    # every rank is a data-parallel replica: the layout for a larger run
    expect_grep "^same work  layout --replicas 4:1 " "$d/report.txt" "$script: the layout the classes show"
    [ "${3:-}" = replicas ] || return 0
    d=$TEST_TMP/$script.replicas
    for r in 2 3; do
        expect_grep "^rank\.$r\.note=a replica, not emulated \\(--replicas\\), rebuilt from rank 1\$" "$d/run.conf" \
            "$script --replicas: rank $r's note in run.conf"
        expect_grep "^how=declared\$" "$d/traces/rank-$r.eliminated" "$script --replicas: rank $r's note"
        expect_no_grep '^MAYA_RESULT ' "$d/logs/rank-$r.out" "$script --replicas: rank $r ran to the end"
    done
    expect_grep "^status     all 4 processes exited 0; 2 replicas not emulated" "$d/report.txt" \
        "$script --replicas: the report counts them"
    compare "$d" "$TEST_TMP/$script.plain" "$script --replicas 4:1"
}

check train_ddp_gpt.py 8192,8192,64,2,4096 replicas
check train_fsdp_gpt.py 8192,8192,64,2,8192

# Eight ranks, six replicas: more than the launcher starts at once on a
# machine of fewer than six CPUs, and none of them can leave before all
# have joined PyTorch's rendezvous.
export MAYA_GPT=8192,8192,64,2,4096
# The layout is the one the 4-rank --dedup run showed, grown to 8 ranks.
d=$TEST_TMP/ddp8.replicas
"$MAYA" run --tee none --replicas-like "$TEST_TMP/train_ddp_gpt.py.dedup" -g h100x8 -o "$d" -- \
    "$PY" "$TORCH_WORKLOADS/train_ddp_gpt.py" $steps > "$d.out" 2>&1 ||
    fail "maya run --replicas-like train_ddp_gpt.py failed: $(tail -20 "$d.out")"
expect_grep "^maya: --replicas-like .*: --replicas 8:1 \(its 4 ranks showed 4:1\)$" "$d.out" "ddp 8: the layout taken"
expect_grep "^status     all 8 processes exited 0; 6 replicas not emulated" "$d/report.txt" "ddp 8 --replicas: the report"
started=$(grep -c '^rank\.[2-7]\.note=a replica, not emulated (--replicas), rebuilt from rank 1$' "$d/run.conf")
stood_in=$(grep -c "^rank\.[2-7]\.note=a replica, not emulated (--replicas), rebuilt from rank 1; never started: maya run joined PyTorch's store for it$" "$d/run.conf")
expect_eq "$started $stood_in" "2 4" "ddp 8 --replicas: replicas started, and never started"
for r in 2 3 4 5 6 7; do
    expect_grep "^how=declared\$" "$d/traces/rank-$r.eliminated" "ddp 8 --replicas: rank $r's note"
    if grep -q "^rank\.$r\.note=.*never started" "$d/run.conf"; then
        [ -e "$d/logs/rank-$r.out" ] && fail "ddp 8 --replicas: rank $r, never started, has output"
        dump "$d/traces/rank-$r.mtrace" > "$TEST_TMP/ddp8.rank-$r.dump"
        expect_grep "^header .* rank=$r world_size=8 local_rank=$r node=0 " "$TEST_TMP/ddp8.rank-$r.dump" \
            "ddp 8 --replicas: rank $r's trace header"
        expect_count 8 '^device ' "$TEST_TMP/ddp8.rank-$r.dump"
        expect_grep '^eliminated +source=1 how=declared stop_op=0 ' "$TEST_TMP/ddp8.rank-$r.dump" \
            "ddp 8 --replicas: rank $r's ELIMINATED record"
    fi
done
expect_eq "$(result "$d/logs/rank-1.out" steps)" $steps "ddp 8 --replicas: steps trained by rank 1"
"$MAYA" run -q --tee none -g h100x8 -o "$TEST_TMP/ddp8.plain" -- "$PY" "$TORCH_WORKLOADS/train_ddp_gpt.py" $steps \
    > "$TEST_TMP/ddp8.plain.out" 2>&1 || fail "maya run train_ddp_gpt.py on 8 ranks failed: $(tail -20 "$TEST_TMP/ddp8.plain.out")"
compare "$d" "$TEST_TMP/ddp8.plain" "ddp 8 --replicas 8:1"
echo "dedup torch: ok"
