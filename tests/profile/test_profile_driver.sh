#!/usr/bin/env bash
# The profiler on driver-API programs, forwarding to maya's emulator
# libraries in place of a GPU: modules loaded from each kind of image
# (cubin, fat binary, PTX) and launched with kernelParams, a packed
# parameter buffer, cuLaunchKernelEx with a cluster and cooperatively
# (drv_modules); the driver's copies and memsets, linear, 2D and 3D, failed
# ones included (drv_memory); functions reached through cuGetProcAddress
# (drv_procaddr). Each program works as before, and its profile holds the
# device ops an emulated run records, each measured, launches with their
# kernel's name and argument values.
# Then where programs get the driver's functions by name: cuGetProcAddress,
# the runtime's cudaGetDriverEntryPoint[ByVersion] and dlsym on libcuda.so.1
# (Triton's launcher, PyTorch's lazily bound driver calls) all hand out the
# profiler's functions for those it traces, the _ptsz twin for per-thread
# default streams, and the driver's own for the others.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/profile/profile_lib.sh"

check() { # NAME WORKLOAD ARGS...
    local n=$1 w=$2
    shift 2
    RANK=0 emu "$TEST_TMP/$n.emu" "$WORKLOADS/$w" "$@" > "$TEST_TMP/$n.emu.out" 2>&1 ||
        fail "$n under the emulator failed: $(tail -5 "$TEST_TMP/$n.emu.out")"
    RANK=0 profile_run "$TEST_TMP/$n.prof" "$WORKLOADS/$w" "$@" > "$TEST_TMP/$n.prof.out" 2>&1 ||
        fail "$n under the profiler failed: $(tail -5 "$TEST_TMP/$n.prof.out")"
    grep -v "^maya-emu:" "$TEST_TMP/$n.emu.out" > "$TEST_TMP/a"
    grep -v "^maya-emu:" "$TEST_TMP/$n.prof.out" > "$TEST_TMP/b"
    diff "$TEST_TMP/a" "$TEST_TMP/b" > /dev/null || fail "$n prints other things under the profiler: $(diff "$TEST_TMP/a" "$TEST_TMP/b" | head -5)"
    same_ops "$TEST_TMP/$n.emu/rank-0.mtrace" "$TEST_TMP/$n.prof/rank-0.mtrace" "$n"
}

for image in cubin fatbin ptx; do
    check "modules-$image" drv_modules "$WORKLOADS/drv_kernels.$image"
    p=$TEST_TMP/same.p.ops
    expect_grep '^launch +api=cuLaunchKernel result=0 kernel="scale" grid=4,1,1 block=256,1,1 smem=0 driver args=' "$p"
    expect_grep '^launch +api=cuLaunchKernel result=0 kernel="mixed\(int, double, unsigned long, char, Pair, float\*\)" .* driver args=\(i32:-3, f64:0.125, u64:8589934592, ' "$p" \
        "$image: the packed buffer's values"
    expect_grep '^launch +api=cuLaunchKernelEx result=0 kernel="smem_kernel\(float\*\)" grid=8,1,1 block=128,1,1 smem=4096 cluster=2,1,1 driver ' "$p"
    expect_grep '^launch +api=cuLaunchCooperativeKernel result=0 kernel="scale" .* driver cooperative ' "$p"
    expect_count 4 '^launch ' "$p"
    # each measured between the driver's events (cuEventRecord underneath)
    expect_count 4 '^launch .* measured_ns=[1-9]' "$TEST_TMP/same.p.txt"
    expect_grep '^call .*api=cuLaunchKernelEx result=912' "$TEST_TMP/same.p.txt" "$image: a refused launch is a CALL record"
