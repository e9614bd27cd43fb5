# Helpers for the PyTorch tests (sourced after tests/lib.sh). The workloads
# live in tests/workloads/torch/ and run with the project's .venv
# (scripts/venv.sh; `make test` creates it).

PY=$MAYA_TOP/.venv/bin/python
TORCH_WORKLOADS=$MAYA_TOP/tests/workloads/torch
[ -x "$PY" ] || fail "no $PY: run scripts/venv.sh (make test does)"
# Several emulated ranks share the test machine's cores: one thread each.
export OMP_NUM_THREADS=1
# Inductor and Triton caches go to the scratch directory.
export TORCHINDUCTOR_CACHE_DIR=$TEST_TMP/inductor TRITON_CACHE_DIR=$TEST_TMP/triton

# torch_run DIR GPUS SCRIPT [ARGS...]: maya run SCRIPT with the venv's
# Python on GPUS (e.g. h100x4), into run directory DIR; fails the test with
# each rank's error output when the run fails. MAYA_RUN_OPTS adds options of
# maya run (e.g. "--iteration-marker step*"), split on spaces.
torch_run() {
    local dir=$1 gpus=$2 script=$3 opts
    shift 3
    read -r -a opts <<< "${MAYA_RUN_OPTS:-}"
    if ! "$MAYA" run -q -g "$gpus" -o "$dir" "${opts[@]}" -- "$PY" "$TORCH_WORKLOADS/$script" "$@" > "$dir.out" 2>&1; then
        cat "$dir.out" >&2
        for e in "$dir"/logs/rank-*.err; do
            [ -s "$e" ] && { echo "--- $e:" >&2; tail -30 "$e" >&2; }
        done
        fail "maya run -g $gpus $script $* failed"
    fi
}

# result FILE KEY: a field of the MAYA_RESULT json line the workload printed.
result() {
    local line
    line=$(grep '^MAYA_RESULT ' "$1" | tail -1)
    [ -n "$line" ] || fail "no MAYA_RESULT line in $1"
    "$PY" -c 'import json, sys; v = json.loads(sys.argv[1][len("MAYA_RESULT "):])[sys.argv[2]]; print(json.dumps(v) if isinstance(v, (list, dict)) else v)' "$line" "$2"
}

# check_rank_traces DIR N: ranks 0..N-1 each left a whole trace whose end
# record counts no unsupported call; their dumps go to DIR/dump-R.
check_rank_traces() {
    local dir=$1 n=$2 r
    for ((r = 0; r < n; r++)); do
        [ -f "$dir/traces/rank-$r.mtrace" ] || fail "no trace for rank $r in $dir/traces: $(ls "$dir/traces")"
        dump "$dir/traces/rank-$r.mtrace" > "$dir/dump-$r"
        if ! grep -qE '^end .* unsupported_calls=0 ' "$dir/dump-$r"; then
            grep -E 'UNSUPPORTED' "$dir/dump-$r" | sed 's/.*api=//' | sort | uniq -c >&2
            fail "rank $r made unsupported calls (listed above)"
        fi
    done
}

# report_field DIR EXPR: a value from DIR/report.json (EXPR indexes r, e.g.
# "r['oom']"), printed as JSON.
report_field() {
    [ -f "$1/report.json" ] || fail "no report.json in $1"
    "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1] + "/report.json")); print(json.dumps(eval(sys.argv[2])))' "$1" "$2"
}

# check_report DIR: the run's report says the workload succeeded, nothing
# was unsupported and no rank ran out of memory.
check_report() {
    expect_eq "$(report_field "$1" "r['workload_ok']")" true "report.json workload_ok in $1"
    expect_eq "$(report_field "$1" "r['unsupported_calls']")" "{}" "report.json unsupported_calls in $1"
    expect_eq "$(report_field "$1" "r['oom']")" false "report.json oom in $1"
}

# peak_bytes DUMP DEV: the device's peak memory from a trace dump's end record.
peak_bytes() {
    sed -n "s/^end .* dev$2_peak=\([0-9]*\).*/\1/p" "$1"
}
