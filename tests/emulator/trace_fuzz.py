#!/usr/bin/env python3
"""Damage a valid maya trace in many ways and check that `maya trace dump`
never crashes: it either prints the trace (exit 0) or fails with exit 1 and
a message naming the file and the offset of the problem.

usage: trace_fuzz.py MAYA TRACE WORKDIR [--valgrind N]

Damage: the file cut at many offsets; bytes flipped in the header and in
the compressed data; garbage headers; and, to get past the checksums, the
inflated records of a chunk changed (sizes, types, ids, counts) and the
chunk compressed again with a correct checksum."""
import os
import random
import ctypes
import ctypes.util
import struct
import subprocess
import sys
import zlib

HDR = 128
CHUNK = 16


# Chunks are Zstandard frames (magic "CHKZ", what maya writes) or zlib data
# ("CHNK", traces written before): libzstd through ctypes, as maya links it.
ZLIB_MAGIC, ZSTD_MAGIC = 0x4B4E4843, 0x5A4B4843
_zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
_zstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
_zstd.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_decompress.restype = ctypes.c_size_t
_zstd.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]


def inflate(magic, z):
    if magic == ZLIB_MAGIC:
        return zlib.decompress(z)
    size = _zstd.ZSTD_getFrameContentSize(z, len(z))
    if magic != ZSTD_MAGIC or size >= 1 << 40:
        raise ValueError("not a chunk maya writes")
    out = ctypes.create_string_buffer(max(size, 1))
    n = _zstd.ZSTD_decompress(out, size, z, len(z))
    if _zstd.ZSTD_isError(n):
        raise ValueError("zstd data error")
    return out.raw[:n]


def run(maya, path, valgrind=False):
    cmd = [maya, "trace", "dump", path]
    if valgrind:
        cmd = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
               "--errors-for-leak-kinds=definite"] + cmd
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stderr.decode(errors="replace")


def check(maya, path, what, valgrind=False, may_pass=True):
    rc, err = run(maya, path, valgrind)
    if rc == 0 and may_pass:
        return 0
    if rc != 1:
        sys.exit(f"FAIL: {what}: maya trace dump exited {rc} (a crash or a tool error):\n{err}")
    if path not in err or ("offset" not in err):
        sys.exit(f"FAIL: {what}: the message does not name the file and the offset:\n{err}")
    return 1


def chunks(data):
    """(offset, raw bytes) of every chunk."""
    out, off = [], HDR
    while off + CHUNK <= len(data):
        magic, raw_bytes, zbytes, crc = struct.unpack_from("<IIII", data, off)
        raw = inflate(magic, data[off + CHUNK:off + CHUNK + zbytes])
        out.append((off, raw, zbytes))
        off += CHUNK + zbytes
    return out


def with_chunk(data, off, zbytes, raw):
    z = zlib.compress(bytes(raw), 1)
    # written back as zlib, which maya reads too: the trace then mixes both codecs
    h = struct.pack("<IIII", ZLIB_MAGIC, len(raw), len(z), zlib.crc32(bytes(raw)) & 0xffffffff)
    return data[:off] + h + z + data[off + CHUNK + zbytes:]


def records(raw):
    """Offsets of the records of an inflated chunk."""
    out, pos = [], 0
    while pos + 8 <= len(raw):
        t, f, n = struct.unpack_from("<HHI", raw, pos)
        out.append(pos)
        if n < 8:
            break
        pos += n
    return out


def main():
    maya, trace, work = sys.argv[1], sys.argv[2], sys.argv[3]
    nvalgrind = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--valgrind" else 0
    data = open(trace, "rb").read()
    rng = random.Random(1234)
    path = os.path.join(work, "damaged.mtrace")
    cases = []

    def case(what, blob, may_pass=True):
        cases.append((what, blob, may_pass))

    # cut short: every offset in the header and first chunk header, then a spread
    cuts = sorted(set(list(range(0, HDR + CHUNK + 8)) + [rng.randrange(len(data)) for _ in range(150)]))
    for n in cuts:
        if n < len(data):
            case(f"cut at {n}", data[:n], may_pass=False)
    # flipped bytes anywhere
    for _ in range(300):
        b = bytearray(data)
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        case(f"bit flip at {i}", bytes(b))
    # garbage
    case("empty file", b"", may_pass=False)
    case("random bytes", bytes(rng.randrange(256) for _ in range(4096)), may_pass=False)
    case("magic only", b"MAYATRCE", may_pass=False)
    b = bytearray(data)
    struct.pack_into("<I", b, 8, 99)
    case("future version", bytes(b), may_pass=False)
    b = bytearray(data)
    struct.pack_into("<I", b, HDR + 4, 0xfffffff8)
    case("huge chunk size", bytes(b), may_pass=False)
    b = bytearray(data)
    struct.pack_into("<I", b, HDR + 8, 0x7fffffff)
    case("huge compressed size", bytes(b), may_pass=False)

    # records changed inside a well-formed chunk
    cs = chunks(data)
    for _ in range(400):
        off, raw, zbytes = cs[rng.randrange(len(cs))]
        raw = bytearray(raw)
        recs = records(raw)
        r = recs[rng.randrange(len(recs))]
        kind = rng.randrange(5)
        if kind == 0:    # record size
            struct.pack_into("<I", raw, r + 4, rng.choice([0, 4, 8, 12, 16, 0xffffffff, rng.randrange(1 << 16)]))
        elif kind == 1:  # record type
            struct.pack_into("<H", raw, r, rng.randrange(300))
        elif kind == 2:  # a 32-bit field inside the record (ids, counts, lengths)
            n = struct.unpack_from("<I", raw, r + 4)[0]
            if n > 8:
                at = r + 8 + 4 * rng.randrange((n - 8) // 4)
                struct.pack_into("<I", raw, at, rng.choice([0, 1, 0xffffffff, 0x7fffffff, rng.randrange(1 << 32)]))
        elif kind == 3:  # random bytes over a record
            n = min(struct.unpack_from("<I", raw, r + 4)[0], len(raw) - r)
            for _ in range(4):
                if n > 0:
                    raw[r + rng.randrange(n)] = rng.randrange(256)
        else:            # the chunk cut inside a record
            raw = raw[:max(8, (r + 8) // 8 * 8)]
        case(f"record change in chunk at {off} (kind {kind})", with_chunk(data, off, zbytes, raw))

    failed = 0
    for i, (what, blob, may_pass) in enumerate(cases):
        open(path, "wb").write(blob)
        failed += check(maya, path, what, valgrind=False, may_pass=may_pass)
    for i, (what, blob, may_pass) in enumerate(cases[:: max(1, len(cases) // max(nvalgrind, 1))][:nvalgrind]):
        open(path, "wb").write(blob)
        check(maya, path, what + " (valgrind)", valgrind=True, may_pass=may_pass)
    print(f"{len(cases)} damaged traces: {failed} refused with a message, none crashed"
          + (f"; {nvalgrind} under valgrind clean" if nvalgrind else ""))


if __name__ == "__main__":
    main()
