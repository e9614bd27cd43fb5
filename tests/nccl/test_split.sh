#!/usr/bin/env bash
# ncclCommSplit (colors, keys ordering the new ranks, NCCL_SPLIT_NOCOLOR, a
# split of a split) and ncclCommShrink on 4 ranks in 4 processes: the new
# communicators' sizes and ranks, all-gathers of world ranks and sums are
# checked on the host; every member of a new communicator traces the same
# id, its parent's id, its color and key; the operations match.
. "$MAYA_TOP/tests/lib.sh"
. "$MAYA_TOP/tests/nccl/launch.sh"
export MAYA_NCCL_TIMEOUT=60

out=$TEST_TMP/job
mrun 4 "$out" "$WORKLOADS/nccl_split"
for r in 0 1 2 3; do
    expect_grep "^nccl_split rank $r: [0-9]+ checks, 0 failed" "$out/logs/rank-$r.out"
done
# world, 2 halves, tail, 2 agains, shrunk: 7 communicators, 2 collectives each
expect_matched "$out/traces" 14 2 7
d=$out/traces.dump
# ids as "parent=" prints them (no leading zeros; "id=" pads to 16 digits)
ids() { sed 's/.* id=0x0*\([0-9a-f][0-9a-f]*\) .*/0x\1/' | sort -u; }
id_of() { grep "^comm .*$1" "$d" | ids; }
world=$(id_of "parent=0x0 ")
expect_eq "$(echo "$world" | wc -l)" 1 "one world communicator"
# halves: color = rank % 2, key = -rank, so world rank 2 is rank 0 of color 0
expect_count 4 "^comm .*rank=[01]/2 .*parent=$world color=[01] key=(0|-[123])$" "$d"
expect_grep "^comm .*rank=0/2 .*parent=$world color=0 key=-2$" "$d"
expect_grep "^comm .*rank=1/2 .*parent=$world color=1 key=-1$" "$d"
expect_eq "$(grep -E "^comm .*parent=$world color=[01] key=(0|-)" "$d" | ids | wc -l)" 2 \
    "two halves, each with its own id"
# tail: rank 0 took NCCL_SPLIT_NOCOLOR
expect_count 3 "^comm .*rank=[012]/3 .*parent=$world color=0 key=[123]$" "$d"
# the halves split again: parent is a half
for half in $(grep -E "^comm .*parent=$world color=[01] key=(0|-)" "$d" | ids); do
    expect_count 2 "^comm .*rank=[01]/2 .*parent=$half color=0 key=0$" "$d"
done
# shrunk: 3 ranks, parent world, not split
expect_count 3 "^comm .*rank=[012]/3 .*parent=$world color=-1 key=-1$" "$d"
