#!/usr/bin/env bash
# Row-wise kernels (llm.c's kind: a block per row, loops over the row
# length) priced from their code, on the bundled minigpt at one GPT layer's
# Megatron-like size: 4 sequences of 2048 tokens, width 2048, 16 heads,
# vocabulary 51200, bf16. The kernels pass a row length, not an element
# count, so the rule over their arguments priced each at ~2 us; read from
# their code, each time lies within bounds derived by hand from the bytes
# it must move: no faster than the bytes it cannot avoid at the H100's
# datasheet bandwidth, no slower than every pass over its rows at half of
# it. Every launch of the run is priced from its code.
. "$MAYA_TOP/tests/lib.sh"

d=$TEST_TMP/mg
"$MAYA" run -q -g h100x1 -o "$d" -- "$WORKLOADS/minigpt" --seq 2048 --hidden 2048 --heads 16 --layers 2 \
    --vocab 51200 --micro-batch-size 4 --micro-batches 1 --iters 2 > "$TEST_TMP/run.out" 2>&1 ||
    fail "maya run minigpt failed: $(tail -20 "$TEST_TMP/run.out")"
expect_grep '^kernels +[1-9][0-9]* launches priced from their code$' "$d/report.txt" "every launch priced from its code"

# range NAME LO_BYTES HI_BYTES: one launch of kernel NAME takes at least
# LO_BYTES at 3.35 TB/s and at most HI_BYTES at half that
range() {
    local o=$TEST_TMP/$1.est us
    "$MAYA" estimate launch "$d" "$1" > "$o" 2>&1 || fail "maya estimate launch $1: $(cat "$o")"
    cat "$o"
    expect_grep '^code=ptx ' "$o" "$1: priced from its code"
    us=$(grep -oE 'device_us=[0-9.]+' "$o" | cut -d= -f2)
    awk -v lo="$2" -v hi="$3" -v us="$us" 'BEGIN { hbm = 3350e3; exit !(us >= lo / hbm && us <= hi / (hbm / 2)) }' ||
        fail "$1: $us us is outside [$2 B at 3.35 TB/s, $3 B at 1.675 TB/s]"
}

MiB=1048576
P=$((4 * 16 * 2048 * 2048 * 2 / MiB))    # attention probabilities, B x heads x S x S bf16: 512 MiB
X=$((4 * 2048 * 2048 * 2 / MiB))         # activations, tokens x width bf16: 32 MiB
L=$((4 * 2048 * 51200 * 2 / MiB))        # logits, tokens x vocabulary bf16: 800 MiB
# causal softmax in place: reads the lower triangle (half), writes every
# element; at most three passes read a row and one writes it
range softmax_causal $(((P / 2 + P) * MiB)) $((4 * P * MiB))
# its backward: reads P and dP, writes dP; at most two passes over both
range softmax_bwd $((3 * P * MiB)) $((5 * P * MiB))
# LayerNorm: reads x, writes y; at most three passes over x
range layernorm_fwd $((2 * X * MiB)) $((4 * X * MiB))
# cross-entropy: the row maxima read the logits once; subtracting them and
# dividing by the sums read and write them in place
range ce_max $((L * MiB)) $((2 * L * MiB))
range ce_sub $((2 * L * MiB)) $((4 * L * MiB))
range ce_div $((2 * L * MiB)) $((4 * L * MiB))
echo "row-wise kernels: ok"
