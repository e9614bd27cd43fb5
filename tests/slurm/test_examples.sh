#!/usr/bin/env bash
# slurm_examples/ work on a real cluster: the pre-flight script prints the
# GPU-hours of N iterations from its job's report; the comparison script
# prints one line per GPU configuration from each job's report and refuses a
# bad configuration at submission; the plugstack.conf line is accepted.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/slurm/cluster.sh"
cluster_start 2
cd "$JOBS_DIR"
examples=$MAYA_TOP/slurm_examples

# json_get FILE KEY
json_get() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
# close A B: two numbers printed with 2-3 decimals agree
close() { python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 0.006 + 0.001 * abs(b))' "$1" "$2"; }

# Pre-flight: 2 emulated H100s, 100000000 iterations.
PREFLIGHT_SBATCH="-N2 -n2" "$examples/preflight.sbatch" h100x2 100000000 "$WORKLOADS/vector_add" 4096 \
    > pre.out 2> pre.err || fail "preflight failed: $(cat pre.err pre.out)"
job=$(sed -n 's/^preflight: job \([0-9]*\) emulates h100x2 on CPU nodes$/\1/p' pre.err)
[ -n "$job" ] || fail "preflight did not say its job: $(cat pre.err)"
expect_count 2 'vector_add n=4096 blocks=16 threads=256: ok' "maya-preflight-$job.out"
it=$(json_get "maya-preflight-$job.maya.json" iteration_time_s)
line=$(grep '^2 x H100-SXM (dgx-h100): .* ms per iteration (steady state)$' pre.out) ||
    fail "no iteration line in: $(cat pre.out)"
close "$(echo "$line" | sed 's/.*: \([0-9.]*\) ms per.*/\1/')" "$(python3 -c "print($it * 1e3)")" ||
    fail "preflight's iteration time is not the report's ($it s): $line"
line=$(grep '^100000000 iterations: .* hours, .* GPU-hours$' pre.out) || fail "no GPU-hours line: $(cat pre.out)"
hours=$(echo "$line" | sed 's/^100000000 iterations: \([0-9.]*\) hours.*/\1/')
gpuh=$(echo "$line" | sed 's/.*, \([0-9.]*\) GPU-hours$/\1/')
close "$hours" "$(python3 -c "print($it * 100000000 / 3600)")" || fail "hours for 100000000 iterations: $line"
close "$gpuh" "$(python3 -c "print(2 * $it * 100000000 / 3600)")" || fail "GPU-hours for 2 GPUs: $line"
expect_grep '^peak GPU memory 0.00 GiB of 79.18 GiB$' pre.out

# Comparison: two configurations, one line each, from their reports.
COMPARE_SBATCH="-n1" "$examples/compare.sh" -n 100000000 h100x2 a100x4 -- "$WORKLOADS/vector_add" 4096 \
    > cmp.out 2> cmp.err || fail "compare failed: $(cat cmp.err cmp.out)"
expect_grep '^config +iteration +hours +GPU-hours +peak memory +note +\(100000000 iterations\)$' cmp.out
for c in h100x2:2 a100x4:4; do
    config=${c%:*} count=${c#*:}
    job=$(sed -n "s/^compare: $config is job \([0-9]*\)$/\1/p" cmp.err)
    [ -n "$job" ] || fail "compare did not say the job of $config: $(cat cmp.err)"
    it=$(json_get "maya-compare-$job.maya.json" iteration_time_s)
    row=$(grep "^$config " cmp.out) || fail "no line for $config: $(cat cmp.out)"
    set -- $row
    close "$2" "$(python3 -c "print($it * 1e3)")" || fail "$config: iteration $2 ms, report says $it s"
    close "$5" "$(python3 -c "print($count * $it * 100000000 / 3600)")" || fail "$config: GPU-hours $5"
done
# A bad configuration is refused at submission, and nothing is left queued.
rc=0
"$examples/compare.sh" h100x2 nonesuchx2 -- true > bad.out 2>&1 || rc=$?
[ $rc = 1 ] || fail "compare with a bad configuration exited $rc: $(cat bad.out)"
expect_grep 'unknown GPU "nonesuch"' bad.out
cluster_wait_idle
[ -z "$(squeue -h)" ] || fail "jobs left after a refused comparison: $(squeue)"

# The plugstack.conf example, pointed at this build and trace root.
sed "s|/opt/maya|$MAYA_BUILD|; s|/shared/maya|$TRACE_ROOT|" "$examples/plugstack.conf" > "$SLURM_DIR/example-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$SLURM_DIR/example-plugstack.conf|" "$SLURM_CONF" > "$SLURM_DIR/example.conf"
SLURM_CONF=$SLURM_DIR/example.conf srun --maya-emulate=h100x1 true > ex.out 2>&1 ||
    fail "srun with the example plugstack.conf line failed: $(cat ex.out)"
