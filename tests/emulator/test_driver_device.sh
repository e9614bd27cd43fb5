#!/usr/bin/env bash
# Driver-API device queries answer for the emulated GPU (H100 by default,
# A100 when MAYA_GPU says so: its name, compute capability, SM count, and
# the driver-only attributes such as TMA and cluster support), calls before
# cuInit fail as they should, primary contexts keep their state and flags,
# the context stack pushes and pops, and tensor maps are checked and
# encoded the same way every time (drv_device checks the details).
. "$MAYA_TOP/tests/lib.sh"

out=$TEST_TMP/h100
RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/drv_device" > "$out" 2>&1 || fail "drv_device failed: $(cat "$out")"
expect_grep '^drv_device: ok' "$out"
expect_grep '^driver version=13000$' "$out"
expect_grep '^device count=8 name="NVIDIA H100 80GB HBM3" cc=9.0 sms=132 vmm=1 tma=1 clusters=1 pools=1$' "$out"
expect_grep '^total_mem=85017755648 pci_roundtrip=ok can_access_peer=1$' "$out"
expect_grep '^contexts: priorities=0..-5 active_after_release=0$' "$out"
expect_grep '^tensor maps: ok$' "$out"

out=$TEST_TMP/a100
MAYA_GPU=A100-SXM4-80GB MAYA_GPUS_PER_NODE=2 emu "$TEST_TMP/tr2" "$WORKLOADS/drv_device" > "$out" 2>&1 ||
    fail "drv_device on A100 failed: $(cat "$out")"
expect_grep '^device count=2 name="NVIDIA A100-SXM4-80GB" cc=8.0 sms=108 vmm=1 tma=0 clusters=0 ' "$out"

d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_grep '^call .*api=cuDeviceGet result=3$' "$d" "cuDeviceGet before cuInit"
expect_grep '^call .*api=cuTensorMapEncodeTiled result=0$' "$d"
expect_count 3 '^call .*api=cuTensorMapEncodeTiled result=1$' "$d"
expect_grep '^end .*unsupported_calls=0 ' "$d"
