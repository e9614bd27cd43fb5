#!/usr/bin/env bash
# After a job, the post-processing runs once, as the job's user, never as
# root: jobs of an unprivileged user leave their report next to the output
# and every file of their run directory owned by that user. It has a time
# limit: a post-processing stuck on its storage is stopped, the user finds a
# note saying so, slurmd logs it, and no node is drained. A job whose program
# crashes still gets its report, which records the crash.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/slurm/cluster.sh"
user=mayatest
id -u "$user" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$user" || fail "cannot create user $user"
MAYA_PLUGIN_ARGS="time_limit=3" cluster_start 2
cd "$JOBS_DIR"
as_user() { runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# A folder left by an earlier job of the same id (a cluster whose job ids
# started again) must not leak into the next job's report: plant one where
# the first job's traces will go.
first=$(sed -n 's/^FirstJobId=//p' "$SLURM_CONF")
stale=$TRACE_ROOT/$user/job-$first/step-0
mkdir -p "$stale/slurm" "$stale/traces" && chmod 700 "$TRACE_ROOT/$user"
printf 'version=1\ngpu=H100-SXM\nnprocs=8\nrank.3.signal=9\nrank.6.exit=1\n' > "$stale/slurm/task-3.conf"
echo "not a trace" > "$stale/traces/rank-6.mtrace"
chown -R "$user" "$TRACE_ROOT/$user"

# A batch job of two tasks on two nodes, four ranks.
job=$(as_user sbatch --parsable -N2 -n2 --maya-emulate=h100x4 --wrap "srun $WORKLOADS/vector_add 1024") ||
    fail "sbatch as $user failed"
cluster_wait_job "$job"
expect_count 4 'vector_add n=1024 blocks=4 threads=256: ok' "slurm-$job.out"
for f in "slurm-$job.maya.txt" "slurm-$job.maya.json"; do
    [ -f "$f" ] || fail "no $f next to slurm-$job.out: $(ls)"
    expect_eq "$(stat -c %U "$f")" "$user" "owner of $f"
done
run=$TRACE_ROOT/$user/job-$job/step-0
expect_eq "$(stat -c '%U %a' "$TRACE_ROOT/$user")" "$user 700" "owner and mode of the user's trace folder"
left=$(find "$TRACE_ROOT/$user" ! -user "$user")
[ -z "$left" ] || fail "files in the run directory not owned by $user: $left"
[ "$job" = "$first" ] || fail "the first job is $job, not FirstJobId $first"
ls -d "$TRACE_ROOT/$user/job-$job.old-"*/step-0/slurm/task-3.conf > /dev/null 2>&1 ||
    fail "the earlier job's folder was not moved aside: $(ls "$TRACE_ROOT/$user")"
expect_no_grep '^rank\.[3-7]\.(signal|exit)=[19]' "$run/run.conf" "the earlier job's records leaked into run.conf"
expect_grep '^launcher=slurm$' "$run/run.conf"
expect_grep '^nprocs=4$' "$run/run.conf"
for r in 0 1 2 3; do
    expect_grep "^rank.$r.exit=0$" "$run/run.conf"
    [ -f "$run/traces/rank-$r.mtrace" ] || fail "no trace of rank $r in $run/traces"
done
expect_grep '^status +all 4 processes exited 0' "slurm-$job.maya.txt"
expect_grep '"world_size": 4' "slurm-$job.maya.json"
expect_grep "job $job: report written to $JOBS_DIR/slurm-$job.maya.txt" \
    "$SLURM_DIR/log/slurmd-n1.log" "the batch host's slurmd logged the post-processing"
expect_no_grep "maya: job $job" "$SLURM_DIR/log/slurmd-n2.log" "the post-processing ran on the batch host only"

# A crash: rank 1's process dies of SIGSEGV after its CUDA program ran.
crash='exec sh -c "$0 1024; [ \$RANK = 1 ] && kill -SEGV \$\$; true"'
job=$(as_user sbatch --parsable -N2 -n2 --maya-emulate=h100x2 --wrap "srun sh -c '$crash' $WORKLOADS/vector_add") ||
    fail "sbatch failed"
cluster_wait_job "$job"
expect_grep 'task 1: Segmentation fault' "slurm-$job.out"
[ -f "slurm-$job.maya.txt" ] || fail "the crashed job has no report"
expect_eq "$(stat -c %U "slurm-$job.maya.txt")" "$user" "owner of the crashed job's report"
expect_grep '^rank.1.signal=11$' "$TRACE_ROOT/$user/job-$job/step-0/run.conf"
expect_grep 'rank 1 failed: signal 11 \(Segmentation fault\)' "slurm-$job.maya.txt"
expect_grep '"signal": 11' "slurm-$job.maya.json"
expect_grep '^rank.0.exit=0$' "$TRACE_ROOT/$user/job-$job/step-0/run.conf"

# A post-processing that hangs (its launch record is a FIFO nobody writes,
# as a stuck filesystem would behave) is stopped after time_limit=3 s.
job=$(as_user sbatch --parsable --maya-emulate=h100x1 \
    --wrap 'd=${MAYA_TRACE_DIR%/traces}/slurm; rm "$d/step.conf" && mkfifo "$d/step.conf"') || fail "sbatch failed"
start=$(date +%s)
cluster_wait_job "$job"
took=$(( $(date +%s) - start ))
[ $took -ge 2 ] && [ $took -lt 15 ] || fail "the hanging post-processing took ${took}s; time_limit=3"
expect_grep 'took longer than time_limit=3 s \(plugstack.conf\) and was stopped' "slurm-$job.maya.txt"
expect_grep '"error": "the post-processing .*time_limit=3 s' "slurm-$job.maya.json"
expect_eq "$(stat -c %U "slurm-$job.maya.txt")" "$user" "owner of the time-limit note"
expect_grep "maya: job $job: the post-processing .* took longer than time_limit=3 s" "$SLURM_DIR/log/slurmd-n1.log"

# An interactive srun as the user: the summary on its terminal (stderr), the
# files in its working directory.
mkdir -p "$JOBS_DIR/inter" && chown "$user" "$JOBS_DIR/inter"
(cd "$JOBS_DIR/inter" && as_user srun -n1 --maya-emulate=h100x2 "$WORKLOADS/vector_add" 1024 > out 2> err) ||
    fail "interactive srun failed: $(cat inter/err)"
job=$(ls inter | sed -n 's/^slurm-\([0-9]*\)\.maya\.txt$/\1/p')
[ -n "$job" ] || fail "no slurm-<jobid>.maya.txt in the interactive srun's directory: $(ls inter)"
expect_eq "$(stat -c %U "inter/slurm-$job.maya.json")" "$user" "owner of the interactive report"
expect_grep "$(head -1 "inter/slurm-$job.maya.txt" | sed 's/[][\\.*^$()+?{}|]/\\&/g')" inter/err \
    "srun printed the report on its stderr"

# No node was drained by any of it.
cluster_wait_idle
states=$(sinfo -h -N -o '%N %T %E')
expect_eq "$(echo "$states" | grep -vc ' idle ')" 0 "nodes not idle: $states"
