#!/usr/bin/env bash
# The fidelity harness (fidelity/run, make fidelity) on a tiny table of its
# own in Table 1's format (no accuracy asserted): a row that runs gives its
# line with published, predicted and error; a row of more GPUs than
# FIDELITY_MAX_RANKS runs with its replicas declared (maya run --replicas)
# and folded as similar,
# one that would still need more processes, or has more GPUs than
# FIDELITY_MAX_GPUS, is skipped saying so; a row that runs out of GPU
# memory fails saying so (exit 1); the suite's summary has the median and
# largest |error|; FIDELITY_ROWS selects rows; a failing suite and an
# unknown one are reported. The Megatron-Core suite likewise, on a tiny
# table of its format. The llm.c suite without its sources skips its rows,
# saying how to get them.
. "$MAYA_TOP/tests/lib.sh"

cat > "$TEST_TMP/t.csv" <<'CSV'
# tiny rows
params_b,heads,hidden,layers,tp,pp,dp,gpus,global_batch,micro_batch,layers_per_virtual_stage,tflops_per_gpu,pct_of_peak
0.01,4,128,2,1,1,2,2,8,2,,10,3
0.02,4,128,4,2,2,1,4,8,2,1,20,6
0.03,4,128,2,2,1,16,32,64,2,,10,3
0.04,4,128,2,1,1,128,128,256,2,,10,3
0.05,4,128,16,1,16,1,16,32,2,,10,3
CSV
export FIDELITY_OUT=$TEST_TMP/out FIDELITY_TABLE1_CSV=$TEST_TMP/t.csv FIDELITY_SEQ=128 FIDELITY_VOCAB=1024
export FIDELITY_MAX_RANKS=8 FIDELITY_MAX_GPUS=64
"$MAYA_TOP/fidelity/run" table1 > "$TEST_TMP/out1" 2> "$TEST_TMP/err1" ||
    fail "fidelity/run table1 failed: $(cat "$TEST_TMP/out1"; grep -v "^   " "$TEST_TMP/err1" | tail -20)"
cat "$TEST_TMP/out1"
expect_count 6 '^fidelity table1 ' "$TEST_TMP/out1"
num='[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?'
expect_grep "^fidelity table1 0\.01B published=10 predicted=$num error=[-+][0-9]+\.[0-9]%$" "$TEST_TMP/out1"
expect_grep "^fidelity table1 0\.02B published=20 predicted=$num error=[-+][0-9]+\.[0-9]%$" "$TEST_TMP/out1"
expect_grep "^fidelity table1 0\.03B published=10 predicted=$num error=[-+][0-9]+\.[0-9]%$" "$TEST_TMP/out1"
expect_grep '^fidelity table1 0\.04B skipped: 128 GPUs, more than FIDELITY_MAX_GPUS=64 ' "$TEST_TMP/out1"
expect_grep '^fidelity table1 0\.05B skipped: needs 16 processes even with its replicas declared, more than FIDELITY_MAX_RANKS=8$' "$TEST_TMP/out1"
expect_grep '^fidelity table1 summary rows=3 median=[0-9.]+% max=[0-9.]+% skipped=2 failed=0 seconds=[0-9]+$' "$TEST_TMP/out1"
# the 32-GPU row emulated 4 of its ranks (DP and TP digits 0 or 1), the rest
# rebuilt, and folds them as similar: the rebuilt ones into those, which
# fold into one where their measured host gaps are close (this machine's
# load decides)
expect_grep 'maya run --cluster dgx-a100 -g a100x32 --fold similar --replicas 16:2,2:1 -- minigpt' "$TEST_TMP/err1"
expect_grep 'replicas not emulated \(--replicas\)' "$TEST_TMP/out/table1/0.03B/report.txt"
expect_grep '^replayed   [1-4] of them: the other (31|30|29|28) are replicas' "$TEST_TMP/out/table1/0.03B/report.txt"
# the error is the prediction's against the published figure, and the
# summary's median and max are those of the rows' |error|
python3 - "$TEST_TMP/out1" <<'PY' || fail "the errors or the summary are wrong (above)"
import re, sys
rows, summ = [], None
for l in open(sys.argv[1]):
    m = re.match(r"fidelity table1 \S+ published=(\S+) predicted=(\S+) error=(\S+)%$", l)
    if m:
        p, y, e = map(float, m.groups())
        assert abs((y - p) / p * 100 - e) <= 0.05 + 1e-3 * abs(e), l
        rows.append(abs(e))
    m = re.match(r"fidelity table1 summary .* median=(\S+)% max=(\S+)%", l)
    if m:
        summ = tuple(map(float, m.groups()))
