#!/usr/bin/env bash
# CUDA events time what the chosen GPU would take, not what the emulator
# spent: a 1 GiB pinned host-to-device copy takes 1 GiB over the GPU's PCIe
# bandwidth, a device-to-device copy 2 GiB over its memory bandwidth, and a
# second stream that waits on the first starts where the first ended. The
# same program on an A100 (PCIe 4, slower HBM) takes longer. cudaEventQuery
# says not ready while the emulated GPU would still run the work before the
# event (once per thread and record), so that a program that checks before it
# waits (PyTorch's work.wait()) enqueues the wait it enqueues on a GPU.
. "$MAYA_TOP/tests/lib.sh"

run() {
    MAYA_GPU=$1 RANK=0 emu "$TEST_TMP/$1" "$WORKLOADS/event_timing" > "$TEST_TMP/$1.out" 2>&1 ||
        fail "event_timing on $1 failed: $(cat "$TEST_TMP/$1.out")"
}
val() { sed -n "s/^$2=//p" "$TEST_TMP/$1.out"; }
perf() { "$MAYA" hwspecs show "$1" | sed -n "s/^ *$2 = //p"; }
# within LO..HI times WANT
near() {
    awk -v got="$1" -v want="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(got >= want * lo && got <= want * hi) }' ||
        fail "$5: ${1} ms, expected ${lo}..${hi} x ${2} ms"
}

GiB=1073741824
for gpu in H100-SXM A100-SXM4-80GB; do
    run $gpu
    h2d=$(perf $gpu pcie_h2d_gbps) hbm=$(perf $gpu hbm_gbps)
    near "$(val $gpu h2d_ms)" "$(awk -v b=$GiB -v g="$h2d" 'BEGIN { print b / (g * 1e9) * 1e3 }')" 0.9 1.5 "$gpu: 1 GiB H2D at $h2d GB/s"
    near "$(val $gpu d2d_ms)" "$(awk -v b=$GiB -v g="$hbm" 'BEGIN { print 2 * b / (g * 1e9) * 1e3 }')" 0.9 3 "$gpu: 1 GiB D2D at $hbm GB/s"
    near "$(val $gpu kernels_ms)" "$(awk -v b=$GiB -v g="$hbm" 'BEGIN { print 20 * b / (g * 1e9) * 1e3 }')" 0.9 3 "$gpu: 10 kernels reading and writing 1 GiB"
    expect_eq "$(val $gpu wait_ms)" 0.0000 "$gpu: the waiting stream starts when the awaited work ends"
    total=$(awk -v a="$(val $gpu h2d_ms)" -v b="$(val $gpu d2d_ms)" -v c="$(val $gpu kernels_ms)" 'BEGIN { print a + b + c }')
    # asked while the copy back runs: not ready (600) the first time, then
    # done; recorded again, not ready again; after synchronising, done
    expect_eq "$(val $gpu query_first) $(val $gpu query_again) $(val $gpu query_rerecorded) $(val $gpu query_synced)" \
        "600 0 600 0" "$gpu: cudaEventQuery while the work runs, again, re-recorded, after a sync"
    # then 1 GiB back to the host, as long as the H2D copy
    near "$(val $gpu total_ms)" "$(awk -v t="$total" -v h="$(val $gpu h2d_ms)" 'BEGIN { print t + h }')" 0.99 1.01 "$gpu: events across two streams"
done
awk -v a="$(val A100-SXM4-80GB total_ms)" -v h="$(val H100-SXM total_ms)" 'BEGIN { exit !(a > 1.5 * h) }' ||
    fail "the A100 (PCIe 4) should take much longer than the H100 (PCIe 5)"
