"""Where a predicted iteration's time goes, for the fidelity suites: rank 0's
device ops in its steady-state iterations (all but the first, each the span
report.json gives it), summed by op
family and by name, from a maya run directory's timeline.json and
report.json. Times overlap across streams (a DP all-reduce beside the
backward), so the families can add up to more than the iteration.

    python3 fidelity/breakdown.py RUN_DIR [TOP]
"""
import json
import re
import sys


def family(name):
    """The op's family: GEMMs, NCCL collectives by kind, copies, kernels."""
    if name.startswith("cublas") or name.startswith("cudnn"):
        return "gemm"
    if name.startswith("nccl"):
        return name[4:].lower()
    if name.startswith("cudaMemcpy") or name.startswith("cudaMemset"):
        return "copy/memset"
    return "kernel"


def short(name):
    """A kernel's name without its parameter list and return type."""
    name = re.sub(r"\(.*$", "", name)
    return re.sub(r"^void ", "", name)


def iterations_shown(path, n):
    """The iterations a timeline.json holds (maya bounds it by default: its
    otherData says which, on the first line), from 1; all n if it says not."""
    with open(path) as f:
        m = re.search(r'"iterations_shown":\[(\d+),(\d+)\]', f.readline())
    return (int(m.group(1)), int(m.group(2))) if m else (1, n)


def rank0_events(path):
    """Rank 0's complete events of a timeline.json, read a line at a time
    (maya writes one event a line; a job of hundreds of ranks makes a file of
    gigabytes that json.load would hold whole)."""
    with open(path) as f:
        for line in f:
            if '"pid":0,' not in line or '"ph":"X"' not in line:
                continue
            yield json.loads(line.rstrip().rstrip(","))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: breakdown.py RUN_DIR [TOP]")
    run, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 12
    try:
        report = json.load(open(run + "/report.json"))
        events = list(rank0_events(run + "/timeline.json"))
    except (OSError, ValueError, KeyError) as e:
        sys.exit("breakdown.py: cannot read %s: %s" % (run, e))
    its = report.get("iterations") or []
    if len(its) < 2:
        sys.exit("breakdown.py: %s: fewer than 2 iterations" % run)
    # the steady state: the iterations after the first, as far as the
    # timeline holds them, each from its end back by its time (a warm-up
    # before the first and a partial last one are in none)
    first, last = iterations_shown(run + "/timeline.json", len(its))
    if last < 2:
        sys.exit("breakdown.py: %s: the timeline holds no steady iteration" % run)
    steady = last - 1
    t0 = (its[1]["end_s"] - its[1]["time_s"]) * 1e6
    t1 = its[last - 1]["end_s"] * 1e6
    fam, names = {}, {}
    for e in events:
        if e.get("pid") != 0 or e.get("tid", 0) <= 0 or e.get("ts", 0) < t0 or e.get("ts", 0) >= t1:
            continue
        n = short(e["name"])
        f = family(n)
        fam[f] = fam.get(f, 0) + e["dur"]
        c, d = names.get(n, (0, 0))
        names[n] = (c + 1, d + e["dur"])
    it_us = report["iteration_time_s"] * 1e6
    print("  rank 0, per steady iteration (%.1f ms):" % (it_us / 1e3))
    for f, d in sorted(fam.items(), key=lambda x: -x[1]):
        print("    %-14s %10.2f ms  %5.1f%%" % (f, d / steady / 1e3, 100 * d / steady / it_us))
    print("  its costliest ops:")
    for n, (c, d) in sorted(names.items(), key=lambda x: -x[1][1])[:top]:
        print("    %10.2f ms  %6d x  %s" % (d / steady / 1e3, c // steady, n))


if __name__ == "__main__":
    main()
