#!/usr/bin/env python3
"""Decode maya's Chakra execution traces with the protobuf library (classes
protoc generated from sim/chakra_et.proto, the Chakra schema's messages) and
check them as Chakra defines them: each file is a GlobalMetadata message then
Node messages, each preceded by its varint length; node ids are unique and
every dependency names a node before it; each rank's device nodes are its
device ops in maya's timeline.json, with the same names and (within Chakra's
1 us unit, remainders carried per stream) the same total duration of compute; every
collective names a communicator group (pg_name) of et.comm_group.json that
holds the rank, with comm_type and comm_size; the members of each group call
the same collectives in the same order; every send has its recv.

usage: check_chakra.py PYDIR ETDIR timeline.json
"""
import collections
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import chakra_et_pb2 as et  # noqa: E402
from google.protobuf.internal.decoder import _DecodeVarint32  # noqa: E402


def messages(path):
    data = open(path, "rb").read()
    pos = 0
    while pos < len(data):
        n, pos = _DecodeVarint32(data, pos)
        if pos + n > len(data):
            raise SystemExit(f"{path}: a message of {n} bytes runs past the end of the file")
        yield data[pos:pos + n]
        pos += n


def attrs(node):
    out = {}
    for a in node.attr:
        which = a.WhichOneof("value")
        assert which, (node.name, a.name)
        out[a.name] = getattr(a, which)
    return out


def main():
    etdir, timeline = sys.argv[2], sys.argv[3]
    groups = {int(k): v for k, v in json.load(open(os.path.join(etdir, "et.comm_group.json"))).items()}
    assert groups, "no communicator groups"
    t = json.load(open(timeline))
    dev = collections.defaultdict(list)
    for e in t["traceEvents"]:
        if e["ph"] == "X" and e["tid"] > 0:
            dev[e["pid"]].append(e)
    ranks = sorted(int(f.split(".")[1]) for f in os.listdir(etdir) if f.endswith(".et"))
    assert ranks == sorted(dev), (ranks, sorted(dev))
    colls = collections.defaultdict(dict)   # group -> rank -> [(comm_type, size)]
    sends, recvs = collections.Counter(), collections.Counter()
    for r in ranks:
        it = messages(os.path.join(etdir, f"et.{r}.et"))
        meta = et.GlobalMetadata()
        meta.ParseFromString(next(it))
        assert meta.version, "GlobalMetadata has no version"
        seen, device = set(), []
        for raw in it:
            n = et.Node()
            n.ParseFromString(raw)
            assert n.id not in seen, f"rank {r}: node id {n.id} twice"
            for d in list(n.ctrl_deps) + list(n.data_deps):
                assert d in seen, f"rank {r}: node {n.id} ({n.name}) depends on {d}, which is not before it"
            seen.add(n.id)
            a = attrs(n)
            assert "is_cpu_op" in a, n
            if a["is_cpu_op"]:
                assert n.type == et.COMP_NODE, n
                continue
            device.append((n, a))
            if n.type == et.COMM_COLL_NODE:
                g = int(a["pg_name"])
                assert g in groups and r in groups[g], f"rank {r}: group {g} does not hold it"
                assert a["comm_size"] > 0 and 0 <= a["comm_type"] <= 9, a
                colls[g].setdefault(r, []).append((a["comm_type"], a["comm_size"]))
            elif n.type in (et.COMM_SEND_NODE, et.COMM_RECV_NODE):
                key = (a["comm_src"], a["comm_dst"], a["comm_tag"], a["comm_size"])
                if n.type == et.COMM_SEND_NODE:
                    assert a["comm_src"] == r, (r, a)
                    sends[key] += 1
                else:
                    assert a["comm_dst"] == r, (r, a)
                    recvs[key] += 1
            else:
                assert n.type == et.COMP_NODE, n
        # the rank's device ops, in the order maya's timeline has them per stream
        want = sorted(dev[r], key=lambda e: (e["ts"], e["tid"]))
        assert len(device) == len(want), f"rank {r}: {len(device)} device nodes, timeline has {len(want)} device ops"
        assert sorted(n.name for n, _ in device) == sorted(e["name"] for e in want), f"rank {r}: names differ"
        comp = sum(n.duration_micros for n, _ in device if n.type == et.COMP_NODE)
        comp_want = sum(e["dur"] for e in want if e.get("cat") in ("compute", "copy", "host_function"))
        # each stream carries its own rounding remainder: under 1 us lost per stream
        streams = len({e["tid"] for e in want})
        assert abs(comp - comp_want) <= streams + 1e-6 * comp_want, \
            f"rank {r}: compute {comp} us, timeline {comp_want} us ({streams} streams)"
    for g, by_rank in colls.items():
        seqs = list(by_rank.values())
        assert sorted(by_rank) == sorted(groups[g]), f"group {g}: calls from {sorted(by_rank)}, holds {groups[g]}"
        assert all(s == seqs[0] for s in seqs), f"group {g}: members call different collectives"
    assert sends == recvs, f"sends without recvs: {sends - recvs}, recvs without sends: {recvs - sends}"
    print(f"{len(ranks)} ranks, {sum(len(next(iter(v.values()))) for v in colls.values())} collectives "
          f"per member in {len(colls)} groups, "
          f"{sum(sends.values())} send/recv pairs")


if __name__ == "__main__":
    main()
