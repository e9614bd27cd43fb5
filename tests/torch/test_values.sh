#!/usr/bin/env bash
# Values a PyTorch program reads back under maya (tests/workloads/torch/
# values_read.py on 2 ranks): what copies and small collectives of copied
# bytes give is right; what kernels would have computed (a max, a
# torch.full, an all-gather of filled ids) is not, and the report counts
# exactly those reads, by the kernel or collective that would have had to run.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

d=$TEST_TMP/run
torch_run "$d" h100x2 values_read.py
for r in 0 1; do
    out=$d/logs/rank-$r.out
    expect_grep "^roundtrip right$" "$out"
    expect_grep "^gather_copied right$" "$out"
    # not computed: the values differ from a GPU's (if one day they are
    # computed, this test is to say so)
    expect_grep "^max differs$" "$out"
    expect_grep "^full differs$" "$out"
    expect_grep "^gather_filled differs$" "$out"
done
python3 - "$d/report.json" <<'PY' || fail "report.json values_not_computed (above)"
import json, sys
v = json.load(open(sys.argv[1]))["values_not_computed"]
w = v["by_writer"]
# per rank: max.item(), full.item(), the two gathered ids read back
assert v["reads"] == 8, v
assert sum(w.values()) == 8, w
assert sum(c for k, c in w.items() if "MaxNanFunctor" in k and k.startswith("void at::native::reduce_kernel")) == 2, w
assert sum(c for k, c in w.items() if "FillFunctor" in k) == 2, w
assert sum(c for k, c in w.items() if k.startswith("nccl")) == 4, w
PY
expect_grep "^values not computed: 8 small reads by the host" "$d/report.txt"
exit 0
