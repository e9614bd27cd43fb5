# Helpers for shell tests. Source it: . "$MAYA_TOP/tests/lib.sh"
# Every helper fails the test with a message saying what was expected.
set -u

: "${MAYA_TOP:?run tests through tests/run}"
: "${MAYA_BUILD:=$MAYA_TOP/build}"
MAYA=$MAYA_BUILD/bin/maya
# nvdisasm for SASS-only kernels (scripts/nvdisasm.sh installs it; a value
# the caller set wins). Their work summaries are cached under the build, for
# every test to share (make clean empties it).
NVDISASM_TOOL=$MAYA_TOP/.tools/nvdisasm/nvidia/cu13/bin/nvdisasm
if [ -z "${MAYA_NVDISASM+set}" ] && [ -x "$NVDISASM_TOOL" ]; then
    export MAYA_NVDISASM=$NVDISASM_TOOL
fi
export MAYA_CACHE_DIR=${MAYA_CACHE_DIR:-$MAYA_BUILD/cache}
MAYA_LIBS=$MAYA_BUILD/lib/maya
WORKLOADS=$MAYA_BUILD/tests/workloads

# A scratch directory removed when the test ends.
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/maya-test.XXXXXX")
trap 'rm -rf "$TEST_TMP"' EXIT

# fast_host_cluster NAME: writes $TEST_TMP/NAME-fasthost.conf, the installed
# cluster NAME with host_speed = 10 (maya-hwspec(5)), and prints its path.
# For tests that compare the predictions of two runs of a GPU-bound job:
# each run's host gaps are this machine's CPU time, which a busy CI host
# can stretch 2-fold in one run and not the next, and where host work
# reaches the critical path (after a synchronize, before a collective
# waits for the slowest rank) that shows in the iteration. Host time a
# tenth as long keeps what the runs do on the GPUs and the network.
fast_host_cluster() {
    local src=$MAYA_TOP/hwspecs/clusters/$1.conf out=$TEST_TMP/$1-fasthost.conf
    [ -r "$src" ] || fail "no cluster $src"
    sed -e "s/^cluster \"$1\"/cluster \"$1-fasthost\"/" -e 's/^}$/    host_speed = 10\n}/' "$src" > "$out"
    grep -q '^    host_speed = 10$' "$out" || fail "fast_host_cluster: $src has no closing brace line"
    echo "$out"
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# skip WHY: the test cannot run here (what it needs is not installed); WHY
# says what is missing and the command that installs it. tests/run lists it
# as skipped, neither passed nor failed.
skip() {
    echo "skipped: $*"
    exit 77
}

# emu TRACE_DIR CMD...: run CMD under the emulator (LD_LIBRARY_PATH),
# writing its trace into TRACE_DIR. Extra MAYA_* settings come from the
# caller's environment.
emu() {
    local dir=$1
    shift
    mkdir -p "$dir"
    LD_LIBRARY_PATH=$MAYA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} MAYA_TRACE_DIR=$dir "$@"
}

# dump FILE: maya trace dump, failing the test if the dump fails.
dump() {
    "$MAYA" trace dump "$1" || fail "maya trace dump $1 failed"
}

# expect_grep PATTERN FILE [WHAT]: FILE must contain a line matching PATTERN.
expect_grep() {
    grep -qE -- "$1" "$2" || { echo "--- $2:" >&2; head -50 "$2" >&2; fail "${3:-expected a line matching /$1/ in $2}"; }
}

# expect_no_grep PATTERN FILE [WHAT]
expect_no_grep() {
    if grep -qE -- "$1" "$2"; then
        grep -E -- "$1" "$2" | head -5 >&2
        fail "${3:-expected no line matching /$1/ in $2}"
    fi
}

# expect_eq GOT WANT WHAT
expect_eq() {
    [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# expect_count N PATTERN FILE: exactly N lines match.
expect_count() {
    local n
    n=$(grep -cE -- "$2" "$3" || true)
    [ "$n" = "$1" ] || fail "expected $1 lines matching /$2/ in $3, found $n"
}

# expect_near GOT WANT REL WHAT: |GOT - WANT| <= REL * WANT.
expect_near() {
    awk -v g="$1" -v w="$2" -v r="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= r * w) }' ||
        fail "$4: expected $2 (within $3), got $1"
}
