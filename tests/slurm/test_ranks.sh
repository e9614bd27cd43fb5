#!/usr/bin/env bash
# The tasks of a --maya-emulate step become emulated ranks: with one task per
# GPU or fewer tasks than GPUs (each runs its share), on one node or two; each
# rank has its identity (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MAYA_*),
# the emulator on LD_LIBRARY_PATH, and its own core inside the task's binding;
# a multi-rank CUDA workload runs across tasks and nodes and writes one trace
# per rank saying which emulated node and GPU it stood for; NVTX v3 finds the
# emulator's injection library, so a program's NVTX ranges reach its trace.
# Programs that are not ranks (the batch shell) are
# untouched. A failing rank stops the task's other ranks, and how each ended is
# recorded for the report.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/slurm/cluster.sh"
cluster_start 2
cd "$JOBS_DIR"

show='echo "rank=$RANK world=$WORLD_SIZE local=$LOCAL_RANK lws=$LOCAL_WORLD_SIZE node=$MAYA_NODE maya_rank=$MAYA_RANK gpu=$MAYA_GPU gpn=$MAYA_GPUS_PER_NODE intra=$MAYA_INTRA_NODE master=$MASTER_ADDR:$MASTER_PORT task=$SLURM_PROCID host=$SLURMD_NODENAME cpus=$(sed -n "s/^Cpus_allowed_list:\t//p" /proc/self/status) trace=$MAYA_TRACE_DIR lib=${LD_LIBRARY_PATH%%:*} triton=${TRITON_LIBCUDA_PATH-unset} clock=${MAYA_HOST_CLOCK-unset} nvtx=${NVTX_INJECTION64_PATH-unset} launch=${MAYA_LAUNCH_EXE-none} dedup=${MAYA_DEDUP-unset}"'

# The run directory of the last step of the newest job of root.
last_run() {
    local job
    job=$(ls "$TRACE_ROOT/root" | sed -n 's/^job-//p' | sort -n | tail -1)
    ls -d "$TRACE_ROOT/root/job-$job"/step-[0-9]* | sort -t- -k3 -n | tail -1
}

# The job id of the newest run directory, and the MASTER_PORT the plugin
# derives for its step 0.
last_job() { basename "$(dirname "$(last_run)")" | sed 's/^job-//'; }
port_of() { echo $((10000 + ($1 % 625) * 32)); }

# field NAME LINE: the value of NAME=... in a line printed by $show.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# One task, two cores, four ranks.
srun -n1 -c2 --maya-emulate=h100x4 sh -c "$show" > one.out 2> one.err || fail "srun -n1 failed: $(cat one.err)"
expect_count 4 '^rank=' one.out
job=$(last_job)
for r in 0 1 2 3; do
    line=$(grep "^rank=$r " one.out) || fail "no rank $r in: $(cat one.out)"
    expect_eq "$(field world "$line")" 4 "WORLD_SIZE of rank $r"
    expect_eq "$(field local "$line")" $r "LOCAL_RANK of rank $r"
    expect_eq "$(field lws "$line")" 4 "LOCAL_WORLD_SIZE of rank $r"
    expect_eq "$(field node "$line")" 0 "MAYA_NODE of rank $r"
    expect_eq "$(field maya_rank "$line")" $r "MAYA_RANK of rank $r"
    expect_eq "$(field gpu "$line")" H100-SXM "MAYA_GPU of rank $r"
    expect_eq "$(field gpn "$line")" 4 "MAYA_GPUS_PER_NODE of rank $r"
    expect_eq "$(field intra "$line")" nvswitch "MAYA_INTRA_NODE of rank $r (dgx-h100)"
    expect_eq "$(field master "$line")" "127.0.0.1:$(port_of "$job")" "MASTER_ADDR:MASTER_PORT of rank $r (job $job, step 0)"
    expect_eq "$(field trace "$line")" "$TRACE_ROOT/root/job-$job/step-0/traces" "MAYA_TRACE_DIR of rank $r"
    expect_eq "$(field lib "$line")" "$MAYA_BUILD/lib/maya" "first LD_LIBRARY_PATH entry of rank $r"
    expect_eq "$(field triton "$line")" "$MAYA_BUILD/lib/maya" "TRITON_LIBCUDA_PATH of rank $r"
    expect_eq "$(field launch "$line")" none "launcher variables left in rank $r"
    expect_eq "$(field clock "$line")" cpu "MAYA_HOST_CLOCK of rank $r (four ranks share two cores)"
    expect_eq "$(field nvtx "$line")" "$MAYA_BUILD/lib/maya/libmaya-nvtx.so" "NVTX_INJECTION64_PATH of rank $r"
