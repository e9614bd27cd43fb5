#!/usr/bin/env bash
# libmaya-profile.so exports exactly the entry points it traces, each under
# the version node the real library gives it (so that versioned references
# of real programs, cudaMalloc@libcudart.so.13, bind to it), and each exists
# in the real library it forwards to (the toolkit's, read with nm); nothing
# of its private copy of the emulator core is visible.
. "$MAYA_TOP/tests/lib.sh"

lib=$MAYA_LIBS/libmaya-profile.so
cuda=${CUDA_HOME:-/usr/local/cuda}/lib64
[ -f "$lib" ] || fail "no $lib"
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' > "$TEST_TMP/exports"
[ -s "$TEST_TMP/exports" ] || fail "libmaya-profile.so exports no function"
real_exports() { nm -D --defined-only "$cuda/$1" | awk '{ print $3 }'; }
real_exports libcudart.so.13 > "$TEST_TMP/cudart"
real_exports libcublas.so.13 > "$TEST_TMP/cublas"
real_exports libcublasLt.so.13 > "$TEST_TMP/cublaslt"
real_exports libnccl.so.2 > "$TEST_TMP/nccl"
real_exports libcudnn.so.9 > "$TEST_TMP/cudnn"
real_exports stubs/libcuda.so > "$TEST_TMP/cuda" # the toolkit's stand-in for the driver's
n=0
while read -r sym; do
    name=${sym%%@*}
    case "$sym" in
    *@@libcudart.so.13) grep -qxF "$sym" "$TEST_TMP/cudart" || fail "$sym: not in the real libcudart.so.13" ;;
    *@@libcublas.so.13) grep -qxF "$sym" "$TEST_TMP/cublas" || fail "$sym: not in the real libcublas.so.13" ;;
    *@@libcublasLt.so.13) grep -qxF "$sym" "$TEST_TMP/cublaslt" || fail "$sym: not in the real libcublasLt.so.13" ;;
    *@@libcudnn.so.9) grep -qxF "$sym" "$TEST_TMP/cudnn" || fail "$sym: not in the real libcudnn.so.9" ;;
    dlsym@GLIBC_2.2.5 | dlsym@@GLIBC_2.34) ;; # libc's, for programs that look the driver up themselves
    *@@MAYA_PROFILE_CUDA) # the driver's own symbols are unversioned
        grep -qxE "$name(@@?Base)?" "$TEST_TMP/cuda" || fail "$sym: not in the real libcuda.so.1" ;;
    *@@MAYA_PROFILE_NCCL) # NCCL's own symbols are unversioned
        grep -qxE "$name(@@?Base)?" "$TEST_TMP/nccl" || fail "$sym: not in the real libnccl.so.2" ;;
    *) fail "$sym: exported under no real library's version node" ;;
    esac
    n=$((n + 1))
done < "$TEST_TMP/exports"
[ $n -ge 150 ] || fail "only $n exports: expected the runtime, driver, cuBLAS, cuBLASLt, cuDNN and NCCL entry points"
expect_no_grep "^(emu_|maya_|prof_)" "$TEST_TMP/exports" "libmaya-profile.so exports its internals"
for f in cudaLaunchKernel __cudaLaunchKernel __cudaRegisterFunction cudaMemcpyAsync cudaStreamSynchronize \
         cublasGemmEx cublasLtMatmul cudnnConvolutionForward cudnnBackendExecute ncclAllReduce ncclGroupEnd \
         cudaGraphLaunch cuLaunchKernel cuLaunchKernelEx cuModuleLoadData cuGetProcAddress_v2 \
         cudaGetDriverEntryPointByVersion; do
    grep -q "^$f@@" "$TEST_TMP/exports" || fail "libmaya-profile.so does not define $f"
done
# it needs none of the CUDA libraries itself: it finds them in the program
ldd "$lib" > "$TEST_TMP/ldd"
expect_no_grep "libcuda|libcublas|libnccl|libmaya-core" "$TEST_TMP/ldd" "libmaya-profile.so links a CUDA library or the emulator core"
exit 0
