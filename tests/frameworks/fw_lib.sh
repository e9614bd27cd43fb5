# Helpers for the framework tests (sourced after tests/lib.sh): the
# workloads in tests/workloads/frameworks/ run with the project's .venv, into
# which scripts/venv.sh installs the frameworks pinned (docs/compatibility.md).
. "$MAYA_TOP/tests/torch/torch_lib.sh"
TORCH_WORKLOADS=$MAYA_TOP/tests/workloads/frameworks
# DeepSpeed's JIT-built ops (FusedAdam: minutes of nvcc) are built once per
# build tree and kept.
export TORCH_EXTENSIONS_DIR=$MAYA_BUILD/torch_extensions
# Hugging Face libraries must not try the hub (nothing is downloaded).
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# check_iterations DIR STEPS: the report found at least two iterations (and
# at most STEPS) and its steady iteration time is positive.
check_iterations() {
    local n t
    n=$(report_field "$1" "r['iterations_found']")
    [ "$n" -ge 2 ] && [ "$n" -le "$2" ] || fail "$1: expected 2..$2 iterations found for $2 steps, found $n"
    t=$(report_field "$1" "r['iteration_time_s']")
    "$PY" -c "import sys; sys.exit(not float(sys.argv[1]) > 0)" "$t" || fail "$1: iteration time $t is not positive"
}

# check_run DIR WORLD STEPS: ranks 0..WORLD-1 left whole traces with no
# unsupported call, the report says the job succeeded, and it found the steps.
check_run() {
    check_rank_traces "$1" "$2"
    check_report "$1"
    check_iterations "$1" "$3"
}

# coll_bytes DUMP API [MIN]: the bytes of a trace dump's API collectives
# (ncclAllReduce, ...) of at least MIN bytes each, added up.
coll_bytes() {
    grep -E "^coll .*api=$2 " "$1" | sed 's/.* bytes=\([0-9]*\).*/\1/' |
        awk -v min="${3:-0}" '$1 >= min { s += $1 } END { print s + 0 }'
}

# coll_count DUMP API BYTES: how many API collectives of exactly BYTES.
coll_count() {
    grep -cE "^coll .*api=$2 .* bytes=$3( |$)" "$1" || true
}

# check_peak DIR RANK LOW: the rank's peak device memory in the report holds
# at least LOW bytes (what the model's state needs, from its size) and what
# the framework itself saw allocated (torch.cuda.max_memory_allocated), and
# at most that plus 512 MiB (the fixed context: cuBLAS workspaces, NCCL
# buffers, the caching allocator's rounding; the models here are tiny).
check_peak() {
    local peak alloc
    peak=$(report_field "$1" "r['ranks'][$2]['peak_memory_bytes']")
    alloc=$(result "$1/logs/rank-$2.out" max_memory_allocated)
    [ "$peak" -ge "$3" ] || fail "$1 rank $2: peak $peak bytes is below the model state's $3"
    [ "$peak" -ge "$alloc" ] || fail "$1 rank $2: peak $peak bytes is below the $alloc torch allocated"
    [ "$peak" -le $((alloc + 512 * 1024 * 1024)) ] ||
        fail "$1 rank $2: peak $peak bytes is more than 512 MiB above the $alloc torch allocated"
    [ "$alloc" -le $(($3 + 512 * 1024 * 1024)) ] ||
        fail "$1 rank $2: torch allocated $alloc bytes, more than 512 MiB above the model state's $3"
}

# torchtitan (the long tests): TITAN, its own directory (scripts/venv.sh
# --torchtitan), or the test is skipped; titan_run DIR GPUS STEPS ARGS...
# trains torchtitan_llama.py's Llama 3 debug model (sequence 128, 2 a
# batch) for STEPS steps with torchtitan's ARGS, trunc_normal_'s
# `mask.any()` declared false (docs/compatibility.md).
TITAN=$MAYA_TOP/.venv-torchtitan
titan_run() {
    [ -f "$TITAN/torchtitan-0.3.0.dist-info/METADATA" ] ||
        skip "no torchtitan 0.3.0 in $TITAN: scripts/venv.sh --torchtitan installs it"
    local dir=$1 gpus=$2 steps=$3
    shift 3
    PYTHONPATH=$TITAN HF_DATASETS_OFFLINE=1 MAYA_VALUES="or_kernel_cuda=u8:0" \
        torch_run "$dir" "$gpus" torchtitan_llama.py "$TEST_TMP/assets" \
        --training.seq_len 128 --training.local_batch_size 2 --training.steps "$steps" "$@"
}