rows.sort()
n = len(rows)
median = rows[n // 2] if n % 2 else (rows[n // 2 - 1] + rows[n // 2]) / 2
assert n == 3 and summ and abs(summ[0] - median) < 0.06 and abs(summ[1] - rows[-1]) < 0.06, (rows, summ)
PY
# each row ran with its configuration (the 0.02B row: TP 2 x PP 2, interleaved,
# scattered sends), and its breakdown went to stderr
expect_grep 'minigpt --tp 2 --pp 2 --dp 1 --micro-batch-size 2 --micro-batches 4 .*--scatter-gather --layers-per-virtual-stage 1 --ddp torch --bucket-mb 25' "$TEST_TMP/err1"
expect_grep '^    gemm  ' "$TEST_TMP/err1"
expect_grep '"A100-SXM4-80GB"|A100' "$TEST_TMP/out/table1/0.01B/report.txt"
[ ! -e "$TEST_TMP/out/table1/0.01B/traces" ] || fail "the row's traces were kept without FIDELITY_KEEP=1"

# the Megatron-Core suite on a tiny table of its format: bf16, flash
# attention, the distributed optimizer with its gathers in the next forward,
# DP buckets of max(40 M, 1 M x DP) fp32 gradients; SP and the TP ring
# exchange with TP; interleaving where a row asks for it; a row of more GPUs
# than FIDELITY_MAX_RANKS folds its DP replicas only (the TP ring's pairs
# follow no folded dimension): 2 x TP processes
cat > "$TEST_TMP/mc.csv" <<'CSV'
params_b,heads,hidden,layers,tp,pp,dp,gpus,global_batch,micro_batch,layers_per_virtual_stage,tflops_per_gpu,mfu_pct
0.1,2,256,2,1,1,2,2,4,2,,100,10
0.2,4,512,4,2,2,1,4,8,1,1,100,10
0.3,2,256,2,2,1,16,32,32,2,,100,10
CSV
FIDELITY_MCORE_CSV=$TEST_TMP/mc.csv FIDELITY_SEQ=256 FIDELITY_ITERS=3 "$MAYA_TOP/fidelity/run" megatron_core \
    > "$TEST_TMP/out5" 2> "$TEST_TMP/err5" ||
    fail "fidelity/run megatron_core failed: $(cat "$TEST_TMP/out5"; grep -v "^   " "$TEST_TMP/err5" | tail -20)"
cat "$TEST_TMP/out5"
for r in 0.1 0.2 0.3; do
    expect_grep "^fidelity megatron_core ${r}B published=100 predicted=$num error=[-+][0-9]+\.[0-9]%$" "$TEST_TMP/out5"
done
expect_grep '^fidelity megatron_core summary rows=3 .* skipped=0 failed=0 ' "$TEST_TMP/out5"
expect_grep 'maya run --cluster dgx-h100 -g h100x2  -- minigpt --tp 1 --pp 1 --dp 2 --micro-batch-size 2 --micro-batches 1 --seq 256 --hidden 256 --heads 2 --layers 2 --vocab 1024 --bias --hidden-dropout 0\.1 --attention-dropout 0\.1 --fp32-cross-entropy --attention flash --zero1 --ddp torch --bucket-mb 152\.6 --overlap-param-gather --iters 3$' "$TEST_TMP/err5"
expect_grep 'minigpt --tp 2 --pp 2 --dp 1 .* --sequence-parallel --tp-comm-overlap --layers-per-virtual-stage 1$' "$TEST_TMP/err5"
expect_grep 'maya run --cluster dgx-h100 -g h100x32 --fold similar --replicas 16:2 -- minigpt --tp 2 ' "$TEST_TMP/err5"
expect_grep '^replayed   [1-4] of them: the other (31|30|29|28) are replicas' "$TEST_TMP/out/megatron_core/0.3B/report.txt"
expect_grep 'H100' "$TEST_TMP/out/megatron_core/0.1B/report.txt"

# a row that does not fit: failed, exit 1; FIDELITY_ROWS picks it alone
cat >> "$TEST_TMP/t.csv" <<'CSV'
51.6,64,8192,64,1,1,1,1,1,1,,100,30
CSV
FIDELITY_ROWS='^51' "$MAYA_TOP/fidelity/run" table1 > "$TEST_TMP/out2" 2> "$TEST_TMP/err2"
expect_eq "$?" 1 "fidelity/run's exit status with a failed row"
expect_count 2 '^fidelity table1 ' "$TEST_TMP/out2"
expect_grep '^fidelity table1 51\.6B failed: out of GPU memory \(peak [0-9.]+ GiB of 79\.[0-9]+ GiB\)$' "$TEST_TMP/out2"
expect_grep '^fidelity table1 summary rows=0 median=n/a max=n/a skipped=0 failed=1 ' "$TEST_TMP/out2"

# a suite whose program's sources are not here skips every row, saying how
# to get them; a checkout that is not the program is named
FIDELITY_LLMC= FIDELITY_CUDNN_FRONTEND= "$MAYA_TOP/fidelity/run" llmc > "$TEST_TMP/out5" 2> "$TEST_TMP/err5"
expect_eq "$?" 0 "fidelity/run's exit status with skipped rows"
expect_count 4 "^fidelity llmc gpt2_[0-9]+M skipped: needs llm.c's and cuDNN frontend's sources: git clone https://github.com/karpathy/llm.c LLMC; " "$TEST_TMP/out5"
expect_grep '^fidelity llmc summary rows=0 median=n/a max=n/a skipped=4 failed=0 ' "$TEST_TMP/out5"
FIDELITY_ROWS=124M FIDELITY_LLMC=$TEST_TMP FIDELITY_CUDNN_FRONTEND=$TEST_TMP "$MAYA_TOP/fidelity/run" llmc > "$TEST_TMP/out6" 2>&1
expect_grep "^fidelity llmc gpt2_124M skipped: FIDELITY_LLMC=$TEST_TMP holds no train_gpt2.cu" "$TEST_TMP/out6"

# a suite that fails, and one that does not exist
cp -r "$MAYA_TOP/fidelity" "$TEST_TMP/fid"
printf 'echo "fidelity broken r published=1 predicted=2 error=+100.0%%"\necho progress\nexit 3\n' > "$TEST_TMP/fid/broken.sh"
"$TEST_TMP/fid/run" broken > "$TEST_TMP/out3" 2> "$TEST_TMP/err3"
expect_eq "$?" 1 "fidelity/run's exit status with a failing suite"
expect_grep '^fidelity broken failed: exit 3$' "$TEST_TMP/out3"
expect_grep '^fidelity broken summary rows=1 median=100\.0% max=100\.0% skipped=0 failed=1 ' "$TEST_TMP/out3"
expect_grep '^progress$' "$TEST_TMP/err3"
"$MAYA_TOP/fidelity/run" nosuch > "$TEST_TMP/out4" 2>&1
expect_eq "$?" 2 "fidelity/run's exit status for an unknown suite"
expect_grep "^fidelity/run: no suite 'nosuch' \(expected one of: .*table1" "$TEST_TMP/out4"
exit 0
