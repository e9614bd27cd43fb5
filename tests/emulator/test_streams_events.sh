#!/usr/bin/env bash
# Several streams with events and host callbacks: the program checks that
# host functions run in stream order and before the synchronisation that
# waits for them returns; the trace has each stream with its flags and
# priority, every host function in its stream, the event records and the
# cross-stream wait with matching versions, and the synchronisations.
. "$MAYA_TOP/tests/lib.sh"

RANK=0 emu "$TEST_TMP/tr" "$WORKLOADS/streams_events" > "$TEST_TMP/out" 2>&1 ||
    fail "streams_events failed: $(cat "$TEST_TMP/out")"
expect_grep "streams_events: 7 host functions in order: ok" "$TEST_TMP/out"
d=$TEST_TMP/dump
dump "$TEST_TMP/tr/rank-0.mtrace" > "$d"
expect_grep '^stream +id=1 dev=0 priority=0$' "$d" "a blocking stream"
expect_grep '^stream +id=2 dev=0 priority=0 non_blocking$' "$d" "a non-blocking stream"
expect_grep '^stream +id=3 dev=0 priority=-5 non_blocking$' "$d" "the high-priority stream"
expect_count 6 '^launch .*kernel="scale\(float\*, float, int\)"' "$d"
expect_count 3 '^host_func .*api=cudaStreamAddCallback result=0' "$d"
expect_count 4 '^host_func .*api=cudaLaunchHostFunc result=0' "$d"
# stream 0's query sees its sleeping host function unfinished
expect_grep '^call .*stream=1 api=cudaStreamQuery result=600' "$d"
# event 1 recorded on stream 1 (version 1), waited for on stream 2
expect_grep '^event_record .*stream=1 api=cudaEventRecord result=0 event=1 version=1' "$d"
expect_grep '^stream_wait .*stream=2 api=cudaStreamWaitEvent result=0 event=1 version=1' "$d"
expect_grep '^sync .*api=cudaStreamSynchronize result=0 sync=stream target=1' "$d"
expect_grep '^sync .*api=cudaEventSynchronize result=0 sync=event target=3 version=1' "$d"
expect_grep '^sync .*api=cudaDeviceSynchronize result=0 sync=device' "$d"
# the sync of stream 1 waited for its 200 ms host function: host time, not hidden
t=$(grep -E '^sync .*api=cudaStreamSynchronize' "$d" | sed -E 's/.* t=([0-9]+)\.\.([0-9]+) .*/\1 \2/')
set -- $t
[ $(( $2 - $1 )) -ge 150000000 ] || fail "cudaStreamSynchronize returned before its host function ran ($t)"
expect_grep '^end .*unsupported_calls=0 oom=0' "$d"
