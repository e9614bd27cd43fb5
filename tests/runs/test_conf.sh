#!/usr/bin/env bash
# maya.conf gives maya run its defaults (GPUs, report options, the copy
# threshold the ranks get); the command line wins; --iterations keeps the
# first N iterations in the report; a malformed file fails with file:line.
. "$MAYA_TOP/tests/lib.sh"
cd "$TEST_TMP"
export HOME=$TEST_TMP/home XDG_CONFIG_HOME=
unset MAYA_CONF MAYA_COPY_THRESHOLD
jget() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print(len(v) if isinstance(v, list) else v)' "$1" "$2"; }

# The user's file (~/.config/maya/maya.conf).
mkdir -p home/.config/maya
cat > home/.config/maya/maya.conf <<'CONF'
# defaults for this user
gpus = "a100x2"
iteration_marker = "cudaMemcpy"
iterations = 2
CONF
"$MAYA" run -q -o r1 -- "$WORKLOADS/vector_add" 4096 > r1.out 2>&1 || fail "maya run with maya.conf failed: $(cat r1.out)"
expect_eq "$(jget r1/report.json gpu)" A100-SXM4-80GB "GPU from maya.conf"
expect_eq "$(jget r1/report.json world_size)" 2 "GPU count from maya.conf"
expect_eq "$(jget r1/report.json iterations)" 2 "iterations kept (iterations = 2)"
[ "$(jget r1/report.json iterations_found)" -gt 2 ] || fail "the marker should cut more than 2 iterations"
expect_grep '^kept       the first 2 of [0-9]+ iterations' r1/report.txt
expect_grep '^iterations=2$' r1/run.conf

# copy_threshold reaches the ranks: with 512 the 1 KiB probe copy is not
# performed, so the workload's own round-trip check fails, as it should. One
# rank: with two, the rank that fails second may be stopped by maya run
# before its trace is whole.
mkdir -p home0/.config/maya
printf 'gpus = "a100x1"\ncopy_threshold = "512"\n' > home0/.config/maya/maya.conf
HOME=$TEST_TMP/home0 "$MAYA" run -q -o r0 -- "$WORKLOADS/vector_add" 4096 > r0.out 2>&1 &&
    fail "vector_add's round-trip check passed with copy_threshold = 512: $(cat r0.out)"
dump r0/traces/rank-0.mtrace > r0.dump
expect_grep '^memcpy .*bytes=1024 ' r0.dump "the workload's 1 KiB probe copy"
expect_no_grep '^memcpy .*bytes=1024 .*performed' r0.dump "copy_threshold = 512 should leave 1 KiB copies unperformed"

# The command line wins over the file, and MAYA_COPY_THRESHOLD over copy_threshold.
MAYA_COPY_THRESHOLD=64K "$MAYA" run -q -g h100x1 --iterations 3 -o r2 -- "$WORKLOADS/vector_add" 4096 > r2.out 2>&1 ||
    fail "maya run with options failed: $(cat r2.out)"
expect_eq "$(jget r2/report.json gpu)" H100-SXM "-g over maya.conf"
expect_eq "$(jget r2/report.json iterations)" 3 "--iterations over maya.conf"

# MAYA_CONF names the only file read; /dev/null: none (H100 x1, all iterations).
MAYA_CONF=/dev/null "$MAYA" run -q -o r3 -- "$WORKLOADS/vector_add" 4096 > r3.out 2>&1 || fail "$(cat r3.out)"
expect_eq "$(jget r3/report.json gpu)" H100-SXM "default GPU without maya.conf"
expect_eq "$(jget r3/report.json iterations)" "$(jget r3/report.json iterations_found)" "no cut without maya.conf"

# Malformed files: file:line and what was expected; nothing runs.
bad() { # bad NAME CONTENT MESSAGE-REGEX
    printf '%s\n' "$2" > "$1.conf"
    if MAYA_CONF=$TEST_TMP/$1.conf "$MAYA" run -q -o "run-$1" -- true > "$1.out" 2>&1; then
        fail "$1: a malformed maya.conf was accepted"
    fi
    expect_grep "$3" "$1.out" "$1: expected an error matching /$3/"
    [ ! -e "run-$1" ] || fail "$1: maya run started the workload despite a bad maya.conf"
}
bad unknown  'gpu = "h100x8"'          "unknown.conf:1: no such option 'gpu'"
bad iters    'iterations = 0'           "iters.conf:1: iterations = 0: expected a whole number from 1 to 1000000"
bad size     'copy_threshold = "big"'   'size.conf:1: copy_threshold = "big": expected a size in bytes'
bad timeout  'timeout = -3'             "timeout.conf:1: timeout = -3: expected seconds above 0"
bad empty    'estimator = ""'           "empty.conf: estimator is empty"
bad syntax   'gpus = "h100x2'           "syntax.conf:[0-9]+: "
MAYA_CONF=$TEST_TMP/absent.conf "$MAYA" run -q -- true > absent.out 2>&1 && fail "a missing MAYA_CONF file was accepted"
expect_grep "cannot read .*absent.conf" absent.out
# A bad value in the file is checked like the option it stands for.
printf 'gpus = "h900x8"\n' > g.conf
MAYA_CONF=$TEST_TMP/g.conf "$MAYA" run -q -o run-g -- true > g.out 2>&1 && fail "an unknown GPU in maya.conf was accepted"
expect_grep 'unknown GPU "h900"' g.out
exit 0
