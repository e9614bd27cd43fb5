#!/usr/bin/env bash
# Kernels loaded at run time (cuModuleLoadData, as Triton does under
# torch.compile) are traced with static counts of their PTX instruction
# classes (ptx.* features) when the image has PTX: a fat binary's PTX entry,
# or the PTX a cubin built with line information keeps (Triton's do). A
# cubin without PTX has none, and neither do kernels nvcc registered.
. "$MAYA_TOP/tests/lib.sh"

for image in fatbin G.cubin cubin; do
    RANK=0 emu "$TEST_TMP/$image" "$WORKLOADS/drv_modules" "$WORKLOADS/drv_kernels.$image" > "$TEST_TMP/$image.out" 2>&1 ||
        fail "drv_modules $image failed: $(cat "$TEST_TMP/$image.out")"
    dump "$TEST_TMP/$image/rank-0.mtrace" > "$TEST_TMP/$image.dump"
done
# scale: x[i] *= a -- one load and one store of global memory, no tensor cores.
for image in fatbin G.cubin; do
    expect_grep '^kernel .*name="scale" .* ptx\.insts=[1-9][0-9]* ptx\.mma=0 ptx\.ld_global=1 ptx\.st_global=1 ' \
        "$TEST_TMP/$image.dump" "$image: the instruction mix of scale"
done
# smem_kernel synchronises its block once.
expect_grep '^kernel .*name="smem_kernel\(float\*\)" .* ptx\.bar=1 ' "$TEST_TMP/fatbin.dump"
expect_no_grep 'ptx\.' "$TEST_TMP/cubin.dump" "a cubin without PTX has no ptx.* features"

RANK=0 emu "$TEST_TMP/va" "$WORKLOADS/vector_add" 1024 > "$TEST_TMP/va.out" 2>&1 || fail "vector_add failed"
dump "$TEST_TMP/va/rank-0.mtrace" > "$TEST_TMP/va.dump"
expect_grep '^kernel .*name="vector_add' "$TEST_TMP/va.dump"
expect_no_grep 'ptx\.' "$TEST_TMP/va.dump" "kernels nvcc registered are named; no ptx.* features"