done
# Four ranks on the task's two cores: one core each, ranks 0 and 1 apart.
c0=$(field cpus "$(grep '^rank=0 ' one.out)")
c1=$(field cpus "$(grep '^rank=1 ' one.out)")
[[ $c0 =~ ^[0-9]+$ && $c1 =~ ^[0-9]+$ && $c0 != "$c1" ]] || fail "ranks 0 and 1 pinned to '$c0' and '$c1'"
# dedup=yes: the ranks get duplicate-rank elimination (docs/dedup.md); without it they do not.
srun -n1 -c2 --maya-emulate=h100x2,dedup=yes sh -c "$show" > dedup.out 2>&1 ||
    fail "srun dedup=yes failed: $(cat dedup.out)"
expect_count 2 ' dedup=1$' dedup.out
expect_count 4 ' dedup=unset$' one.out
# Two ranks on two cores have one each: the active clock; the job's own choice stands.
srun -n1 -c2 --maya-emulate=h100x2 sh -c "$show" > clock.out 2>&1 || fail "srun -c2 h100x2 failed: $(cat clock.out)"
expect_count 2 ' clock=active ' clock.out
MAYA_HOST_CLOCK=cpu srun -n1 -c2 --maya-emulate=h100x2 sh -c "$show" > clock.out 2>&1 ||
    fail "srun with MAYA_HOST_CLOCK=cpu failed: $(cat clock.out)"
expect_count 2 ' clock=cpu ' clock.out

# Two nodes, one task each, sixteen ranks: emulated nodes of 8 GPUs.
srun -N2 -n2 --maya-emulate=h100x16 sh -c "$show" > two.out 2> two.err || fail "srun -N2 failed: $(cat two.err)"
expect_count 16 '^rank=' two.out
job=$(last_job)
for r in $(seq 0 15); do
    line=$(grep "^rank=$r " two.out) || fail "no rank $r"
    expect_eq "$(field node "$line")" $((r / 8)) "MAYA_NODE of rank $r"
    expect_eq "$(field local "$line")" $((r % 8)) "LOCAL_RANK of rank $r"
    expect_eq "$(field host "$line")" "n$((r / 8 + 1))" "Slurm node running rank $r"
    expect_eq "$(field task "$line")" $((r / 8)) "Slurm task running rank $r"
    expect_eq "$(field master "$line")" "127.0.0.1:$(port_of "$job")" "MASTER_ADDR:MASTER_PORT of rank $r (job $job, step 0)"
done

# Uneven: three tasks for eight GPUs get contiguous blocks of 2, 3 and 3.
srun -N2 -n3 --maya-emulate=h100x8 sh -c "$show" > three.out 2> three.err || fail "srun -n3 failed: $(cat three.err)"
for r in $(seq 0 7); do
    want=0
    [ $r -ge 2 ] && want=1
    [ $r -ge 5 ] && want=2
    expect_eq "$(field task "$(grep "^rank=$r " three.out)")" $want "Slurm task running rank $r of 8 over 3 tasks"
done

# A multi-rank CUDA workload (NCCL collectives whose small results are
# checked across ranks), on two nodes of one task each and as one task: one
# trace per rank, each saying which rank, emulated node and GPU it was.
for layout in "-N2 -n2" "-n1"; do
    # shellcheck disable=SC2086
    srun $layout --maya-emulate=h100x4 "$WORKLOADS/nccl_colls" > nccl.out 2>&1 ||
        fail "nccl_colls ($layout) failed: $(cat nccl.out)"
    for r in 0 1 2 3; do
        expect_grep "^nccl_colls rank $r/4: [0-9]+ checks, 0 failed" nccl.out
    done
    run=$(last_run)
    for r in 0 1 2 3; do
        [ -f "$run/traces/rank-$r.mtrace" ] || fail "no trace for rank $r in $run/traces: $(ls "$run/traces")"
        dump "$run/traces/rank-$r.mtrace" > "$TEST_TMP/dump"
        head -1 "$TEST_TMP/dump" > "$TEST_TMP/hdr"
        expect_grep "^header .* kind=rank rank=$r world_size=4 local_rank=$r node=0 gpus_per_node=4 .* gpu=H100-SXM" "$TEST_TMP/hdr"
    done
    # How each rank ended, for the report (merged into run.conf after the step).
    expect_grep '^launcher=slurm$' "$run/run.conf"
    for r in 0 1 2 3; do
        expect_grep "^rank.$r.exit=0$" "$run/run.conf"
    done
done

# NVTX ranges under srun: llm.c's "Train step N" ranges are in the trace.
srun -n1 --maya-emulate=h100x1 "$WORKLOADS/llmc_steps" 3 > nvtx.out 2>&1 || fail "llmc_steps failed: $(cat nvtx.out)"
dump "$(last_run)/traces/rank-0.mtrace" > "$TEST_TMP/dump"
expect_count 3 'marker=push name="Train step [0-9]+"$' "$TEST_TMP/dump"
expect_count 3 'marker=pop name="Train step [0-9]+"$' "$TEST_TMP/dump"

