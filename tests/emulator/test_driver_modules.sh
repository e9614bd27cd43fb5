#!/usr/bin/env bash
# Driver-API modules: the same device code loaded with cuModuleLoadData as a
# cubin (plain, and -G with its PTX inside), as fat binaries (nvcc's default, all-Zstd, all-LZ4) and as PTX gives
# the same kernels, function attributes from the cubin (registers, launch
# bounds, static shared memory), a working __device__ variable, and
# launches (kernelParams, packed buffer, cuLaunchKernelEx with a cluster,
# cooperative) traced as driver launches with their argument values.
# Misuse fails with the driver's codes (checked inside drv_modules).
. "$MAYA_TOP/tests/lib.sh"

for image in cubin G.cubin fatbin zstd.fatbin lz4.fatbin ptx; do
    out=$TEST_TMP/$image.out
    RANK=0 emu "$TEST_TMP/$image" "$WORKLOADS/drv_modules" "$WORKLOADS/drv_kernels.$image" > "$out" 2>&1 ||
        fail "drv_modules $image failed: $(cat "$out")"
    expect_grep "^drv_modules: ok" "$out"
    expect_grep "^functions=3$" "$out"
    expect_grep "^name=_Z5mixedidmc4PairPf$" "$out"
    expect_grep "^mixed params=6 p4_offset=32 p4_size=16$" "$out"
    expect_grep "^global bytes=16 roundtrip=7,8,9,10$" "$out"
    # launch bounds and the 1 KiB buffer come from the cubin, or from PTX
    expect_grep "^smem_kernel regs=[0-9]+ max_threads=128 static_smem=1024$" "$out"
    case $image in
    ptx) ;;
    G.cubin) expect_grep "^smem_kernel regs=[1-9][0-9]* " "$out" "$image: registers from the cubin" ;;
    *) expect_grep "^smem_kernel regs=12 " "$out" "$image: registers from the cubin" ;;
    esac

    d=$TEST_TMP/$image.dump
    dump "$TEST_TMP/$image/rank-0.mtrace" > "$d"
    # extern "C": a bare cubin has offsets and sizes but no types (bytes);
    # with PTX in the image (or kept in a -G cubin), its parameter types
    scale_args='u64:[0-9]+, f32:2.5, u32:1000'
    [ "$image" = cubin ] && scale_args='bytes:0x[0-9a-f]{16}, bytes:0x00002040, bytes:0xe8030000'
    expect_grep '^launch .*api=cuLaunchKernel result=0 kernel="scale" grid=4,1,1 block=256,1,1 smem=0 driver args=\('"$scale_args"'\)' "$d" \
        "$image: kernelParams launch"
    expect_grep '^launch .*api=cuLaunchKernel result=0 kernel="mixed\(int, double, unsigned long, char, Pair, float\*\)" grid=1,1,1 block=32,1,1 smem=0 driver args=\(i32:-3, f64:0.125, u64:8589934592, char:'"'q'"', bytes:0x0b0000000000c03f00000000000002c0, ptr:0x[0-9a-f]+\[alloc#[0-9]+\+0\]\)' "$d" \
        "$image: packed-buffer launch"
    expect_grep '^launch .*api=cuLaunchKernelEx result=0 kernel="smem_kernel\(float\*\)" grid=8,1,1 block=128,1,1 smem=4096 cluster=2,1,1 driver args=\(ptr:' "$d" \
        "$image: cuLaunchKernelEx with a cluster"
    expect_grep '^launch .*api=cuLaunchCooperativeKernel result=0 kernel="scale" grid=2,1,1 block=128,1,1 smem=0 driver cooperative' "$d"
    expect_count 4 '^launch ' "$d"
    expect_grep '^call .*api=cuLaunchKernelEx result=912' "$d" "$image: a cluster that does not divide the grid"
    expect_grep '^call .*api=cuModuleLoadData result=200' "$d" "$image: garbage is not an image"
    expect_grep '^end .*unsupported_calls=0 ' "$d"
done
