#!/usr/bin/env python3
"""Check a report.html, as a browser rendered it (the DOM Chromium dumped with
--dump-dom), against the report.json of the same run: every figure shown is
the file's, each bar's split adds up to the iteration, the memory bars are the
ranks' peaks, the communicator and slowest-op tables are the file's, and the
timeline was drawn and its ticks made by the page's script.

usage: check_html.py DOM report.json [--max-bars N]
"""
import json
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.elems = []     # (tag, attrs, text)
        self.stack = []

    def handle_starttag(self, tag, attrs):
        e = [tag, dict(attrs), ""]
        self.elems.append(e)
        if tag not in ("br", "meta", "rect", "line", "img", "input"):
            self.stack.append(e)

    def handle_endtag(self, tag):
        while self.stack:
            e = self.stack.pop()
            if e[0] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e[2] += data


def near(a, b, what, rel=1e-6):
    if abs(a - b) > rel * max(abs(a), abs(b), 1e-12):
        raise SystemExit(f"{what}: the page shows {a!r}, report.json has {b!r}")


def shown_seconds(text):
    v, unit = text.split()
    return float(v) * {"s": 1, "ms": 1e-3, "us": 1e-6}[unit]


def main():
    dom_path, json_path = sys.argv[1], sys.argv[2]
    max_bars = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--max-bars" else None
    d = Dom()
    d.feed(open(dom_path, encoding="utf-8").read())
    r = json.load(open(json_path))
    by_id = {e[1]["id"]: e for e in d.elems if "id" in e[1]}
    head = by_id.get("headline")
    assert head, "no headline"
    if not r["workload_ok"]:
        assert "FAILED" in head[2], head
        assert "data-iteration-time-s" not in head[1], "a failed run's headline gives an iteration time"
    elif r["simulated"]:
        near(float(head[1]["data-iteration-time-s"]), r["iteration_time_s"], "headline iteration")
        # the text a person reads is the same figure, to the digits shown
        near(shown_seconds(head[2].split(" per iteration")[0].strip()), r["iteration_time_s"], "headline text", 1e-3)
        assert f"on {r['gpus_used']} x {r['gpu']}" in head[2], (head[2], r["gpus_used"])
    # the figures table: data-key is report.json's key
    rows = [e for e in d.elems if e[0] == "tr" and "data-key" in e[1]]
    assert rows, "no figures"
    for e in rows:
        k = e[1]["data-key"]
        want = r["gpus_used"] if k == "gpu_count" else r[k]
        near(float(e[1]["data-value"]), want, f"figure {k}")
    if not r["simulated"]:
        return
    ranks = {x["rank"]: x for x in r["ranks"] if x["traced"]}
    bars = [e for e in d.elems if e[0] == "g" and "bar" in e[1].get("class", "").split()]
    assert bars, "no breakdown bars"
    it = float(by_id["breakdown"][1]["data-iteration-s"])
    for b in bars:
        a = b[1]
        parts = [float(a[f"data-{k}-s"]) for k in ("compute", "comm", "copy", "idle")]
        near(sum(parts), it, f"bar of ranks {a['data-first']}-{a['data-last']} adds up to the iteration", 1e-6)
        if a["data-first"] == a["data-last"]:
            s = ranks[int(a["data-first"])]["iteration_split"]
            for v, k in zip(parts, ("compute_s", "communication_s", "copy_s", "idle_s")):
                near(v, s[k], f"rank {a['data-first']} {k}")
    if max_bars is not None:
        assert len(bars) <= max_bars, f"{len(bars)} bars for {len(ranks)} ranks"
    else:
        assert len(bars) == len(ranks), (len(bars), len(ranks))
    mems = [e for e in d.elems if e[0] == "g" and e[1].get("class") == "mem"]
    for m in mems:
        lo, hi = int(m[1]["data-first"]), int(m[1]["data-last"])
        want = max(ranks[k]["peak_memory_bytes"] for k in ranks if lo <= k <= hi)
        near(float(m[1]["data-peak-bytes"]), want, f"memory of ranks {lo}-{hi}")
    cap = by_id["memory"][1]["data-capacity-bytes"]
    near(float(cap), r.get("gpu_memory_bytes", 0), "memory capacity")
    comms = [e for e in d.elems if e[0] == "tr" and "data-comm" in e[1]]
    want = r["communicators"][: len(comms)]
    assert len(comms) == min(len(r["communicators"]), 24), (len(comms), len(r["communicators"]))
    for e, c in zip(comms, want):
        assert e[1]["data-comm"] == c["id"], (e[1], c)
        near(float(e[1]["data-time-s"]), c["time_per_iteration_s"], f"communicator {c['id']}")
    ops = [e for e in d.elems if e[0] == "tr" and "data-time-s" in e[1] and "data-comm" not in e[1]]
    assert len(ops) == len(r["slowest_ops"]), (len(ops), len(r["slowest_ops"]))
    for e, o in zip(ops, r["slowest_ops"]):
        near(float(e[1]["data-time-s"]), o["time_per_iteration_s"], f"op {o['name']}")
        name = [x for x in d.elems if x[0] == "td" and x[1].get("title") == o["name"]]
        assert name, f"op {o['name']} not named in the table"
        assert o["kind"] in e[2], f"op {o['name']}: the table does not say it is a {o['kind']}"
    # the timeline: bars drawn, and ticks that only the page's script makes
    plot = by_id["tl-plot"]
    rects = [e for e in d.elems if e[0] == "rect" and "fill" in e[1]]
    assert rects, "no bars at all"
    ticks = [e for e in d.elems if e[0] == "text" and e[2] and e[2][0].isdigit()]
    assert len(ticks) >= 3, "the timeline's script drew no time axis"
    assert plot[1]["viewbox" if "viewbox" in plot[1] else "viewBox"].startswith("0 0 10000"), plot[1]


if __name__ == "__main__":
    main()
