#!/usr/bin/env bash
# Fidelity of maya's collectives: nccl-tests-style bus bandwidth curves
# predicted by the real pipeline and compared with published ones.
#
# For every published curve (fidelity/data/nccl_tests_busbw.csv: GPU,
# collective, ranks, nodes, how the test ran), tests/workloads/nccl_perf runs
# the same sweep under `maya run` on emulated GPUs of that kind: one process
# driving 8 GPUs for nccl-tests -g 8 curves, a process per GPU otherwise;
# the simulated time of an iteration of each size is read from the run's
# timeline.json and turned into busbw as nccl-tests does. Prints one line per
# (collective, GPU, size)
#   fidelity collectives <coll> <gpu> <bytes> published=<GB/s> predicted=<GB/s> error=<+x.x>%
# and a summary line per curve (points within 15 %, median and largest error).
#
# What fitted what (estimator/collectives.c): NCCL's tuning constants, its
# rule for splitting a send/recv over channels, and published link
# efficiencies, one constant fitted on the 8 x A100 all-reduce curve (the
# pipeline fill) and one on the 8 x B200 all-gather's smallest size (an LL
# step inside a node); every other curve is held out.
#
# Usage: fidelity/collectives.sh [--curve COLL/GPU/RANKS] [--estimator SPEC]
#   MAYA (default build/bin/maya) and NCCL_PERF (build/tests/workloads/nccl_perf)
#   name the binaries. Exit status 0 when every curve ran (whatever the errors),
#   1 when a run failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
MAYA=${MAYA:-$top/build/bin/maya}
NCCL_PERF=${NCCL_PERF:-$top/build/tests/workloads/nccl_perf}
data=$top/fidelity/data/nccl_tests_busbw.csv
only="" estimator=""
while [ $# -gt 0 ]; do
    case $1 in
    --curve) only=$2; shift 2 ;;
    --estimator) estimator=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "collectives.sh: unknown argument $1 (expected --curve COLL/GPU/RANKS or --estimator SPEC)" >&2; exit 2 ;;
    esac
done
for f in "$MAYA" "$NCCL_PERF" "$data"; do
    [ -e "$f" ] || { echo "collectives.sh: $f is missing (make first)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/maya-fidelity-coll.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

WARMUP=1 ITERS=20 # nccl-tests' default iterations
status=0
# the curves: distinct (gpu, collective, ranks, nodes, mode, source)
curves=$(grep -v '^#' "$data" | tail -n +2 | cut -d, -f1-6 | awk '!seen[$0]++')
for c in $curves; do
    IFS=, read -r gpu coll ranks nodes mode source <<< "$c"
    [ -n "$only" ] && [ "$only" != "$coll/$gpu/$ranks" ] && continue
    op=$(echo "$coll" | tr -d _)
    dir=$tmp/$coll-$gpu-$ranks
    nproc=()
    [ "$mode" = g8 ] && nproc=(-n "$nodes")
    est=()
    [ -n "$estimator" ] && est=(--estimator "$estimator")
    # the job's NCCL settings as the source ran them: Azure's guide sets
    # NCCL_ALGO=NVLS (NCCL falls back to its own choice where there is none);
    # maya's estimator reads them from the environment as NCCL does
    jobenv=(NCCL_ALGO= NCCL_PROTO=)
    [ "$source" = azure ] && jobenv=(NCCL_ALGO=NVLS NCCL_PROTO=)
    # the published sizes, smallest to largest (nccl_perf sweeps by factors of 2)
    min=$(grep "^$gpu,$coll,$ranks,$nodes,$mode," "$data" | cut -d, -f7 | sort -n | head -1)
    max=$(grep "^$gpu,$coll,$ranks,$nodes,$mode," "$data" | cut -d, -f7 | sort -n | tail -1)
    if ! env "${jobenv[@]}" "$MAYA" run -q --timeline full -g "${gpu}x$ranks" "${nproc[@]}" "${est[@]}" -o "$dir" -- \
            "$NCCL_PERF" --op "$op" --devices $((ranks / nodes)) --min "$min" --max "$max" \
            --warmup $WARMUP --iters $ITERS > "$dir.log" 2>&1; then
        echo "collectives.sh: $coll on ${gpu}x$ranks failed: $(tail -3 "$dir.log")" >&2
        status=1
        continue
    fi
    python3 - "$dir/timeline.json" "$data" "$gpu" "$coll" "$ranks" "$nodes" "$mode" "$min" "$max" \
        $WARMUP $ITERS <<'EOF' || status=1
import json, statistics, sys
tl, data, gpu, coll, ranks, nodes, mode, lo, hi, warm, iters = sys.argv[1:]
ranks, lo, hi, warm, iters = int(ranks), int(lo), int(hi), int(warm), int(iters)
pub = {}
for line in open(data):
    if line.startswith('#') or line.startswith('gpu,'):
        continue
    f = line.strip().split(',')
    if f[:5] == [gpu, coll, str(ranks), nodes, mode]:
        pub[int(f[6])] = float(f[8])
# rank 0's first stream with communication on it: its collectives, in order;
# its host's ncclGroupStart calls: one per iteration (where nccl-tests'
# timer starts, after the warm-up and a synchronisation)
allev = [e for e in json.load(open(tl))['traceEvents'] if e.get('ph') == 'X' and e.get('pid') == 0]
ev = [e for e in allev if e.get('cat') == 'communication']
groups = sorted(e['ts'] for e in allev if e.get('name') == 'ncclGroupStart')
if not ev:
    sys.exit('collectives.sh: no communication in ' + tl)
tid = min(e['tid'] for e in ev)
ev = sorted((e for e in ev if e['tid'] == tid), key=lambda e: (e['ts'], e['ts'] + e['dur']))
per_iter = 2 if coll == 'sendrecv' else 1
n = ranks
factor = 2 * (n - 1) / n if coll == 'all_reduce' else (n - 1) / n if coll in ('all_gather', 'reduce_scatter', 'alltoall') else 1
sizes, s = [], lo
while s <= hi:
    per_rank = s // 4 // (n if coll in ('all_gather', 'reduce_scatter', 'alltoall') else 1)
    if per_rank >= 1:
        sizes.append(s)
    s *= 2
need = len(sizes) * (warm + iters) * per_iter
if len(ev) != need or len(groups) != len(sizes) * (warm + iters):
    sys.exit('collectives.sh: %s: %d collectives and %d groups on the timeline, expected %d and %d' %
             (tl, len(ev), len(groups), need, len(sizes) * (warm + iters)))
errs = []
for k, size in enumerate(sizes):
    block = ev[k * (warm + iters) * per_iter:(k + 1) * (warm + iters) * per_iter]
    ends = [max(e['ts'] + e['dur'] for e in block[i * per_iter:(i + 1) * per_iter]) for i in range(warm + iters)]
    us = (ends[-1] - groups[k * (warm + iters) + warm]) / iters
    pred = size / us / 1e3 * factor
    if size not in pub or pub[size] <= 0:
        continue
    err = (pred - pub[size]) / pub[size] * 100
    errs.append(abs(err))
    print('fidelity collectives %s %s %d published=%.4g predicted=%.4g error=%+.1f%%' %
          (coll, '%sx%d' % (gpu, n), size, pub[size], pred, err))
if errs:
    print('fidelity collectives %s %sx%d summary points=%d within_15pct=%d median_abs_error=%.1f%% '
          'max_abs_error=%.1f%%' % (coll, gpu, n, len(errs), sum(e <= 15 for e in errs),
                                     statistics.median(errs), max(errs)))
EOF
done
exit $status
