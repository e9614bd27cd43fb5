#!/usr/bin/env bash
# Kernel parameters are decoded from the fat binary nvcc embeds, whether its
# entries are as nvcc 13 leaves them by default (cubin plain, PTX Zstd), all
# Zstd (-Xfatbin -compress-all) or all LZ4 (-compress-mode=speed): every
# launch shows each argument's value with its type, and the kernel record
# its layout and the cubin's registers.
. "$MAYA_TOP/tests/lib.sh"

for build in kernel_params kernel_params_zstd kernel_params_lz4; do
    RANK=0 emu "$TEST_TMP/$build" "$WORKLOADS/$build" > "$TEST_TMP/$build.out" 2>&1 ||
        fail "$build failed: $(cat "$TEST_TMP/$build.out")"
    expect_grep "kernel_params: ok" "$TEST_TMP/$build.out"
    d=$TEST_TMP/$build.dump
    dump "$TEST_TMP/$build/rank-0.mtrace" > "$d"
    # int, float, double, size_t, char, struct by value (bytes: -42, 2.5f,
    # 6.125), pointer into the allocation, bool, unsigned short, long long, half
    expect_grep '^launch .*kernel="all_types\(int, float, double, unsigned long, char, Triple, float const\*, bool, unsigned short, long long, __half\)" grid=3,1,1 block=64,1,1 smem=0 args=\(i32:-7, f32:1.5, f64:2.75, u64:1099511627776, char:'"'x'"', bytes:0xd6ffffff000020400000000000801840, ptr:0x[0-9a-f]+\[alloc#[0-9]+\+0\], bool:true, u16:65000, i64:-5000000000, f16:0.5\)' "$d" \
        "$build: all_types arguments not decoded"
    expect_grep '^kernel .*mangled=_Z9all_typesifdmc6TriplePKfbtx6__half params=11 param_bytes=74 p0=i32@0:4 p1=f32@4:4 p2=f64@8:8 p3=u64@16:8 p4=char@24:1 p5=bytes@32:16 p6=ptr@48:8 p7=bool@56:1 p8=u16@58:2 p9=i64@64:8 p10=f16@72:2 regs=[1-9][0-9]* ' "$d" \
        "$build: all_types layout"
    # extern "C": types from the PTX parameter list
    expect_grep '^launch .*kernel="plain_c" grid=1,1,1 block=32,1,1 smem=0 args=\(u32:31, f64:0.25, u64:[0-9]+\)' "$d" \
        "$build: plain_c arguments"
    expect_grep '^launch .*kernel="void scaled<double>\(double\*, double, int\)" grid=8,1,1 block=128,1,1 smem=0 args=\(ptr:0x[0-9a-f]+\[alloc#[0-9]+\+0\], f64:3.5, i32:1024\)' "$d" \
        "$build: template arguments"
    # a parameter past 16 KiB (its size in the cubin's second form of the
    # parameter record): the struct whole, and the float after it
    expect_grep '^kernel .*mangled=_Z8big_list7BigListf params=2 param_bytes=19396 p0=bytes@0:19392 p1=f32@19392:4 ' "$d" \
        "$build: big_list layout"
    expect_grep '^launch .*kernel="big_list\(BigList, float\)" grid=2,1,1 block=32,1,1 smem=0 args=\(bytes:0x[0-9a-f]+, f32:0.75\)' "$d" \
        "$build: big_list arguments"
    expect_no_grep 'raw=0x' "$d" "$build: a launch whose layout was not found"
done
