#!/usr/bin/env bash
# The legacy cuBLAS API (cublas.h) works on its implicit handle: before
# cublasInit routines fail with NOT_INITIALIZED through cublasGetError;
# after it, values come back as return values (a dot product of vectors set
# from the host), GEMMs are traced like v2 ones, and a routine maya does not
# implement (TRSM) sets CUBLAS_STATUS_NOT_SUPPORTED, reported and counted.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" python3 - "$MAYA_LIBS/libcublas.so.13" > "$TEST_TMP/out" 2>&1 <<'PY' || fail "legacy calls failed: $(cat "$TEST_TMP/out")"
import ctypes as C, sys
b = C.CDLL(sys.argv[1])
def check(what, got, want):
    if got != want:
        sys.exit(f"{what}: expected {want!r}, got {got!r}")
b.cublasSdot.restype = C.c_float
b.cublasIsamax.restype = C.c_int
fp = C.POINTER(C.c_float)
b.cublasSdot(4, None, 1, None, 1)
check("error before cublasInit", b.cublasGetError(), 1)
check("error is cleared by reading it", b.cublasGetError(), 0)
check("cublasInit", b.cublasInit(), 0)
x, y = C.c_void_p(), C.c_void_p()
check("cublasAlloc", b.cublasAlloc(4, 4, C.byref(x)), 0)
check("cublasAlloc", b.cublasAlloc(4, 4, C.byref(y)), 0)
hx, hy = (C.c_float * 4)(1, -7, 3, 4), (C.c_float * 4)(2, 2, 2, 2)
check("cublasSetVector", b.cublasSetVector(4, 4, hx, 1, x, 1), 0)
check("cublasSetVector", b.cublasSetVector(4, 4, hy, 1, y, 1), 0)
check("cublasSdot", b.cublasSdot(4, x, 1, y, 1), 2.0)
check("cublasIsamax", b.cublasIsamax(4, x, 1), 2)
check("error after dot", b.cublasGetError(), 0)
b.cublasSgemm(C.c_char(b'N'), C.c_char(b'T'), 2, 2, 2, C.c_float(1), x, 2, y, 2, C.c_float(0), x, 2)
check("error after Sgemm", b.cublasGetError(), 0)
b.cublasSgemm(C.c_char(b'Q'), C.c_char(b'N'), 2, 2, 2, C.c_float(1), x, 2, y, 2, C.c_float(0), x, 2)
check("error after Sgemm with trans 'Q'", b.cublasGetError(), 7)
b.cublasStrsm(C.c_char(b'L'), C.c_char(b'U'), C.c_char(b'N'), C.c_char(b'N'), 2, 2, C.c_float(1), x, 2, y, 2)
check("error after Strsm", b.cublasGetError(), 15)
check("cublasFree", b.cublasFree(x), 0)
check("cublasShutdown", b.cublasShutdown(), 0)
check("second cublasShutdown", b.cublasShutdown(), 1)
print("legacy: ok")
PY
expect_grep "^legacy: ok$" "$TEST_TMP/out"
expect_grep "cublasStrsm_v2 is not supported" "$TEST_TMP/out"
dump "$TEST_TMP/tr/rank-0.mtrace" > "$TEST_TMP/dump"
expect_grep "^gemm .* api=cublasSgemm_v2 result=0 lib=cublas m=2 n=2 k=2 batch=1 trans=NT " "$TEST_TMP/dump"
expect_grep "^alloc .* api=cublasAlloc result=0 kind=device .* bytes=16 " "$TEST_TMP/dump"
expect_grep "^call .* api=cublasStrsm_v2 result=15 UNSUPPORTED" "$TEST_TMP/dump"
expect_grep "^end .* unsupported_calls=1 " "$TEST_TMP/dump"
