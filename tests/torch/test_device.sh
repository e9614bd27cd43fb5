#!/usr/bin/env bash
# What PyTorch learns about the emulated GPU is what the chosen GPU would
# give: properties from the hwspec, mem_get_info's total, caching-allocator
# statistics for known allocations (in agreement with maya's peak for the
# rank), CUDA-event timings of a matrix multiply within the GPU's peak, with
# the default allocator and with expandable segments.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

spec=$("$MAYA" hwspecs show A100-SXM4-80GB) || fail "maya hwspecs show A100-SXM4-80GB failed"
prop() { echo "$spec" | sed -n "s/^ *$1 = \"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" | head -1; }
total=$(prop totalGlobalMem)
[ -n "$total" ] || fail "no totalGlobalMem in the A100 hwspec"
MiB=$((1 << 20))

for conf in default expandable; do
    d=$TEST_TMP/$conf
    if [ $conf = expandable ]; then
        export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    fi
    torch_run "$d" a100x1 device_checks.py
    out=$d/logs/rank-0.out
    expect_eq "$(result "$out" count)" 1 "$conf: torch.cuda.device_count()"
    expect_eq "$(result "$out" name)" "$(prop name)" "$conf: device name"
    expect_eq "$(result "$out" total_memory)" "$total" "$conf: total_memory"
    expect_eq "$(result "$out" mem_total)" "$total" "$conf: mem_get_info total"
    expect_eq "$(result "$out" sms)" "$(prop multiProcessorCount)" "$conf: multi_processor_count"
    expect_eq "$(result "$out" capability)" "[8, 0]" "$conf: compute capability"
    expect_eq "$(result "$out" warp)" 32 "$conf: warp size"
    expect_eq "$(result "$out" l2)" "$(prop l2CacheSize)" "$conf: L2 cache size"
    expect_eq "$(result "$out" bf16)" True "$conf: is_bf16_supported"
    # 64 MiB + 3 x 1 MiB live, then 64 + 32 MiB: the allocator counts exactly.
    expect_eq "$(result "$out" allocated)" $((67 * MiB)) "$conf: memory_allocated"
    expect_eq "$(result "$out" max_allocated)" $((96 * MiB)) "$conf: max_memory_allocated"
    free0=$(result "$out" free_before) free1=$(result "$out" free_after)
    [ "$free0" -le "$total" ] && [ $((free0 - free1)) -ge $((67 * MiB)) ] ||
        fail "$conf: mem_get_info free should drop by at least the 67 MiB allocated: $free0 -> $free1"

    check_rank_traces "$d" 1
    check_report "$d"
    peak=$(peak_bytes "$d/dump-0" 0)
    reserved=$(result "$out" end_max_reserved) allocated=$(result "$out" end_max_allocated)
    # maya's peak for the rank is what the caching allocator reserved from
    # the device at its peak, plus what libraries hold outside it (cuBLAS's
    # default workspace: a few MiB); max_memory_allocated is below it by the
    # allocator's rounding and cached blocks (2 MiB small-pool segments,
    # large segments rounded up).
    [ "$peak" -ge "$reserved" ] && [ "$peak" -le $((reserved + 8 * MiB)) ] ||
        fail "$conf: maya's peak $peak should be max_memory_reserved $reserved (+ at most 8 MiB of library state)"
    [ "$peak" -ge "$allocated" ] && [ "$peak" -le $((allocated + 32 * MiB)) ] ||
        fail "$conf: maya's peak $peak should be max_memory_allocated $allocated plus the allocator's rounding (< 32 MiB)"

    # Ten 4096^3 bf16 matrix multiplies between two events: a positive time
    # no faster than the A100's bf16 peak (312 TFLOPS) and not absurdly slow.
    tflops=$(result "$out" mm_tflops)
    awk -v t="$tflops" 'BEGIN { exit !(t > 10 && t <= 312) }' ||
        fail "$conf: event-timed matmul ran at $tflops TFLOPS; expected 10..312 on an A100"
    expect_grep '^sync .*api=cudaDeviceSynchronize .*sync=device' "$d/dump-0" "$conf: torch.cuda.synchronize should be traced as a sync"
done
echo "device checks: ok"
