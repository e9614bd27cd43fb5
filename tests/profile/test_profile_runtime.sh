#!/usr/bin/env bash
# The profiler's forwarding layer without a GPU: real nvcc-built programs run
# with libmaya-profile.so preloaded over maya's emulator libraries standing in
# for the real ones. Each program works as before, and its profile holds the
# device ops an emulated run records (launches with their arguments, copies,
# memsets, cuBLAS and cuBLASLt GEMMs, cuDNN's legacy operations (convolutions,
# batch norm, pooling, ...) and backend graphs (a convolution, attention
# forward and backward, a matmul: each followed as its descriptors are
# built, from heuristics to execution), nodes of captured CUDA graphs at
# each launch), each measured (graph nodes together, by launch), and none of the
# profiler's own calls. The emulator underneath sees the profiler's events:
# two per measured op at least (also around calls that did no work, such as
# a GEMM with m = 0, whose events are recorded before that is known).
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/profile/profile_lib.sh"

check() { # NAME ARGS...
    local w=$1
    shift
    RANK=0 emu "$TEST_TMP/$w.emu" "$WORKLOADS/$w" "$@" > "$TEST_TMP/$w.emu.out" 2>&1 ||
        fail "$w under the emulator failed: $(tail -5 "$TEST_TMP/$w.emu.out")"
    RANK=0 MAYA_TRACE_DIR=$TEST_TMP/$w.under profile_run "$TEST_TMP/$w.prof" "$WORKLOADS/$w" "$@" \
        > "$TEST_TMP/$w.prof.out" 2>&1 || fail "$w under the profiler failed: $(tail -5 "$TEST_TMP/$w.prof.out")"
    # the program says the same either way (its own checks passed)
    grep -v "^maya-emu:" "$TEST_TMP/$w.emu.out" > "$TEST_TMP/a"
    grep -v "^maya-emu:" "$TEST_TMP/$w.prof.out" > "$TEST_TMP/b"
    diff "$TEST_TMP/a" "$TEST_TMP/b" > /dev/null || fail "$w prints other things under the profiler: $(diff "$TEST_TMP/a" "$TEST_TMP/b" | head -5)"
    same_ops "$TEST_TMP/$w.emu/rank-0.mtrace" "$TEST_TMP/$w.prof/rank-0.mtrace" "$w"
    # the emulator below recorded the profiler's events around each measured op
    local ops records
    ops=$(grep -c ' measured_ns=' "$TEST_TMP/same.p.txt" || true) # device ops and graph launches
    dump "$TEST_TMP/$w.under/rank-0.mtrace" > "$TEST_TMP/under.txt"
    records=$(grep -cE "^event_record .*api=cudaEventRecord " "$TEST_TMP/under.txt" || true)
    local program_records
    program_records=$(grep -cE "^event_record " "$TEST_TMP/same.p.txt" || true)
    [ "$records" -ge $((2 * ops + program_records)) ] ||
        fail "$w: the emulator below saw $records event records, expected 2 per measured op ($ops) plus the program's $program_records"
}

check vector_add 4096
expect_grep '^launch .*api=__cudaLaunchKernel .*kernel="vector_add\(float const\*, float const\*, float\*, int\)" grid=16,1,1 block=256,1,1 .*args=\(ptr:P, ptr:P, ptr:P, i32:4096\)' "$TEST_TMP/same.p.ops"
expect_count 2 '^memcpy .*kind=h2d bytes=16384' "$TEST_TMP/same.p.ops"
# allocations and frees with the device's memory in use, as the emulator counts it
expect_grep "^free .*api=cudaFree .*device_sync kind=device .*used=0 peak=50176" "$TEST_TMP/same.p.txt"
expect_grep "^end .*dev0_peak=50176" "$TEST_TMP/same.p.txt"
check streams_events
expect_grep "^event_record " "$TEST_TMP/same.p.txt"
expect_grep "^stream_wait " "$TEST_TMP/same.p.txt"
# two threads issue work at once: their ops interleave differently each run
SAME_OPS_UNORDERED=1 check ptds_streams
expect_grep "stream .*per_thread" "$TEST_TMP/same.p.txt"
check gemm_cublas
expect_grep "^gemm .*api=cublasSgemmBatched .*pointer_arrays" "$TEST_TMP/same.p.ops"
expect_grep "^gemm .*api=cublasSgemv_v2 .*matvec" "$TEST_TMP/same.p.ops"
expect_grep "^memcpy .*api=cublasSetVector" "$TEST_TMP/same.p.ops"
check gemm_lt
expect_grep "^gemm .*api=cublasLtMatmul .*row_major=ABCD" "$TEST_TMP/same.p.ops"
check cudnn_legacy
expect_grep "^dnn .*api=cudnnConvolutionForward result=0 op=conv_fwd " "$TEST_TMP/same.p.ops"
expect_grep "^dnn .*api=cudnnConvolutionBackwardData result=0 op=conv_bwd_data " "$TEST_TMP/same.p.ops"
expect_grep "^dnn .*api=cudnnConvolutionBackwardFilter result=0 op=conv_bwd_filter " "$TEST_TMP/same.p.ops"
check cudnn_graph
d='^dnn +api=cudnnBackendExecute result=0'
expect_grep "$d op=conv_fwd pad=1,1 stride=1,1 dilation=1,1 groups=1 mode=1 compute=0 algo=0 workspace=0 graph_ops=1 x=dtype2\[8,64,56,56\]" "$TEST_TMP/same.p.ops"
expect_grep "$d op=sdpa_fwd causal=1 scale=0.125 .* graph_ops=13 " "$TEST_TMP/same.p.ops"
expect_grep "$d op=sdpa_bwd causal=0 scale=0.125 .* graph_ops=15 " "$TEST_TMP/same.p.ops"
expect_grep "$d op=matmul .* graph_ops=2 " "$TEST_TMP/same.p.ops"
expect_count 6 "$d " "$TEST_TMP/same.p.ops"
# a failed execution did nothing on the device: a CALL record
expect_grep "^call .* stream=0 api=cudnnBackendExecute result=2000$" "$TEST_TMP/same.p.txt"
# library work captured into CUDA graphs: a CALL record flagged capturing at
# each capture; each launch writes its nodes between GRAPH records, the end
# one carrying the launch's measured time
check lib_graphs
expect_grep "^call .*api=cublasSgemm_v2 result=0 capturing$" "$TEST_TMP/same.p.txt"
expect_grep "^gemm .*api=cublasSgemm_v2 result=0 from_graph " "$TEST_TMP/same.p.txt"
expect_grep "^gemm .*api=cublasLtMatmul result=0 from_graph " "$TEST_TMP/same.p.txt"
expect_grep "^dnn .*api=cudnnConvolutionForward result=0 from_graph " "$TEST_TMP/same.p.txt"
expect_grep "^graph .*api=cudaGraphLaunch result=0 measured_ns=[1-9][0-9]* graph_exec=[0-9]+ end nodes=[0-9]+$" "$TEST_TMP/same.p.txt"

