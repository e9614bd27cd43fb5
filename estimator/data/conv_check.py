"""The analytical model's convolutions against measured ones it was not
fitted on: each row of conv.csv (DeepBench's V100 training convolutions,
fp32 on CUDA cores and fp16 on tensor cores, forward and both backward
passes; deepbench.py makes it) is priced by `maya estimate conv`, and the
errors are summarised per precision and filter shape.

    python3 estimator/data/conv_check.py [MAYA] [--rows]

Prints one line per precision (`conv_check PREC points=N within_25pct=N
median_abs_error=X%`), then per filter and stride the median signed error;
--rows also prints every row.
"""
import csv
import os
import re
import statistics
import subprocess
import sys


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = [a for a in sys.argv[1:] if a != "--rows"]
    maya = args[0] if args else os.path.join(here, "..", "..", "build", "bin", "maya")
    errs = {}
    with open(os.path.join(here, "conv.csv")) as f:
        for r in csv.DictReader(f):
            cmd = [maya, "estimate", "conv", "gpu=" + r["gpu"], "dtype=" + r["prec"], "pass=" + r["pass"],
                   "model=analytical"] + ["%s=%s" % (k, r[k]) for k in ("n", "c", "h", "w", "k", "r", "s", "pad", "stride")]
            out = subprocess.run(cmd, capture_output=True, text=True)
            m = re.search(r"device_us=([\d.]+)", out.stdout)
            if not m:
                sys.exit("conv_check: %s: %s" % (" ".join(cmd), out.stderr.strip()))
            us, meas = float(m.group(1)), float(r["time_us"])
            e = (us - meas) / meas * 100
            shape = "%sx%s s%s" % (r["r"], r["s"], r["stride"])
            errs.setdefault(r["prec"], {}).setdefault(shape, []).append(e)
            if "--rows" in sys.argv:
                print("%s %s n=%s c=%s %sx%s k=%s %s %s measured=%sus maya=%.1fus error=%+.0f%%" % (
                    r["prec"], r["group"], r["n"], r["c"], r["h"], r["w"], r["k"], shape, r["pass"], r["time_us"], us, e))
    for prec, shapes in sorted(errs.items()):
        every = [e for v in shapes.values() for e in v]
        print("conv_check %s points=%d within_25pct=%d median_abs_error=%.1f%%" % (
            prec, len(every), sum(abs(e) <= 25 for e in every), statistics.median(map(abs, every))))
        for shape, v in sorted(shapes.items()):
            print("  %-9s %3d points, median error %+.0f%%" % (shape, len(v), statistics.median(v)))


if __name__ == "__main__":
    main()
