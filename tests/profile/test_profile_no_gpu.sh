#!/usr/bin/env bash
# Without a GPU, maya profile refuses before it starts the program: a clear
# message, exit status 4, no profile directory, the command never run. It
# asks the CUDA runtime the program would load (here the toolkit's, with no
# driver), or the one of MAYA_PROFILE_REAL_LIBDIR.
. "$MAYA_TOP/tests/lib.sh"

if [ -e /dev/nvidiactl ]; then
    echo "this machine has an NVIDIA driver: the no-GPU case cannot be shown here"
    exit 0
fi
cd "$TEST_TMP"
"$MAYA" profile -o prof -- sh -c 'touch ran' > out 2>&1
expect_eq "$?" 4 "exit status of maya profile without a GPU"
expect_grep "no GPU to profile on: .*cudaGetDeviceCount of .*libcudart.so.13 returned 35" out
expect_grep "no NVIDIA driver is loaded" out
expect_grep "use maya run" out
[ ! -e ran ] || fail "the command ran although there is no GPU"
[ ! -e prof ] || fail "maya profile made a profile directory although there is no GPU"

# a directory without a CUDA runtime
mkdir empty
MAYA_PROFILE_REAL_LIBDIR=$TEST_TMP/empty "$MAYA" profile -- sh -c 'touch ran' > out 2>&1
expect_eq "$?" 4 "exit status with MAYA_PROFILE_REAL_LIBDIR holding no libcudart"
expect_grep "cannot load the CUDA runtime $TEST_TMP/empty/libcudart.so.13" out
[ ! -e ran ] || fail "the command ran although there is no CUDA runtime"

# usage errors: exit 2, before any probe
"$MAYA" profile > out 2>&1
expect_eq "$?" 2 "exit status of maya profile without a command"
expect_grep "no command to profile" out
"$MAYA" profile --export > out 2>&1
expect_eq "$?" 2 "exit status of --export without a directory"
expect_grep "expected a value" out
"$MAYA" profile --compare a > out 2>&1
expect_eq "$?" 2 "exit status of --compare with one directory"
expect_grep "expected a profile directory and a run directory" out
"$MAYA" profile --help | grep -q "MAYA_PROFILE_REAL_LIBDIR" || fail "maya profile --help does not say where the real libraries come from"
exit 0
