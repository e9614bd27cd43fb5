# Start a multi-rank job under the emulator, one process per rank, the way
# torchrun or srun would: source it after tests/lib.sh.
#
#   mrun N OUT CMD...     maya run of N ranks on N emulated H100s into run
#                         directory OUT (logs/rank-R.out, traces/); fails the
#                         test if maya run fails (a rank failed, or the replay
#                         refused the job), keeping OUT in tests/out/
#
#   launch N OUT CMD...   (when each rank's failure must be seen, which maya
#                         run prevents by stopping the others) runs N copies of CMD with RANK, WORLD_SIZE,
#                         LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
#                         MASTER_PORT, MAYA_NODE (ranks fill nodes of
#                         MAYA_GPUS_PER_NODE, default 8), MAYA_TRACE_DIR=OUT/trace
#                         and the emulator's libraries; rank R's output goes
#                         to OUT/rank-R.out and .err, its exit status to
#                         OUT/rank-R.rc. Returns the number of ranks that failed.
#   rank_failures OUT     prints each failed rank's status and stderr tail
#
# Extra environment for all ranks comes from the caller's environment.

mrun() {
    local n=$1 out=$2
    shift 2
    if ! "$MAYA" run -q -g "h100x$n" -o "$out" -- "$@" > "$out.log" 2>&1; then
        local keep=$MAYA_TOP/tests/out/failed-run.$$
        rm -rf "$keep" && cp -r "$out" "$keep"  # the evidence outlives the test
        fail "maya run $* failed (run directory kept in $keep): $(tail -20 "$out.log")"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

launch() {
    local n=$1 out=$2
    shift 2
    local gpn=${MAYA_GPUS_PER_NODE:-8} port r pids=()
    port=$(free_port)
    mkdir -p "$out/trace"
    for ((r = 0; r < n; r++)); do
        RANK=$r WORLD_SIZE=$n LOCAL_RANK=$((r % gpn)) LOCAL_WORLD_SIZE=$((n < gpn ? n : gpn)) \
            MAYA_NODE=$((r / gpn)) MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            MAYA_TRACE_DIR=$out/trace \
            LD_LIBRARY_PATH=$MAYA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
            "$@" >"$out/rank-$r.out" 2>"$out/rank-$r.err" &
        pids+=($!)
    done
    local failed=0 rc
    for ((r = 0; r < n; r++)); do
        wait "${pids[$r]}"
        rc=$?
        echo $rc >"$out/rank-$r.rc"
        [ $rc -eq 0 ] || failed=$((failed + 1))
    done
    return $failed
}

rank_failures() {
    local out=$1 f r
    for f in "$out"/rank-*.rc; do
        r=${f##*/rank-}
        r=${r%.rc}
        if [ "$(cat "$f")" != 0 ]; then
            echo "--- rank $r exited with $(cat "$f"); stderr:" >&2
            tail -20 "$out/rank-$r.err" >&2
        fi
    done
}

# dump_all DIR: `maya trace dump` of every trace in DIR, concatenated.
dump_all() {
    local f
    for f in "$1"/*.mtrace; do
        dump "$f"
    done
}

# expect_matched DIR NCOLL NPAIRS NCOMM: the NCCL operations in DIR's traces
# match across ranks (tests/nccl/matched.awk), and there are that many.
expect_matched() {
    local dir=$1 got
    dump_all "$dir" >"$dir.dump"
    got=$(awk -f "$MAYA_TOP/tests/nccl/matched.awk" "$dir.dump") || fail "NCCL operations do not match across ranks: $got"
    expect_eq "$got" "matched $2 collectives and $3 send/recv pairs on $4 communicators" "matched operations in $dir"
}

# timeline_nccl TIMELINE: "PID NAME COUNT" per rank (timeline pid) and NCCL
# call name of the device ops (stream threads) in a timeline.json, sorted.
timeline_nccl() {
    python3 - "$1" <<'PY' || fail "cannot read $1"
import json, sys
n = {}
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] == "X" and e.get("tid", 0) > 0 and e["name"].startswith("nccl"):
        n[e["pid"], e["name"]] = n.get((e["pid"], e["name"]), 0) + 1
for (pid, name), c in sorted(n.items()):
    print(pid, name, c)
PY
}
