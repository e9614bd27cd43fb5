#!/usr/bin/env bash
# The job's NCCL_ALGO reaches the estimator through maya run: an nccl-tests
# style all-reduce of 4 MiB on 8 emulated H100s (one process, 8 devices)
# is timed as NVLS under NCCL_ALGO=nvls and as a ring under NCCL_ALGO=ring,
# each taking on the timeline what maya estimate gives for it under the
# same variable (the last GPU's collective of an iteration starts when the
# host has issued all eight, so it takes its device time alone).
. "$MAYA_TOP/tests/lib.sh"

run_one() { # ALGO: the last GPU's all-reduce duration (us) in the last iteration
    local dir=$TEST_TMP/$1
    NCCL_ALGO=$1 "$MAYA" run -q --timeline full -g h100x8 -n 1 -o "$dir" -- \
        "$WORKLOADS/nccl_perf" --op allreduce --devices 8 --min 4194304 --max 4194304 \
        --warmup 1 --iters 3 > "$dir.log" 2>&1 || fail "maya run with NCCL_ALGO=$1: $(tail -3 "$dir.log")"
    python3 - "$dir/timeline.json" <<'EOF'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))['traceEvents']
      if e.get('ph') == 'X' and e.get('pid') == 0 and e.get('cat') == 'communication']
last = max(e['tid'] for e in ev)
print('%.3f' % sorted((e for e in ev if e['tid'] == last), key=lambda e: e['ts'])[-1]['dur'])
EOF
}

for algo in nvls ring; do
    want=$(NCCL_ALGO=$algo "$MAYA" estimate allreduce bytes=4M ranks=8 gpu=h100)
    echo "$want" | grep -q "algo=$algo " || fail "NCCL_ALGO=$algo: maya estimate chose otherwise: $want"
    got=$(run_one "$algo")
    expect_near "$got" "$(echo "$want" | sed -n 's/.*device_us=\([^ ]*\).*/\1/p')" 0.001 \
        "4 MiB all-reduce on the timeline under NCCL_ALGO=$algo"
    eval "t_$algo=$got"
done
# at 4 MiB NVLS is NCCL's own choice (the learned model answers) and a ring
# is not (the analytical model, which honours the variable, answers): two
# different times
NCCL_ALGO=nvls "$MAYA" estimate allreduce bytes=4M ranks=8 gpu=h100 | grep -q 'model=learned ' ||
    fail "NCCL_ALGO=nvls at 4 MiB: NCCL's own choice, the learned model"
NCCL_ALGO=ring "$MAYA" estimate allreduce bytes=4M ranks=8 gpu=h100 | grep -q 'model=analytical ' ||
    fail "NCCL_ALGO=ring at 4 MiB: a narrowed choice, the analytical model"
[ "$t_nvls" != "$t_ring" ] || fail "NVLS and ring both $t_nvls us at 4 MiB"
