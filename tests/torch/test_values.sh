#!/usr/bin/env bash
# Values a PyTorch program reads back under maya (tests/workloads/torch/
# values_read.py on 2 ranks). Copies and small collectives of real bytes are
# right. With nvdisasm (scripts/nvdisasm.sh), PyTorch's small kernels are
# computed from their SASS (docs/kernel-exec.md): a max's .item() (of ints
# and of doubles: DSETP), a bf16 and an f16 sum (HADD2.F32, F2FP), an int64
# to float64 copy (I2F.F64.S64) and a float to float16 one, torch.round
# and torch.floor of floats and doubles (FRND), a
# torch.full, torch.unique, the rank-id all-gather of filled ids, and
# torch.sort (its bitonic kernel: BMOV, I2F, MUFU.RCP, F2I), and
# all_gather_object, broadcast_object_list, scatter_object_list and
# send_object_list / recv_object_list give a
# GPU's values. Without nvdisasm those kernels are not computed, and the
# report counts exactly those reads, by the kernel or collective that would
# have had to run.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

d=$TEST_TMP/run
if [ -n "${MAYA_NVDISASM:-}" ] && [ -x "$MAYA_NVDISASM" ]; then
    torch_run "$d" h100x2 values_read.py --objects
    for r in 0 1; do
        out=$d/logs/rank-$r.out
        for c in roundtrip max max_f64 sum_bf16 sum_f16 i64_to_f64 f32_to_f16 round floor round_f64 full unique sort gather_copied gather_filled all_gather_object \
                 broadcast_object_list scatter_object_list send_recv_object_list; do
            expect_grep "^$c right$" "$out"
        done
    done
    python3 - "$d/report.json" <<'PY' || fail "report.json values_not_computed (above)"
import json, sys
v = json.load(open(sys.argv[1]))["values_not_computed"]
w = v["by_writer"]
# no kernel the goal needs is among the writers
assert not any("reduce_kernel" in k or "FillFunctor" in k or "CompareFunctor" in k or "CatArray" in k or
               "bitonicSort" in k for k in w), w
# all_gather_object pads the smaller object to the larger size with bytes
# never written, and a small collective's result is real only if every
# contribution is (docs/values.md): the .cpu() of each rank's 2 gathered
# tensors is counted though the bytes unpickled are right (checked above)
assert sum(c for k, c in w.items() if k.startswith("nccl")) == w.get("ncclAllGather", 0) == 4, w
# and at most one read of bytes nothing wrote (a padding byte, no kernel's)
assert set(w) <= {"ncclAllGather", "(never written)"} and w.get("(never written)", 0) <= 1, w
assert v["reads"] == sum(w.values()), v
PY
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
assert sum(c for k, c in w.items() if "MaxNanFunctor<long>" in k and k.startswith("void at::native::reduce_kernel")) == 2, w
assert sum(c for k, c in w.items() if "FillFunctor" in k) == 2, w
assert sum(c for k, c in w.items() if k.startswith("nccl")) == 4, w
assert v["reads"] == sum(w.values()) >= 8, v
PY
expect_grep "^values not computed: [0-9]* small reads by the host" "$d/report.txt"
exit 0
