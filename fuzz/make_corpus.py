#!/usr/bin/env python3
"""Write fuzz/corpus/: small seeds for every harness, taken from a run of
the repository's own workloads and files, and one regression input for each
defect reviews found (named regress-*; each says in its name what it was).
Inputs a fuzzer found are copied in by hand under regress-* names and kept. Run by hand when the formats change:

    fuzz/make_corpus.py RUN_DIR

RUN_DIR: a `maya run -g h100x2 -- build/tests/workloads/nccl_colls` run
directory (its traces and job trace are the trace seeds)."""
import os
import struct
import sys
import zlib

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(TOP, "fuzz", "corpus")
sys.path.insert(0, os.path.join(TOP, "tests", "emulator"))
from trace_fuzz import ZLIB_MAGIC, inflate  # noqa: E402 (chunks of either codec)
HDR = 128


def read_trace(path):
    data = open(path, "rb").read()
    head, pos, recs = data[:HDR], HDR, []
    while pos + 16 <= len(data):
        magic, raw, zb, crc = struct.unpack_from("<IIII", data, pos)
        chunk = inflate(magic, data[pos + 16:pos + 16 + zb])
        pos += 16 + zb
        i = 0
        while i < len(chunk):
            t, f, n = struct.unpack_from("<HHI", chunk, i)
            recs.append(bytearray(chunk[i:i + n]))
            i += n
    return bytearray(head), recs


def write_trace(path, head, recs):
    raw = b"".join(bytes(r) for r in recs)
    z = zlib.compress(raw, 1)
    with open(path, "wb") as fp:
        fp.write(bytes(head))
        fp.write(struct.pack("<IIII", ZLIB_MAGIC, len(raw), len(z), zlib.crc32(raw) & 0xFFFFFFFF))
        fp.write(z)


def rtype(r):
    return struct.unpack_from("<H", r, 0)[0]


def first(recs, t):
    return next(r for r in recs if rtype(r) == t)


