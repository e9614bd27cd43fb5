#!/usr/bin/env python3
"""same_report.py A.json B.json [MIN_COPIED]: the two reports (one from a job
trace whose rebuilt ranks are references, one from full copies) agree in
every field but the counts of references read and copied; A's references
include at least MIN_COPIED loaded as copies. Prints the iteration time."""
import json
import sys

a, b = (json.load(open(x)) for x in sys.argv[1:3])
min_copied = int(sys.argv[3]) if len(sys.argv) > 3 else 0
assert a["simulated"] and a["iteration_time_s"] > 0, a["error"]
skip = {".simulator.references_read", ".simulator.references_copied"}
diffs = []


def walk(x, y, p):
    if p in skip:
        return
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            walk(x.get(k), y.get(k), p + "." + k)
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            walk(u, v, "%s[%d]" % (p, i))
    elif x != y:
        diffs.append((p, x, y))


walk(a, b, "")
assert not diffs, diffs[:10]
s, t = a["simulator"], b["simulator"]
assert t["references_read"] == t["references_copied"] == 0, t
assert s["references_read"] + s["references_copied"] > 0, s
assert s["references_copied"] >= min_copied, s
print("iteration %.9f s both ways; references: %d read, %d copied" %
      (a["iteration_time_s"], s["references_read"], s["references_copied"]))
