#!/usr/bin/env bash
# maya trace export --chakra: real NCCL jobs (every collective and send/recv;
# communicators split into groups; a 4-GPU GPT step with tensor and pipeline
# parallelism) written as Chakra execution traces, decoded with the protobuf
# library from classes protoc generates from sim/chakra_et.proto, and checked
# as Chakra defines them (check_chakra.py: nodes, dependencies, communicator
# groups, send/recv pairs, against maya's timeline); bad input is refused.
. "$MAYA_TOP/tests/lib.sh"

# Debian's python3-protobuf serves Debian's python3
py=/usr/bin/python3
command -v protoc > /dev/null || fail "no protoc: scripts/deps.sh installs protobuf-compiler"
"$py" -c "import google.protobuf" 2>/dev/null || fail "no python3-protobuf: scripts/deps.sh installs it"
mkdir -p "$TEST_TMP/py"
protoc --proto_path="$MAYA_TOP/sim" --python_out="$TEST_TMP/py" "$MAYA_TOP/sim/chakra_et.proto" ||
    fail "protoc cannot compile sim/chakra_et.proto"

export_check() { # NAME WORKLOAD ARGS...
    local name=$1
    shift
    "$MAYA" run -q --timeline full -o "$TEST_TMP/$name" "$@" > "$TEST_TMP/out" 2>&1 ||
        fail "maya run $name failed: $(tail -20 "$TEST_TMP/out")"
    cp "$TEST_TMP/$name/report.json" "$TEST_TMP/before.json"
    "$MAYA" trace export --chakra "$TEST_TMP/$name.et" "$TEST_TMP/$name" > "$TEST_TMP/out" 2>&1 ||
        fail "maya trace export $name failed: $(cat "$TEST_TMP/out")"
    expect_grep "Chakra traces of .* in $TEST_TMP/$name.et/et.<rank>.et" "$TEST_TMP/out"
    cmp -s "$TEST_TMP/before.json" "$TEST_TMP/$name/report.json" || fail "the export rewrote the report"
    "$py" "$MAYA_TOP/tests/report/check_chakra.py" "$TEST_TMP/py" "$TEST_TMP/$name.et" \
        "$TEST_TMP/$name/timeline.json" > "$TEST_TMP/check" 2>&1 ||
        fail "the Chakra traces of $name are wrong: $(cat "$TEST_TMP/check")"
    cat "$TEST_TMP/check"
}

export_check colls -g h100x4 -- "$WORKLOADS/nccl_colls"
expect_grep "^4 ranks, [1-9][0-9]* collectives per member in 1 groups, [1-9][0-9]* send/recv pairs" "$TEST_TMP/check"
expect_eq "$(tr -d ' \n' < "$TEST_TMP/colls.et/et.comm_group.json")" '{"1":[0,1,2,3]}' "the one communicator's group"

export_check split -g h100x4 -- "$WORKLOADS/nccl_split"
expect_grep "^4 ranks, .* in 7 groups" "$TEST_TMP/check"

export_check gpt -g h100x4 -- "$WORKLOADS/minigpt" --tp 2 --pp 2 --iters 3 --gemm kernel
expect_grep "^4 ranks, .* send/recv pairs" "$TEST_TMP/check"

# a damaged trace fails the check (the checker can fail)
head -c 700 "$TEST_TMP/colls.et/et.1.et" > "$TEST_TMP/cut" && cp "$TEST_TMP/cut" "$TEST_TMP/colls.et/et.1.et"
if "$py" "$MAYA_TOP/tests/report/check_chakra.py" "$TEST_TMP/py" "$TEST_TMP/colls.et" \
        "$TEST_TMP/colls/timeline.json" > "$TEST_TMP/check" 2>&1; then
    fail "check_chakra.py accepted a cut trace"
fi

# bad input: clear errors
"$MAYA" trace export "$TEST_TMP/colls" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status without --chakra"
expect_grep "expected --chakra OUT" "$TEST_TMP/out"
"$MAYA" trace export --chakra "$TEST_TMP/x" "$TEST_TMP/nowhere" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status without a run directory"
expect_grep "cannot open $TEST_TMP/nowhere/run.conf" "$TEST_TMP/out"
# one process driving four GPUs: Chakra describes one GPU per trace
"$MAYA" run -q -g h100x4 -n 1 -o "$TEST_TMP/one" -- "$WORKLOADS/nccl_colls" --devices 4 > "$TEST_TMP/out" 2>&1 ||
    fail "maya run -n 1 failed"
"$MAYA" trace export --chakra "$TEST_TMP/one.et" "$TEST_TMP/one" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 3 "exit status for one process driving several GPUs"
expect_grep "rank 0 is two members of communicator .* a Chakra trace describes one GPU" "$TEST_TMP/out"
exit 0