def put(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as fp:
        fp.write(data)


def copy(harness, name, src):
    put(harness, name, open(src, "rb").read())


def trace_bytes(head, recs):
    tmp = os.path.join(OUT, ".tmp.mtrace")
    write_trace(tmp, head, recs)
    data = open(tmp, "rb").read()
    os.unlink(tmp)
    return data


def ref_seeds(job):
    """Job traces whose rank 1 is rebuilt as a reference to rank 0's
    section (RANK_REBUILT flagged ref: its COMM records only), and broken
    references: a source out of range, the rank itself, a later section."""
    jh, jrecs = read_trace(job)
    out, sec = [], None
    for r in jrecs:
        t = rtype(r)
        if t == 66:
            sec = struct.unpack_from("<i", r, 8)[0]
            out.append(r)
            if sec == 1:
                reb = bytearray(48)
                struct.pack_into("<HHIiiQQqII", reb, 0, 68, 0, 48, 1, 0, 0, 0, 0, 2, 1)
                out.append(reb)
        elif t in (67, 255) or sec != 1 or t in (3, 6):
            out.append(r)
    struct.pack_into("<Q", out[-1], 8, len(out) - 1)  # END counts the records before it
    jobrec = first(out, 64)
    struct.pack_into("<I", jobrec, 28, struct.unpack_from("<I", jobrec, 28)[0] | 2)
    put("job_trace", "ref-rank1-of-rank0.mtrace", trace_bytes(jh, out))
    reb = first(out, 68)
    for name, source in (("regress-ref-source-out-of-range", 7), ("regress-ref-to-itself", 1),
                         ("regress-ref-source-later", 2)):
        struct.pack_into("<i", reb, 12, source)
        put("job_trace", name + ".mtrace", trace_bytes(jh, out))
    struct.pack_into("<i", reb, 12, 0)


def main():
    run = sys.argv[1]
    r0, r1, job = (os.path.join(run, p) for p in ("traces/rank-0.mtrace", "traces/rank-1.mtrace", "job.mtrace"))
    # (inputs a fuzzer found, copied in as regress-*, are kept: only the
    # files written below are replaced)

    # ---- rank traces ----
    copy("rank_trace", "nccl-rank0.mtrace", r0)
    head, recs = read_trace(r0)
    put("rank_trace", "nccl-rank0-cut.mtrace", open(r0, "rb").read()[:-7])
    # a string id near 2^24 cost a 128 MB table
    bad = [bytearray(r) for r in recs]
    s = first(bad, 1)
    struct.pack_into("<I", s, 8, (1 << 24) - 1)
    put("rank_trace", "regress-string-id-2p24.mtrace", trace_bytes(head, bad))
    # a GEMM with a negative transa indexed before a string in maya trace dump
    gemm_trace = os.path.join(run, "gemm.mtrace")
    if os.path.exists(gemm_trace):
        gh, grecs = read_trace(gemm_trace)
        g = first(grecs, 26)
        struct.pack_into("<ii", g, 72, -7, -2147483648)
        put("rank_trace", "regress-gemm-negative-transa.mtrace", trace_bytes(gh, grecs))

    # ---- tail files: two small slots of the rank's records, chunks 0 and 1 ----
    raw = b"".join(bytes(r) for r in recs)
    slot = 4096
    parts, cur = [], b""
    for r in recs:
        if len(cur) + len(r) > slot:
            parts.append(cur)
            cur = b""
            if len(parts) == 2:
                break
        cur += bytes(r)
    if len(parts) < 2:
        parts.append(cur)
    def tail(chunks):
        out = b""
        for idx, body in chunks:
            out += struct.pack("<IIQI44x", 0x4C494154, slot, idx, len(body)) + body.ljust(slot, b"\0")
        return out + struct.pack("<IIQ", 0x54415453, 1, len(recs)).ljust(128, b"\0")
    put("trace_tail", "two-slots", tail([(0, parts[0]), (1, parts[1])]))
    put("trace_tail", "slots-out-of-order", tail([(1, parts[1]), (0, parts[0])]))
    put("trace_tail", "one-empty-slot", tail([(0, parts[0]), (0xFFFFFFFFFFFFFFFF, b"")]))

    # ---- job traces ----
    copy("job_trace", "nccl-job.mtrace", job)
    jh, jrecs = read_trace(job)
    bad = [bytearray(r) for r in jrecs]
    struct.pack_into("<i", first(bad, 64), 12, 1)  # JOB nranks 1, two rank sections follow
    put("job_trace", "regress-more-sections-than-nranks.mtrace", trace_bytes(jh, bad))
    bad = [bytearray(r) for r in jrecs]
    struct.pack_into("<iiI", first(bad, 64), 16, 0x7FFFFFFF, 8, 0xFFFFFFFF)  # nodes, gpus, ncomms
    put("job_trace", "regress-job-counts-uncapped.mtrace", trace_bytes(jh, bad))
    bad = [bytearray(r) for r in jrecs]
    struct.pack_into("<iii", first(bad, 64), 8, 1 << 24, 2, 1 << 24)  # world, nranks, nodes
    struct.pack_into("<i", first(bad, 64), 20, 4096)  # GPUs per node: 2^24 x 3 x 4096 links wrapped to 0
    put("job_trace", "regress-links-wrap-2p36.mtrace", trace_bytes(jh, bad))
    ref_seeds(job)

    # ---- collate: flags byte, first length, two rank traces ----
    a, b = open(r0, "rb").read(), open(r1, "rb").read()
    put("collate", "nccl-2ranks", bytes([1]) + struct.pack("<I", len(a)) + a + b)
    put("collate", "nccl-rank0-incomplete", bytes([2]) + a[:-7])
    h0, rec0 = read_trace(r0)
    bad = [bytearray(r) for r in rec0]
    struct.pack_into("<i", first(bad, 6), 28, 0x7FFFFFFF)  # COMM of 2^31 members: 2.1 GB
    put("collate", "regress-comm-2p31-members", bytes([0]) + trace_bytes(h0, bad))
    bad = [bytearray(r) for r in rec0]
    coll = first(bad, 28)
    struct.pack_into("<i", coll, 136, 50000000)  # COLL of 50 M members
    struct.pack_into("<Q", coll, 64, 0xDEAD)    # on a communicator no COMM record named
    put("collate", "regress-coll-50m-members", bytes([0]) + trace_bytes(h0, bad))
    h1 = bytearray(h0)
    struct.pack_into("<i", h1, 28, 0x7FFFFFFF)  # world size 2^31 - 1 in the header
    put("collate", "regress-header-world-2p31", bytes([0]) + trace_bytes(h1, rec0))

    # ---- text formats ----
    for sub in ("gpus", "clusters"):
        for f in sorted(os.listdir(os.path.join(TOP, "hwspecs", sub))):
            copy("hwspec", f, os.path.join(TOP, "hwspecs", sub, f))
    put("hwspec", "regress-binary.conf", bytes(range(256)))
    put("maya_conf", "example.conf",
        b'gpus = "h100x8"\ncluster = "dgx-h100"\nestimator = "gemm=learned"\n'
        b'iteration_marker = "step"\niterations = 10\ntimeout = 600\ncopy_threshold = "64K"\n')
    put("maya_conf", "regress-binary.conf", bytes(range(256)))
    copy("run_conf", "nccl-run.conf", os.path.join(run, "run.conf"))
    # a value with carriage returns came back changed (the reader strips one per line)
    rc = open(os.path.join(run, "run.conf"), "rb").read().replace(b"command=", b"command=x\r\r\r")
    put("run_conf", "regress-carriage-returns", rc)
    put("oracle", "example.txt",
        b"# durations\nname=cublasSgemm_v2 nth=1 device=14ms\nname=ncclAllReduce device=20ms host=7us\n"
        b"rank=1 seq=5 device=3ms\nname=\"void k<float>(int)\" device=42us\nname=* host=5us\n"
        b"unmatched=analytical\n")
    put("oracle", "regress-glob-exponential.txt", b"name=*a*a*a*a*a*a*a*a*b device=1ms\n")
    for i, v in enumerate([b"h100x8", b"h100x16,cluster=dgx-h100,iters=3,marker=step,report=out/r",
                           b"a100x4,cluster=c.conf", b"h100x8,report=x\x1b[31m\nforged log line",
                           b"x,", b",cluster=c.conf", b"h100x0", b"h100x99999999999"]):
        put("emulate_opt", "value-%d" % i, v)
    mods = os.path.join(TOP, "build", "tests", "workloads")
    for f in ("drv_kernels.cubin", "drv_kernels.ptx", "drv_kernels.fatbin", "drv_kernels.zstd.fatbin",
              "drv_kernels.lz4.fatbin"):
        copy("fatbin", f, os.path.join(mods, f))


if __name__ == "__main__":
    main()
