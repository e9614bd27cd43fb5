#!/usr/bin/env bash
# The stand-ins for the libraries torch links but maya does not model answer
# what is implemented as the real ones do (versions, handles, error strings),
# and anything else returns the library's not-supported code and is counted
# in the trace. Called through ctypes, as a program would through dlopen.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" python3 - "$MAYA_LIBS" > "$TEST_TMP/out" 2>&1 <<'PYEOF' || { cat "$TEST_TMP/out"; fail "stand-in calls failed"; }
import ctypes as C, sys
lib = lambda name: C.CDLL(f"{sys.argv[1]}/{name}")

def check(what, got, want):
    if got != want:
        sys.exit(f"{what}: expected {want!r}, got {got!r}")

nvrtc = lib("libnvrtc.so.13")
major, minor, n = C.c_int(), C.c_int(), C.c_int()
check("nvrtcVersion", nvrtc.nvrtcVersion(C.byref(major), C.byref(minor)), 0)
check("NVRTC version", (major.value, minor.value), (13, 0))
check("nvrtcGetNumSupportedArchs", nvrtc.nvrtcGetNumSupportedArchs(C.byref(n)), 0)
archs = (C.c_int * n.value)()
check("nvrtcGetSupportedArchs", nvrtc.nvrtcGetSupportedArchs(archs), 0)
check("sm_90 among NVRTC's architectures", 90 in list(archs), True)
nvrtc.nvrtcGetErrorString.restype = C.c_char_p
check("nvrtcGetErrorString(6)", nvrtc.nvrtcGetErrorString(6), b"NVRTC_ERROR_COMPILATION")
check("nvrtcVersion(NULL)", nvrtc.nvrtcVersion(None, None), 3)
prog = C.c_void_p()
# Compilation is not emulated: NVRTC_ERROR_INTERNAL_ERROR, counted.
check("nvrtcCreateProgram", nvrtc.nvrtcCreateProgram(C.byref(prog), b"", b"x.cu", 0, None, None), 11)

sparse = lib("libcusparse.so.12")
h, v, s = C.c_void_p(), C.c_int(), C.c_void_p(1)
check("cusparseCreate", sparse.cusparseCreate(C.byref(h)), 0)
check("cusparseGetVersion", sparse.cusparseGetVersion(h, C.byref(v)), 0)
check("cuSPARSE major version", v.value // 1000, 12)
check("cusparseSetStream(NULL)", sparse.cusparseSetStream(h, None), 0)
check("cusparseGetStream", sparse.cusparseGetStream(h, C.byref(s)), 0)
check("stream after SetStream(NULL)", s.value, None)
check("cusparseGetVersion(not a handle)", sparse.cusparseGetVersion(C.byref(v), C.byref(v)), 1)
sparse.cusparseGetErrorName.restype = C.c_char_p
check("cusparseGetErrorName(10)", sparse.cusparseGetErrorName(10), b"CUSPARSE_STATUS_NOT_SUPPORTED")
check("cusparseDestroy", sparse.cusparseDestroy(h), 0)

solver = lib("libcusolver.so.12")
check("cusolverDnCreate", solver.cusolverDnCreate(C.byref(h)), 0)
check("cusolverGetProperty(MAJOR_VERSION)", solver.cusolverGetProperty(0, C.byref(v)), 0)
check("cuSOLVER major version", v.value, 12)
check("cusolverGetProperty(bad type)", solver.cusolverGetProperty(7, C.byref(v)), 3)
check("cusolverDnDestroy", solver.cusolverDnDestroy(h), 0)

fft = lib("libcufft.so.12")
check("cufftGetVersion", fft.cufftGetVersion(C.byref(v)), 0)
check("cuFFT version", v.value // 1000, 12)
plan = C.c_int()
# FFT plans are not emulated: CUFFT_NOT_SUPPORTED, counted.
check("cufftCreate", fft.cufftCreate(C.byref(plan)), 16)

shmem = lib("libnvshmem_host.so.3")
check("nvshmem_selected_device_transport", C.c_int.in_dll(shmem, "nvshmem_selected_device_transport").value, -1)
print("stand-ins: ok")
PYEOF
expect_grep "stand-ins: ok" "$TEST_TMP/out"
expect_grep "nvrtcCreateProgram is not supported" "$TEST_TMP/out" "an unsupported call is noted on stderr"
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
expect_grep '^call .*api=nvrtcVersion result=0' "$TEST_TMP/dump"
expect_grep '^call .*api=cusparseCreate result=0' "$TEST_TMP/dump"
expect_grep '^call .*api=nvrtcCreateProgram result=11 UNSUPPORTED' "$TEST_TMP/dump"
expect_grep '^call .*api=cufftCreate result=16 UNSUPPORTED' "$TEST_TMP/dump"
expect_grep '^end .* unsupported_calls=2 ' "$TEST_TMP/dump"