# A batch job: the shell is no rank and loads nothing of the emulator; the
# srun inside it inherits --maya-emulate and its tasks are the ranks.
cat > batch.sh <<EOF
#!/bin/sh
#SBATCH --maya-emulate=h100x2
echo "shell rank=\${RANK-unset} world=\${WORLD_SIZE-unset} gpu=\$MAYA_GPU"
grep -c libmaya /proc/\$\$/maps
srun sh -c '$show'
EOF
job=$(sbatch --parsable -N2 -n2 batch.sh) || fail "sbatch failed"
cluster_wait_job "$job"
expect_grep '^shell rank=unset world=unset gpu=H100-SXM$' "slurm-$job.out"
expect_grep '^0$' "slurm-$job.out" "the batch shell mapped none of the emulator's libraries"
expect_count 2 '^rank=' "slurm-$job.out"
expect_grep '^rank=1 world=2 .* task=1 host=n2 ' "slurm-$job.out"
[ -z "$(ls "$TRACE_ROOT/root/job-$job/step-batch/traces")" ] || fail "the batch shell wrote a trace"
[ -z "$(ls "$TRACE_ROOT/root/job-$job/step-0/traces")" ] || fail "sh, which never calls CUDA, wrote a trace"

# salloc: an srun inside the allocation inherits the option, and reports its
# step itself when it ends (slurm-<job>.<step>.maya.txt in its directory).
salloc -N1 --maya-emulate=h100x2 srun "$WORKLOADS/vector_add" 1024 > salloc.out 2>&1 || fail "salloc failed: $(cat salloc.out)"
expect_count 2 'vector_add n=1024 blocks=4 threads=256: ok' salloc.out
run=$(last_run)
job=$(basename "$(dirname "$run")")
[ -f "slurm-${job#job-}.0.maya.txt" ] || fail "no slurm-${job#job-}.0.maya.txt after the salloc step: $(ls)"
expect_grep '^rank.1.exit=0$' "$run/run.conf"

# A failing rank ends its task with its status and stops the task's other
# ranks (which would otherwise wait for it); run.conf records both.
start=$(date +%s)
rc=0
srun -n1 --maya-emulate=h100x2 sh -c '[ "$RANK" = 1 ] && exit 7; sleep 60' > fail.out 2>&1 || rc=$?
[ $rc = 7 ] || fail "srun exited $rc; expected rank 1's exit status 7: $(cat fail.out)"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "rank 0 was not stopped when rank 1 failed"
conf=$(last_run)/run.conf
expect_grep '^rank.1.exit=7$' "$conf"
expect_grep '^rank.0.signal=15$' "$conf"
expect_grep '^rank.0.note=terminated: rank 1 failed$' "$conf"

# A rank killed by a signal: Slurm sees the task die of it.
rc=0
srun -n1 --maya-emulate=h100x1 sh -c 'kill -SEGV $$' > segv.out 2>&1 || rc=$?
expect_grep 'task 0: Segmentation fault' segv.out
expect_grep '^rank.0.signal=11$' "$(last_run)/run.conf"

# A program that does not exist: each rank says so, the task exits 127.
rc=0
srun -n1 --maya-emulate=h100x2 ./no-such-program > missing.out 2>&1 || rc=$?
[ $rc = 127 ] || fail "a missing program gave exit $rc, expected 127"
expect_count 2 '^maya-launch: cannot run ./no-such-program: No such file or directory' missing.out

# A rank that hangs on the other node (SIGSTOP) while rank 0 waits for it in
# an all-reduce: task 0's watchdog names it within MAYA_HANG_TIMEOUT and stops
# the step.
rc=0
start=$(date +%s)
MAYA_HANG_TIMEOUT=3 srun -N2 -n2 --maya-emulate=h100x2,cluster=dgx-h100 "$WORKLOADS/faults" stop 30 > hang.out 2>&1 || rc=$?
[ $rc != 0 ] || fail "a hung step succeeded: $(cat hang.out)"
[ $(( $(date +%s) - start )) -lt 40 ] || fail "the hung step was not stopped within 40 s"
expect_grep 'rank 1 hung: no call for 3 s while rank 0 waits in allreduce #29 on communicator 0x[0-9a-f]+ \(for rank 1\)' hang.out
expect_grep '^cause=rank 1 hung' "$(last_run)/slurm/task-0.conf"



# pin=no (slurmstepd reads plugstack.conf for each step): ranks keep the
# task's binding, both cores.
sed -i 's/$/ pin=no/' "$SLURM_DIR/plugstack.conf"
srun -n1 -c2 --maya-emulate=h100x2 sh -c "$show" > nopin.out 2>&1 || fail "srun with pin=no failed: $(cat nopin.out)"
for r in 0 1; do
    expect_eq "$(field cpus "$(grep "^rank=$r " nopin.out)")" "0-1" "CPUs of rank $r with pin=no"
done
cluster_wait_idle
