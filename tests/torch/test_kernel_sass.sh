#!/usr/bin/env bash
# Kernels with SASS only (PyTorch's CUDA wheels carry no PTX) are read
# through nvdisasm (docs/kernel-cost.md): tests/workloads/kernel_work.cu
# built without PTX gives the same work as from its PTX where the SASS
# shows it (row softmax, guarded scale, Adam: bytes within 1 %); summaries
# are cached on disk, a second run reads the cache, not nvdisasm, and two
# ranks that start together on an empty cache both get them; a PyTorch
# ResNet step has every launch priced from its code; and PyTorch's
# LayerNorm, softmax, elementwise and log-softmax kernels at training sizes
# are priced within bounds derived from the bytes they move. Skipped, with a
# note, when there is no nvdisasm (scripts/nvdisasm.sh installs it).
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/torch/torch_lib.sh"

if [ -z "${MAYA_NVDISASM:-}" ] || [ ! -x "$MAYA_NVDISASM" ]; then
    echo "SKIP: no nvdisasm (run scripts/nvdisasm.sh, or set MAYA_NVDISASM): SASS-only kernels are not read"
    exit 0
fi

field() {
    grep -oE "(^| )$1=[^ ]+" "$2" | head -1 | sed -E "s/^ ?$1=//"
}
near() {
    awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 0.01 * w) }' ||
        fail "$3: $1 from SASS, $2 from PTX (within 1%)"
}

cache=$TEST_TMP/cache
for b in kernel_work kernel_work_sass; do
    RANK=0 MAYA_CACHE_DIR=$cache emu "$TEST_TMP/$b" "$WORKLOADS/$b" > "$TEST_TMP/$b.out" 2>&1 ||
        fail "$b failed: $(cat "$TEST_TMP/$b.out")"
done
dump "$TEST_TMP/kernel_work_sass/rank-0.mtrace" > "$TEST_TMP/sass.dump"
expect_count 6 '^kernel .* work=sass sm=90 ' "$TEST_TMP/sass.dump"
for k in row_softmax scale_guarded adam_seeded; do
    "$MAYA" estimate launch "$TEST_TMP/kernel_work" "$k" > "$TEST_TMP/$k.ptx" || fail "estimate $k (PTX)"
    "$MAYA" estimate launch "$TEST_TMP/kernel_work_sass" "$k" > "$TEST_TMP/$k.sass" || fail "estimate $k (SASS)"
    cat "$TEST_TMP/$k.sass"
    expect_grep '^code=sass sm=90 ' "$TEST_TMP/$k.sass"
    near "$(field dram_bytes "$TEST_TMP/$k.sass")" "$(field dram_bytes "$TEST_TMP/$k.ptx")" "$k: DRAM bytes"
    near "$(field device_us "$TEST_TMP/$k.sass")" "$(field device_us "$TEST_TMP/$k.ptx")" "$k: predicted time"
done

# the cache: one entry per kernel, written whole (no temporary file left);
# a second run reads it and never runs nvdisasm
n=$(ls "$cache/kwork-v1" | grep -c '\.kw$')
expect_eq "$n" 6 "cached summaries"
expect_eq "$(ls "$cache/kwork-v1" | grep -vc '\.kw$')" 0 "files other than entries in the cache"
RANK=0 MAYA_CACHE_DIR=$cache MAYA_NVDISASM=/bin/false emu "$TEST_TMP/again" "$WORKLOADS/kernel_work_sass" \
    > "$TEST_TMP/again.out" 2>&1 || fail "second run failed: $(cat "$TEST_TMP/again.out")"
