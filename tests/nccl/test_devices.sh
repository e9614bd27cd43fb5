#!/usr/bin/env bash
# One process drives 4 devices: communicators from ncclCommInitAll, and from
# ncclGetUniqueId + ncclCommInitRank per device inside ncclGroupStart/End
# (blocking and non-blocking). Every collective and send/recv runs as a group
# over the 4 ranks from one thread (no deadlock), with the data checked on the
# host, and the one trace holds 4 ranks of one communicator whose operations
# match.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"
export MAYA_NCCL_TIMEOUT=60

run() {
    local name=$1
    shift
    RANK=0 emu "$TEST_TMP/$name" "$WORKLOADS/nccl_colls" "$@" > "$TEST_TMP/$name.out" 2> "$TEST_TMP/$name.err" ||
        fail "nccl_colls $* failed: $(tail -5 "$TEST_TMP/$name.err")"
    [ -s "$TEST_TMP/$name.err" ] && fail "nccl_colls $* wrote to stderr: $(head -5 "$TEST_TMP/$name.err")"
    for r in 0 1 2 3; do
        expect_grep "^nccl_colls rank $r/4: 112 checks, 0 failed" "$TEST_TMP/$name.out"
    done
    expect_matched "$TEST_TMP/$name" 17 8 1
    expect_count 4 "^comm .*rank=[0-3]/4 dev=[0-3] gpu=[0-3] parent=0x0" "$TEST_TMP/$name.dump"
    # the four ranks' ops of one call form one group
    expect_count 4 "^coll .*op=allgather .*group=$(grep -m1 '^coll .*op=allgather' "$TEST_TMP/$name.dump" | sed 's/.*group=\([0-9]*\).*/\1/') " "$TEST_TMP/$name.dump"
}

run initall --devices 4
run groupinit --devices 4 --group-init
run nonblocking --devices 4 --group-init --nonblocking
expect_count 4 "^call .*api=ncclCommInitRankConfig result=0" "$TEST_TMP/groupinit.dump"
expect_count 1 "^call .*api=ncclCommInitAll result=0" "$TEST_TMP/initall.dump"