# maya profile itself, forwarding to the emulator: a profile directory
d=$TEST_TMP/pdir
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -o "$d" -- "$WORKLOADS/vector_add" 4096 > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile failed: $(tail -5 "$TEST_TMP/out")"
expect_grep "^maya profile: 8 x NVIDIA H100 80GB HBM3 \(H100-SXM, $MAYA_LIBS/libcudart.so.13\)" "$TEST_TMP/out"
expect_grep "^maya profile: 6 of 6 device ops measured on 1 rank \(H100-SXM\)" "$TEST_TMP/out"
expect_grep "^launcher=maya-profile$" "$d/run.conf"
expect_grep "^gpu=H100-SXM$" "$d/run.conf"
expect_grep "^rank.0.exit=0$" "$d/run.conf"
expect_grep "vector_add n=4096 blocks=16 threads=256: ok" "$d/logs/rank-0.out"
expect_grep "^ +5 +[0-9.]+ .* cudaMemcpy$" "$d/profile.txt"
expect_grep "^ +1 +[0-9.]+ .* vector_add\(float const\*, float const\*, float\*, int\)$" "$d/profile.txt"
# Ops timed while another thread waits inside the emulator (a collective
# waiting for its peer): the emulator, with no device clock (no trace of its
# own), times its events in real time, not on its trace's host clock, which
# stands still meanwhile; so the program's own elapsed time and the profile's
# measurement of the kernel are both above 0.
RANK=0 profile_run "$TEST_TMP/standin" "$WORKLOADS/event_standin" > "$TEST_TMP/out" 2>&1 ||
    fail "event_standin under the profiler failed: $(tail -5 "$TEST_TMP/out")"
expect_grep '^kernel_ms=0*([1-9]|[.]0*[1-9])' "$TEST_TMP/out" "the program's events time the kernel"
dump "$TEST_TMP/standin/rank-0.mtrace" > "$TEST_TMP/standin.txt"
expect_grep '^launch .* measured_ns=[1-9][0-9]* kernel="scale' "$TEST_TMP/standin.txt" "the profile measures the kernel"
expect_count 2 '^coll .* measured_ns=[1-9]' "$TEST_TMP/standin.txt"
# --gpu names the GPU when its name is unknown, and must be a known one
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile --gpu nonesuch -o "$TEST_TMP/p2" -- true > "$TEST_TMP/out" 2>&1
expect_eq "$?" 2 "exit status with an unknown --gpu"
expect_grep "nonesuch: not a known GPU; known: " "$TEST_TMP/out"
# a workload without CUDA: nothing measured, said so
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -o "$TEST_TMP/p4" -- true > "$TEST_TMP/out" 2>&1 ||
    fail "maya profile of a program without CUDA failed: $(cat "$TEST_TMP/out")"
expect_grep "made no CUDA call the profiler traces: nothing was measured" "$TEST_TMP/out"
# a failing workload: exit 1, what it measured is kept
MAYA_PROFILE_REAL_LIBDIR=$MAYA_LIBS "$MAYA" profile -q -o "$TEST_TMP/p3" -- sh -c 'exit 3' > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "exit status when the workload fails"
expect_grep "^rank.0.exit=3$" "$TEST_TMP/p3/run.conf"
exit 0
