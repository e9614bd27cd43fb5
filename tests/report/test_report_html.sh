#!/usr/bin/env bash
# report.html in a real browser (headless Chromium): a 4-rank NCCL job and a
# 1,024-rank job built from text; the page, as Chromium rendered it and ran
# its script, shows the figures report.json holds (check_html.py), each
# breakdown bar adds up to the iteration, a large job's page stays small
# (grouped bars), a failed run's headline is the failure; screenshots are
# kept in tests/out/.
. "$MAYA_TOP/tests/lib.sh"

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || fail "no chromium: scripts/deps.sh installs Debian's (apt-get install chromium)"
shots=$MAYA_TOP/tests/out
mkdir -p "$shots"
# Chromium wants a writable home and no sandbox when run as root in a container.
export HOME=$TEST_TMP/home
mkdir -p "$HOME"
chrome() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --user-data-dir="$TEST_TMP/profile" "$@" 2>>"$TEST_TMP/chromium.log"
}
check_page() { # DIR SHOT [check_html options]
    local dir=$1 shot=$2
    shift 2
    [ -s "$dir/report.html" ] || fail "no report.html in $dir"
    grep -qiE '<(script|link|img)[^>]+(src|href)=' "$dir/report.html" &&
        fail "report.html loads something from outside the page"
    chrome --dump-dom "file://$dir/report.html" > "$TEST_TMP/dom.html" || fail "chromium could not open $dir/report.html"
    python3 "$MAYA_TOP/tests/report/check_html.py" "$TEST_TMP/dom.html" "$dir/report.json" "$@" ||
        fail "report.html of $dir disagrees with report.json (above)"
    chrome --window-size=1100,1600 --screenshot="$shots/$shot" "file://$dir/report.html" > /dev/null ||
        fail "chromium could not take a screenshot of $dir/report.html"
    [ -s "$shots/$shot" ] || fail "no screenshot $shots/$shot"
}

# a real job: four ranks of NCCL collectives
d=$TEST_TMP/nccl
"$MAYA" run -q -g h100x4 -o "$d" -- "$WORKLOADS/nccl_colls" > "$TEST_TMP/out" 2>&1 ||
    fail "maya run nccl_colls failed: $(cat "$TEST_TMP/out")"
expect_grep "^files      report.html" "$d/report.txt"
check_page "$d" report_html_nccl.png
# the slowest op of the iteration found (the program is no loop: which
# collectives repeat as one is the iteration finder's choice) is on the page
slowest=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["slowest_ops"][0]["name"])' "$d/report.json")
case "$slowest" in nccl*) ;; *) fail "the slowest op of nccl_colls is $slowest, not a collective" ;; esac
expect_grep "$slowest" "$d/report.html"

# the checker fails on a page that disagrees with its report.json
python3 - "$d/report.json" "$TEST_TMP/wrong.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["slowest_ops"][0]["time_per_iteration_s"] *= 1.5
json.dump(r, open(sys.argv[2], "w"))
PY
if python3 "$MAYA_TOP/tests/report/check_html.py" "$TEST_TMP/dom.html" "$TEST_TMP/wrong.json" > "$TEST_TMP/out" 2>&1; then
    fail "check_html.py accepted a page that disagrees with report.json"
fi
expect_grep "op $slowest: the page shows" "$TEST_TMP/out"

# a failed run: the headline is the failure, and no iteration time
sed -i 's/^rank\.1\.exit=0$/rank.1.exit=3/' "$d/run.conf"
"$MAYA" report -q "$d" > "$TEST_TMP/out" 2>&1
expect_eq "$?" 1 "maya report on a failed run"
check_page "$d" report_html_failed.png
expect_grep 'id="headline" class="failed"[^>]*>FAILED: 1 of 4 processes failed; rank 1: exit 3' "$d/report.html"

# 1,024 ranks on 128 nodes: tensor-parallel all-reduces in each node, a
# data-parallel one over all; rank r's GEMMs are (1 + r % 3) x longer
b=$TEST_TMP/big
mkdir -p "$b/traces" "$TEST_TMP/txt"
python3 - "$TEST_TMP/txt" "$b/run.conf" <<'PY'
import sys
n, out = 1024, sys.argv[1]
for r in range(n):
    L = [f"header rank={r} world_size={n} local_rank={r % 8} node={r // 8} gpus_per_node=8 gpu=H100-SXM",
         "stream id=1 dev=0", f"comm id=0x77 rank={r} nranks={n}",
         f"comm id=0x{0x1000 + r // 8:x} rank={r % 8} nranks=8"]
    t = 0
    for it in range(4):
        for layer in range(3):
            L.append(f"gemm t={t}us..{t + 5}us stream=1 api=cublasSgemm_v2 m=2048 n=2048 k={1024 * (1 + r % 3)}")
            L.append(f"coll t={t + 10}us..{t + 15}us stream=1 op=allreduce comm=0x{0x1000 + r // 8:x} "
                     f"cseq={it * 3 + layer} rank={r % 8} nranks=8 count=4M")
            t += 20
        L.append(f"coll t={t}us..{t + 5}us stream=1 op=allreduce comm=0x77 cseq={it} rank={r} nranks={n} count=16M")
        L.append(f"sync t={t + 10}us..{t + 15}us sync=device")
        t += 20
    open(f"{out}/rank-{r}.txt", "w").write("\n".join(L) + "\n")
with open(sys.argv[2], "w") as f:
    f.write(f"version=1\nlauncher=test\ngpu=H100-SXM\ngpu_count=8\nnprocs={n}\ncommand=tp8-dp128\n")
    f.writelines(f"rank.{r}.exit=0\n" for r in range(n))
PY
for r in $(seq 0 1023); do echo "$TEST_TMP/txt/rank-$r.txt" "$b/traces/rank-$r.mtrace"; done |
    xargs "$MAYA" trace build || fail "maya trace build failed"
cat > "$TEST_TMP/c.conf" <<'CONF'
cluster "h100x128" {
    gpu = "H100-SXM"
    gpus_per_node = 8
    nodes = 128
    intra_node = "nvswitch"
    intra_latency_us = 3
    nics_per_node = 8
    nic_gbps = 400
    nic_latency_us = 5
}
CONF
"$MAYA" report -q --cluster "$TEST_TMP/c.conf" "$b" > "$TEST_TMP/out" 2>&1 ||
    fail "maya report on 1,024 ranks failed: $(cat "$TEST_TMP/out")"
size=$(stat -c %s "$b/report.html")
[ "$size" -lt 200000 ] || fail "report.html of 1,024 ranks is $size bytes (expected under 200 kB)"
check_page "$b" report_html_1024.png --max-bars 66
expect_grep 'ranks 0-15' "$b/report.html"
expect_grep '1024 ranks in 64 bars' "$b/report.html"
# the rank with the most work is one whose GEMMs are the longest (r % 3 == 2)
most=$(grep -o 'rank [0-9]* (most work)' "$b/report.html" | head -1 | awk '{print $2}')
[ -n "$most" ] && [ $((most % 3)) = 2 ] || fail "the rank with the most work is '$most', expected one with r % 3 == 2"
python3 - "$b/report.json" <<'PY' || fail "report.json of 1,024 ranks is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["gpus_used"] == 1024, r["gpus_used"]
assert len(r["communicators"]) == 129, len(r["communicators"])
big = [c for c in r["communicators"] if c["size"] == 1024]
assert len(big) == 1 and big[0]["calls_per_iteration"] == 1, big
PY
exit 0
