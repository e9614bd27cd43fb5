#!/usr/bin/env bash
# make install PREFIX= DESTDIR= lays out bin/maya, lib/maya/ (stand-in
# libraries), lib/slurm/spank_maya.so, share/maya/ (hwspecs, models) and
# share/man/; the installed maya works from there alone (no build tree), and
# reads the installation's etc/maya.conf.
. "$MAYA_TOP/tests/lib.sh"
dest=$TEST_TMP/dest prefix=/opt/maya-test
make -s -C "$MAYA_TOP" install PREFIX=$prefix DESTDIR="$dest" > "$TEST_TMP/install.out" 2>&1 ||
    fail "make install failed: $(cat "$TEST_TMP/install.out")"
root=$dest$prefix
for f in bin/maya lib/maya/libcudart.so.13 lib/maya/libcuda.so.1 lib/maya/libmaya-core.so \
         lib/maya/libcublas.so.13 lib/maya/libcudnn.so.9 lib/maya/libnccl.so.2 lib/maya/maya-launch \
         lib/slurm/spank_maya.so share/maya/hwspecs/gpus/h100-sxm.conf share/man/man1/maya.1 \
         share/man/man1/maya-srun.1 share/man/man5/maya.conf.5 share/man/man5/maya-hwspec.5; do
    [ -e "$root/$f" ] || fail "make install did not install $f"
done
[ -L "$root/lib/maya/libcuda.so" ] || fail "libcuda.so should be installed as a link to libcuda.so.1"
[ -n "$(ls -A "$root/share/maya/models" 2>/dev/null)" ] || fail "no trained models installed"
MANPATH=$root/share/man man -w maya-srun > /dev/null 2>&1 || fail "man maya-srun does not find the installed page"

# The installed maya finds its own libraries and data (no MAYA_DATA_DIR or
# MAYA_HWSPEC_DIR pointing at the build tree).
mkdir -p "$root/etc"
printf 'gpus = "a100x2"\n' > "$root/etc/maya.conf"
env -u MAYA_DATA_DIR -u MAYA_HWSPEC_DIR HOME="$TEST_TMP" XDG_CONFIG_HOME= LD_LIBRARY_PATH= \
    "$root/bin/maya" run -q -o "$TEST_TMP/run" -- "$WORKLOADS/vector_add" 4096 > "$TEST_TMP/run.out" 2>&1 ||
    fail "the installed maya run failed: $(cat "$TEST_TMP/run.out")"
expect_grep '"gpu": "A100-SXM4-80GB"' "$TEST_TMP/run/report.json" "the installation's etc/maya.conf was not read"
expect_grep '"world_size": 2' "$TEST_TMP/run/report.json"
expect_grep "vector_add n=4096 .*: ok" "$TEST_TMP/run/logs/rank-1.out"
dump "$TEST_TMP/run/traces/rank-0.mtrace" > "$TEST_TMP/dump"
expect_grep "^end .*unsupported_calls=0" "$TEST_TMP/dump"
# The ranks get the installed libraries first, not the build tree's.
env HOME="$TEST_TMP" XDG_CONFIG_HOME= LD_LIBRARY_PATH= "$root/bin/maya" run -q -o "$TEST_TMP/env" -- \
    sh -c 'echo "lib=${LD_LIBRARY_PATH%%:*}"' > /dev/null 2>&1 || true
expect_grep "^lib=$root/lib/maya\$" "$TEST_TMP/env/logs/rank-0.out"
