#!/usr/bin/env bash
# Values a PyTorch program reads back under maya (tests/workloads/torch/
# values_read.py on 2 ranks). Copies and small collectives of real bytes are
# right. With nvdisasm (scripts/nvdisasm.sh), PyTorch's small kernels are
# computed from their SASS (docs/kernel-exec.md): a max's .item() (of ints
# and of doubles: DSETP), a
# torch.full, torch.unique, the rank-id all-gather of filled ids, and
# all_gather_object, broadcast_object_list and scatter_object_list give a
# GPU's values; torch.sort's bitonic kernel is not covered, its read is
# counted by name. Without nvdisasm those kernels are not computed, and the
# report counts exactly those reads, by the kernel or collective that would
# have had to run.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

d=$TEST_TMP/run
if [ -n "${MAYA_NVDISASM:-}" ] && [ -x "$MAYA_NVDISASM" ]; then
    torch_run "$d" h100x2 values_read.py --objects
    for r in 0 1; do
        out=$d/logs/rank-$r.out
        for c in roundtrip max max_f64 full unique gather_copied gather_filled all_gather_object broadcast_object_list \
                 scatter_object_list; do
            expect_grep "^$c right$" "$out"
        done
        # not covered (BMOV in the bitonic sort): the value differs and is counted
        expect_grep "^sort differs$" "$out"
    done
    python3 - "$d/report.json" <<'PY' || fail "report.json values_not_computed (above)"
import json, sys
v = json.load(open(sys.argv[1]))["values_not_computed"]
w = v["by_writer"]
# per rank: the sort's read; no kernel the goal needs is among the writers
assert sum(c for k, c in w.items() if k.startswith("void at::native::bitonicSortKVInPlace")) == 2, w
assert not any("reduce_kernel" in k or "FillFunctor" in k or "CompareFunctor" in k or "CatArray" in k for k in w), w
# all_gather_object pads the smaller object to the larger size with bytes
# never written, and a small collective's result is real only if every
# contribution is (docs/values.md): the .cpu() of each rank's 2 gathered
# tensors is counted though the bytes unpickled are right (checked above)
assert sum(c for k, c in w.items() if k.startswith("nccl")) == w.get("ncclAllGather", 0) == 4, w
assert v["reads"] == sum(w.values()) <= 8, v
PY
    expect_grep "bitonicSortKVInPlace" "$d/report.txt"
    exit 0
fi
echo "note: no nvdisasm: PyTorch's kernels are not computed; checking that their reads are counted"
# an empty cache: SASS texts cached by earlier runs would be read without nvdisasm
export MAYA_CACHE_DIR=$TEST_TMP/empty-cache
torch_run "$d" h100x2 values_read.py
for r in 0 1; do
    out=$d/logs/rank-$r.out
    expect_grep "^roundtrip right$" "$out"
    expect_grep "^gather_copied right$" "$out"
    expect_grep "^max differs$" "$out"
    expect_grep "^full differs$" "$out"
    expect_grep "^gather_filled differs$" "$out"
done
python3 - "$d/report.json" <<'PY' || fail "report.json values_not_computed (above)"
import json, sys
v = json.load(open(sys.argv[1]))["values_not_computed"]
w = v["by_writer"]
# per rank: max.item(), full.item(), the two gathered ids read back, and
# unique's and sort's reads (their kernels' names vary)
assert sum(c for k, c in w.items() if "MaxNanFunctor" in k and k.startswith("void at::native::reduce_kernel")) == 2, w
assert sum(c for k, c in w.items() if "FillFunctor" in k) == 2, w
assert sum(c for k, c in w.items() if k.startswith("nccl")) == 4, w
assert v["reads"] == sum(w.values()) >= 8, v
PY
expect_grep "^values not computed: [0-9]* small reads by the host" "$d/report.txt"
exit 0