done
check memory drv_memory
expect_grep '^memcpy +api=cuMemcpyHtoD result=1 ' "$TEST_TMP/same.p.ops" "a failed copy, as the emulated driver records it"
expect_grep '^memcpy +api=cuMemcpy3D result=0 .* shape=8x2x2$' "$TEST_TMP/same.p.ops"
expect_grep '^memset +api=cuMemsetD2D8 result=0 ' "$TEST_TMP/same.p.ops"
check procaddr drv_procaddr "$MAYA_TOP/emulator/driver/driver.symbols"
expect_count 2 '^memcpy .*measured_ns=[1-9]' "$TEST_TMP/same.p.txt" # copies through functions cuGetProcAddress gave

# the entry points programs get by name
RANK=0 profile_run "$TEST_TMP/entry" python3 - "$MAYA_LIBS" > "$TEST_TMP/out" 2>&1 <<'PY' || fail "entry points (above): $(cat "$TEST_TMP/out")"
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_GLOBAL)
ctypes.CDLL("libcudart.so.13", mode=os.RTLD_GLOBAL)
prof = ctypes.CDLL(os.path.join(sys.argv[1], "libmaya-profile.so"))
glob = ctypes.CDLL(None)

def addr(lib, name):
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value

def ask(fn, name, *args):
    p, st = ctypes.c_void_p(), ctypes.c_int()
    assert fn(name.encode(), ctypes.byref(p), *args, ctypes.byref(st)) == 0, name
    return p.value

def procaddr(name, version=12000, flags=0):
    return ask(glob.cuGetProcAddress_v2, name, version, ctypes.c_uint64(flags))

def entry(name, version=12000, flags=0):
    return ask(glob.cudaGetDriverEntryPointByVersion, name, version, ctypes.c_uint64(flags))

for api, sym in [("cuLaunchKernel", "cuLaunchKernel"), ("cuLaunchKernelEx", "cuLaunchKernelEx"),
                 ("cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel"),
                 ("cuModuleLoadData", "cuModuleLoadData"), ("cuModuleGetFunction", "cuModuleGetFunction"),
                 ("cuLibraryGetKernel", "cuLibraryGetKernel"), ("cuMemcpyHtoD", "cuMemcpyHtoD_v2"),
                 ("cuMemsetD32Async", "cuMemsetD32Async"), ("cuGetProcAddress", "cuGetProcAddress_v2")]:
    mine = addr(prof, sym)
    got = {"cuGetProcAddress": procaddr(api), "cudaGetDriverEntryPointByVersion": entry(api),
           "cudaGetDriverEntryPoint": ask(glob.cudaGetDriverEntryPoint, api, ctypes.c_uint64(0)),
           "dlsym(libcuda.so.1)": addr(cuda, sym)}
    for how, a in got.items():
        assert a == mine, f"{how}: {api} is {a:#x}, not the profiler's {sym} ({mine:#x})"
assert entry("cuLaunchKernel", flags=2) == addr(prof, "cuLaunchKernel_ptsz"), "per-thread: not cuLaunchKernel_ptsz"
assert procaddr("cuLaunchKernel", flags=2) == addr(prof, "cuLaunchKernel_ptsz"), "per-thread: not cuLaunchKernel_ptsz"
assert procaddr("cuGetProcAddress", version=11030) == addr(prof, "cuGetProcAddress"), "the old cuGetProcAddress"
real = addr(cuda, "cuDeviceGet")
assert procaddr("cuDeviceGet") == real and entry("cuDeviceGet") == real, "cuDeviceGet was replaced"
assert not hasattr(prof, "cuDeviceGet"), "the profiler defines cuDeviceGet"
print("entry points: ok")
PY
expect_grep "^entry points: ok$" "$TEST_TMP/out"
# lookups through RTLD_DEFAULT / RTLD_NEXT reach libc's dlsym with a jump,
# so that it sees its caller's return address, not the profiler's
objdump -d "$MAYA_LIBS/libmaya-profile.so" | awk '/<dlsym@@GLIBC_2.34>:/,/^$/' > "$TEST_TMP/dlsym.s"
expect_grep 'jmp +\*%r' "$TEST_TMP/dlsym.s" "the profiler's dlsym does not jump to libc's"
exit 0
