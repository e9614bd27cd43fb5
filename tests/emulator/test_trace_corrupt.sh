#!/usr/bin/env bash
# A truncated or corrupt trace gives an error naming the file and the offset,
# never a crash: the trace of a real run is cut at many offsets, has bits
# flipped, garbage headers, and records changed inside chunks that still pass
# their checksums (tests/emulator/trace_fuzz.py); some cases also run under
# valgrind (memory errors fail the test). A cut trace with --partial reads
# up to its last whole chunk. Chunks of either codec are read.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/graph_capture" > /dev/null || fail "graph_capture failed"
t=$TEST_TMP/tr/rank-0.mtrace
dump "$t" > /dev/null
vg=0
command -v valgrind > /dev/null && vg=12 # installed by scripts/deps.sh
python3 "$MAYA_TOP/tests/emulator/trace_fuzz.py" "$MAYA" "$t" "$TEST_TMP" --valgrind $vg > "$TEST_TMP/out" 2>&1 ||
    fail "$(tail -20 "$TEST_TMP/out")"
cat "$TEST_TMP/out"
expect_grep "damaged traces: [0-9]+ refused with a message, none crashed" "$TEST_TMP/out"

# the exact messages for the common cases
head -c 100 "$t" > "$TEST_TMP/short.mtrace"
"$MAYA" trace dump "$TEST_TMP/short.mtrace" > /dev/null 2> "$TEST_TMP/err" && fail "a 100-byte trace was accepted"
expect_grep "$TEST_TMP/short.mtrace: offset 100: truncated header: expected 128 bytes, found 100" "$TEST_TMP/err"
size=$(stat -c %s "$t")
head -c $((size - 5)) "$t" > "$TEST_TMP/cut.mtrace"
"$MAYA" trace dump "$TEST_TMP/cut.mtrace" > /dev/null 2> "$TEST_TMP/err" && fail "a cut trace was accepted"
expect_grep "$TEST_TMP/cut.mtrace: offset [0-9]+: truncated chunk" "$TEST_TMP/err"
"$MAYA" trace dump --partial "$TEST_TMP/cut.mtrace" > "$TEST_TMP/partial" 2>&1 || fail "--partial refused a cut trace"
expect_grep "^# trace is incomplete" "$TEST_TMP/partial"

# chunks: maya writes Zstandard and reads zlib too (traces written before);
# the same trace with every chunk as zlib dumps the same, and a frame that
# inflates to another size than its chunk says is refused
python3 - "$t" "$TEST_TMP" <<'PY' || fail "could not rewrite the trace's chunks (above)"
import os, struct, sys, zlib
sys.path.insert(0, os.environ["MAYA_TOP"] + "/tests/emulator")
import trace_fuzz as tf
data = open(sys.argv[1], "rb").read()
assert struct.unpack_from("<I", data, tf.HDR)[0] == tf.ZSTD_MAGIC, "maya wrote no Zstandard chunk"
out, bad, off = [data[:tf.HDR]], None, tf.HDR
while off + tf.CHUNK <= len(data):
    magic, raw_bytes, zbytes, crc = struct.unpack_from("<IIII", data, off)
    raw = tf.inflate(magic, data[off + tf.CHUNK:off + tf.CHUNK + zbytes])
    z = zlib.compress(raw, 1)
    out.append(struct.pack("<IIII", tf.ZLIB_MAGIC, len(raw), len(z), crc) + z)
    if bad is None:  # the first chunk claiming 8 bytes more than its frame holds
        bad = data[:off] + struct.pack("<IIII", magic, raw_bytes + 8, zbytes, crc) + data[off + tf.CHUNK:]
    off += tf.CHUNK + zbytes
open(sys.argv[2] + "/zlib.mtrace", "wb").write(b"".join(out))
open(sys.argv[2] + "/size.mtrace", "wb").write(bad)
PY
dump "$t" > "$TEST_TMP/zstd.dump"
dump "$TEST_TMP/zlib.mtrace" > "$TEST_TMP/zlib.dump"
cmp -s "$TEST_TMP/zstd.dump" "$TEST_TMP/zlib.dump" || fail "the trace with zlib chunks dumps otherwise: $(diff "$TEST_TMP/zstd.dump" "$TEST_TMP/zlib.dump" | head -5)"
"$MAYA" trace dump "$TEST_TMP/size.mtrace" > /dev/null 2> "$TEST_TMP/err" && fail "a chunk of the wrong size was accepted"
expect_grep "$TEST_TMP/size.mtrace: offset 128: corrupt chunk: zstd frame of another size" "$TEST_TMP/err"
