#!/usr/bin/env bash
# The emulator's runtime paths under valgrind: graphs and capture, streams
# with host functions, memory pools and a device reset, per-thread default
# streams. Any invalid read or write, use of uninitialised memory or bad
# free fails the test. (A 32 GiB GPU: valgrind cannot reserve an 80 GiB one.)
. "$MAYA_TOP/tests/lib.sh"
command -v valgrind > /dev/null || fail "valgrind is not installed (scripts/deps.sh installs it)"

vg() { # NAME ARGS...
    local name=$1
    shift
    MAYA_GPU=V100-SXM2-32GB MAYA_GPUS_PER_NODE=2 RANK=0 emu "$TEST_TMP/$name" \
        valgrind -q --error-exitcode=99 --leak-check=no "$WORKLOADS/$name" "$@" > "$TEST_TMP/$name.out" 2>&1 ||
        fail "$name under valgrind: $(grep -v 'set address range perms' "$TEST_TMP/$name.out" | tail -30)"
    dump "$TEST_TMP/$name/rank-0.mtrace" > /dev/null
}
vg graph_capture
vg streams_events
vg meminfo
vg ptds_streams
expect_grep "graph_capture: 7 captured nodes, 4 host calls: ok" "$TEST_TMP/graph_capture.out"
expect_grep "meminfo: ok" "$TEST_TMP/meminfo.out"