dump "$TEST_TMP/again/rank-0.mtrace" > "$TEST_TMP/again.dump"
expect_count 6 '^kernel .* work=sass sm=90 ' "$TEST_TMP/again.dump"
# two ranks starting together on an empty cache: both get every summary
# (one disassembles a kernel, the other waits for its entry); no lock left
pids=()
for r in 0 1; do
    RANK=$r MAYA_CACHE_DIR=$TEST_TMP/cache3 emu "$TEST_TMP/pair$r" "$WORKLOADS/kernel_work_sass" \
        > "$TEST_TMP/pair$r.out" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p" || fail "a rank of the pair failed: $(cat "$TEST_TMP"/pair?.out)"
done
for r in 0 1; do
    dump "$TEST_TMP/pair$r/rank-$r.mtrace" > "$TEST_TMP/pair$r.dump"
    expect_count 6 '^kernel .* work=sass sm=90 ' "$TEST_TMP/pair$r.dump"
done
expect_eq "$(ls "$TEST_TMP/cache3/kwork-v1" | grep -c '\.kw$')" 6 "entries after two ranks"
expect_eq "$(ls "$TEST_TMP/cache3/kwork-v1" | grep -vc '\.kw$')" 0 "locks or temporary files left in the cache"

# an empty cache and a tool that prints nothing: no summary, nothing cached
RANK=0 MAYA_CACHE_DIR=$TEST_TMP/cache2 MAYA_NVDISASM=/bin/false emu "$TEST_TMP/none" "$WORKLOADS/kernel_work_sass" \
    > "$TEST_TMP/none.out" 2>&1 || fail "run with a failing nvdisasm failed: $(cat "$TEST_TMP/none.out")"
dump "$TEST_TMP/none/rank-0.mtrace" > "$TEST_TMP/none.dump"
expect_no_grep ' work=' "$TEST_TMP/none.dump" "a summary from a tool that printed nothing"

# PyTorch: every kernel launch of a ResNet step priced from its SASS
d=$TEST_TMP/resnet
torch_run "$d" h100x1 train_resnet.py 1
check_report "$d"
python3 - "$d/report.json" <<'PY' || fail "report.json kernels (above)"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
assert k["launches"] > 50 and k["without_code"] == 0 and k["priced_from_code"] == k["launches"], k
PY
dump "$d/traces/rank-0.mtrace" > "$TEST_TMP/resnet.dump"
[ "$(grep -c '^kernel .* work=sass ' "$TEST_TMP/resnet.dump")" -ge 10 ] || fail "fewer than 10 PyTorch kernels read from SASS"

# PyTorch's row-wise and elementwise kernels at training sizes, priced from
# their SASS within bounds derived by hand from the bytes each must move:
# no faster than them at the H100's 3.35 TB/s datasheet bandwidth, no
# slower than every pass over them at half of it
d=$TEST_TMP/rows
torch_run "$d" h100x1 row_ops.py
expect_grep '^row_ops: ok' "$d/logs/rank-0.out"
# range NAME LO_MIB HI_MIB
range() {
    local o=$TEST_TMP/rows.$1 us
    "$MAYA" estimate launch "$d" "$1" > "$o" 2>&1 || fail "maya estimate launch $1: $(cat "$o")"
    cat "$o"
    expect_grep '^code=sass ' "$o" "$1: priced from its SASS"
    us=$(grep -oE 'device_us=[0-9.]+' "$o" | cut -d= -f2)
    awk -v lo="$2" -v hi="$3" -v us="$us" 'BEGIN { m = 1048576; exit !(us >= lo * m / 3350e3 && us <= hi * m / 1675e3) }' ||
        fail "$1: $us us is outside [$2 MiB at 3.35 TB/s, $3 MiB at 1.675 TB/s]"
}
range vectorized_layer_norm_kernel 128 256    # x read (at most 3 passes), y written
range softmax_warp_forward 1024 2048          # read once or twice, written once
range AUnaryFunctor 128 128                   # x * 2: read and written once
range cunn_SoftMaxForward 3200 4800           # log-softmax: logits read (1 or 2 passes), written once
range reduce_kernel 128 256                   # column sums of x in fp32: read once (or twice)
echo "kernel sass: ok"
