# Helpers for the profiler's tests: source after tests/lib.sh.
#
# Without a GPU, the "real" libraries the profiler forwards to are maya's
# emulator libraries (MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS): they behave like
# a GPU to the program and to libmaya-profile.so, and both write traces,
# kept apart (the profiler's goes to MAYA_PROFILE_TRACE_DIR, the emulator's
# to MAYA_TRACE_DIR, which these helpers leave unset unless asked).

# profile_run TRACE_DIR CMD...: CMD with libmaya-profile.so preloaded over the
# emulator, its profile trace into TRACE_DIR (as maya profile sets it up).
profile_run() {
    local dir=$1
    shift
    mkdir -p "$dir"
    LD_PRELOAD=$MAYA_LIBS/libmaya-profile.so MAYA_PROFILE_TRACE_DIR=$dir MAYA_PROFILE_GPU=H100-SXM \
        LD_LIBRARY_PATH=$MAYA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"
}

# device_ops DUMP: the device ops of a `maya trace dump`, one per line, without
# what differs from run to run (times, ids, addresses, measurements, and the
# emulator's notes that small copies and collectives moved their bytes and
# how far a launch's pointers reach: a profile knows only the allocations
# it traced, not the driver API's).
# Addresses passed as 64-bit integers (a PTX kernel's pointer parameters are
# .u64) are numbers of 12 digits and more.
device_ops() {
    grep -E '^(launch|memcpy|memset|gemm|dnn|coll) ' "$1" | sed -E \
        -e 's/ seq=[0-9]+ t=[0-9]+\.\.[0-9]+ tid=[0-9]+ dev=-?[0-9]+ stream=[0-9]+//' \
        -e 's/ measured_ns=[0-9]+//' -e 's/ (performed|data_moved)//' -e 's/ (comm|group)=[0-9a-fx]+//g' \
        -e 's/0x[0-9a-f]+(\[alloc#[0-9]+\+[0-9]+\])?/P/g' -e 's/u64:[0-9]{12,}/u64:P/g' -e 's/ extents=[^ ]+//' \
        -e 's/ +$//'
}

# same_ops EMULATED_TRACE PROFILE_TRACE WHAT: the profile holds the device
# ops of the emulated run, in the same order, with the same names, shapes,
# sizes and arguments; each measured (MAYA_F_MEASURED, a duration above 0),
# but for the nodes of a CUDA graph, measured together on the graph's end.
# SAME_OPS_UNORDERED=1: the same ops in any order (threads that race).
same_ops() {
    local e=$TEST_TMP/same.e p=$TEST_TMP/same.p
    dump "$1" > "$e.txt"
    dump "$2" > "$p.txt"
    device_ops "$e.txt" > "$e.ops"
    device_ops "$p.txt" > "$p.ops"
    if [ "${SAME_OPS_UNORDERED:-0}" = 1 ]; then
        sort -o "$e.ops" "$e.ops"
        sort -o "$p.ops" "$p.ops"
    fi
    [ -s "$e.ops" ] || fail "$3: the emulated run has no device ops"
    diff "$e.ops" "$p.ops" > "$TEST_TMP/same.diff" ||
        { head -20 "$TEST_TMP/same.diff" >&2; fail "$3: the profile's device ops differ from the emulated run's"; }
    local n unmeasured
    n=$(wc -l < "$p.ops")
    # (a graph's nodes are timed together: their GRAPH end record carries it)
    unmeasured=$(grep -E '^(launch|memcpy|memset|gemm|dnn|coll) |^graph .* end ' "$p.txt" | grep ' result=0' |
                 grep -v capturing | grep -v from_graph | grep -vcE ' measured_ns=[1-9]' || true)
    [ "$unmeasured" = 0 ] || { grep -E '^(launch|memcpy|memset|gemm|coll) ' "$p.txt" | grep -vE ' measured_ns=[1-9]' |
                               head -5 >&2; fail "$3: $unmeasured of $n device ops have no measured duration"; }
    # the profiler's own calls (its events, pointer and device queries) are
    # not the program's: none may appear in its trace
    expect_no_grep "api=(cudaEventQuery|cudaEventElapsedTime|cudaPointerGetAttributes|cudaGetDevice|cudaStreamIsCapturing|cudaStreamGetDevice|cudaFuncGetName|cublasGetStream_v2|cublasGetMathMode|ncclCommUserRank|ncclCommCount|ncclCommCuDevice) " \
        "$p.txt" "$3: the profile traces the profiler's own calls"
    expect_grep "^header .*flags=0x1" "$p.txt" "$3: the profile's header has no passthrough flag"
    expect_grep "^process .*mode=passthrough copy_threshold=0" "$p.txt" "$3: the profile's process record"
}
