#!/usr/bin/env bash
# --maya-emulate at submission: srun, sbatch and salloc list it in --help and
# refuse bad values before anything is queued, saying what is allowed; a bad
# plugstack.conf line fails loudly, naming the allowed arguments; a step with
# more tasks than emulated GPUs is refused before its tasks start.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/slurm/cluster.sh"
cluster_start 1
cd "$JOBS_DIR"

for cmd in srun sbatch salloc; do
    $cmd --help > "$TEST_TMP/help" 2>&1
    expect_grep "--maya-emulate=<gpu>x<count>" "$TEST_TMP/help" "$cmd --help lists --maya-emulate"
done

# refused: run CMD, expect exit status 255 (Slurm's for a bad option) and a
# message matching PATTERN, and no job in the queue afterwards.
refused() {
    local pattern=$1
    shift
    local rc=0
    "$@" > "$TEST_TMP/out" 2>&1 || rc=$?
    [ $rc = 255 ] || fail "'$*' exited $rc, expected 255 (refused at submission): $(cat "$TEST_TMP/out")"
    expect_grep "$pattern" "$TEST_TMP/out" "'$*' says what is allowed"
}

gpus='known: A100-SXM4-80GB .*H100-SXM \(h100'
refused "unknown GPU \"foo\"; $gpus" srun --maya-emulate=foox8 true
refused "unknown GPU \"foo\"; $gpus" sbatch --maya-emulate=foox8 --wrap true
refused "unknown GPU \"foo\"; $gpus" salloc --maya-emulate=foox8 true
refused 'expected <gpu>x<count>, e.g. h100x8' srun --maya-emulate=h100 true
refused 'count "0" is not a number from 1 to 1000000' sbatch --maya-emulate=h100x0 --wrap true
refused 'count "eight" is not a number' srun --maya-emulate=h100xeight true
refused '12 GPUs on nodes of 8 \(cluster [a-z0-9-]+\): expected a multiple of 8, or at most 8' \
    sbatch --maya-emulate=h100x12 --wrap true
refused 'unknown key "iterations"; allowed keys: cluster=NAME\|FILE, marker=NAME, iters=N, report=PATH' \
    srun --maya-emulate=h100x8,iterations=3 true
refused 'iters="0": expected the number of iterations to keep in the report, 1 to 1000000' \
    sbatch --maya-emulate=h100x8,iters=0 --wrap true
refused '"oops" is not key=value; allowed keys: cluster=' sbatch --maya-emulate=h100x8,oops --wrap true
refused 'dedup="maybe": expected yes or no' srun --maya-emulate=h100x8,dedup=maybe true
refused 'replicas=.*3 x 2 does not divide the 8 ranks' srun --maya-emulate=h100x8,replicas=3:2 true
refused 'replicas=.*dimensions 2:1 and 2:1 overlap' sbatch --maya-emulate=h100x8,replicas=2:1,2:1 --wrap true
refused '"8:x" is not key=value' srun --maya-emulate=h100x8,replicas=2:1,8:x true
refused "replicas=auto is maya run's .*give the layout it found" srun --maya-emulate=h100x8,replicas=auto true
refused 'cluster=nowhere: no such file and no known cluster of that name; known clusters:' \
    srun --maya-emulate=h100x8,cluster=nowhere true
echo 'cluster "broken" { gpu = "H100-SXM" }' > broken.conf
refused 'cluster=broken.conf: .*broken.conf:1: cluster "broken": expected gpus_per_node' \
    srun --maya-emulate=h100x8,cluster=broken.conf true
[ -z "$(squeue -h)" ] || fail "a refused submission left a job: $(squeue)"

# A good value with a cluster file given by a relative path is accepted.
cat > pod.conf <<'EOF'
cluster "pod" {
    gpu = "H100-SXM"
    gpus_per_node = 4
    intra_latency_us = 3
    nics_per_node = 4
    nic_gbps = 50
    nic_latency_us = 5
}
EOF
srun --maya-emulate=h100x8,cluster=pod.conf,marker=train_step,report=pod-report true > "$TEST_TMP/out" 2>&1 ||
    fail "a good --maya-emulate value was refused: $(cat "$TEST_TMP/out")"

# More tasks than GPUs: refused by srun before the tasks start.
rc=0
srun -n2 --maya-emulate=h100x1 true > "$TEST_TMP/out" 2>&1 || rc=$?
[ $rc != 0 ] || fail "2 tasks for 1 emulated GPU were accepted"
expect_grep 'the step has 2 tasks for 1 emulated GPUs; run at most 1 tasks' "$TEST_TMP/out"

# --multi-prog chooses each task's program after the plugin could make the
# task a launcher of ranks: refused before the tasks start.
printf '0 true\n1 true\n' > multi.conf
rc=0
srun -n2 --multi-prog --maya-emulate=h100x2 multi.conf > "$TEST_TMP/out" 2>&1 || rc=$?
[ $rc != 0 ] || fail "--multi-prog was accepted"
expect_grep 'maya-emulate does not work with --multi-prog' "$TEST_TMP/out"

# plugstack.conf is parsed strictly: a client reading a bad line refuses to
# run and names what is allowed.
bad_conf() {
    local args=$1 pattern=$2
    sed "s|^PlugStackConfig=.*|PlugStackConfig=$SLURM_DIR/bad-plugstack.conf|" "$SLURM_CONF" > "$SLURM_DIR/bad.conf"
    echo "required $MAYA_BUILD/lib/slurm/spank_maya.so $args" > "$SLURM_DIR/bad-plugstack.conf"
    rc=0
    SLURM_CONF=$SLURM_DIR/bad.conf srun --maya-emulate=h100x1 true > "$TEST_TMP/out" 2>&1 || rc=$?
    [ $rc != 0 ] || fail "srun ran with plugstack arguments '$args'"
    expect_grep "$pattern" "$TEST_TMP/out"
}
allowed='allowed: prefix=DIR, trace_root=DIR, time_limit=SECONDS, pin=yes\|no, hwspecs=DIR'
bad_conf "trace_root=$TRACE_ROOT colour=blue" "unknown argument \"colour=blue\"; $allowed"
bad_conf "trace_root=$TRACE_ROOT time_limit=soon" 'time_limit="soon": expected seconds from 1 to 86400'
bad_conf "trace_root=$TRACE_ROOT pin=maybe" 'pin="maybe": expected yes or no'
bad_conf "trace_root=relative/dir" 'trace_root="relative/dir": expected an absolute path'
bad_conf "prefix=$MAYA_BUILD" 'trace_root=DIR is required'
bad_conf "trace_root=$TRACE_ROOT prefix" "argument \"prefix\" is not key=value; $allowed"
