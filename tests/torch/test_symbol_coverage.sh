#!/usr/bin/env bash
# Every CUDA-library symbol the installed PyTorch imports resolves in maya's
# stand-in libraries, with the version node it asks for; fails naming each
# one that does not, so the next torch release's needs show at once.
#
# What counts as a CUDA import: the undefined dynamic symbols of torch's
# libraries (torch/lib/*.so, torch/_C*.so) that no other library of the
# process defines (torch's own, the system's, Python's). Versioned imports
# (cudaMalloc@libcudart.so.13) must be defined under that version node;
# unversioned ones (NCCL, the driver, cuFile, cuSPARSELt) under any.
# Also checked: every CUDA library torch lists as NEEDED exists in maya's
# library folder; the driver functions Triton's run-time launcher calls exist
# in libcuda.so.1; NVML is either absent or complete (c10 dlopens
# libnvidia-ml.so.1 and then requires every function it names).
. "$MAYA_TOP/tests/lib.sh"

py=$MAYA_TOP/.venv/bin/python
[ -x "$py" ] || fail "no $py: run scripts/venv.sh (make test does)"
# Locate the packages without importing them (importing needs the CUDA libraries).
site=$("$py" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])') ||
    fail "torch is not installed in .venv"
triton=$("$py" -c 'import importlib.util as u; print(u.find_spec("triton").submodule_search_locations[0])') ||
    fail "triton is not installed in .venv"

# The libraries torch loads: its extension module, the ones it opens itself
# (global deps at import, CUDA linear algebra, NVRTC and NVSHMEM glue on
# first use), and everything of torch/lib these need.
torch_libs=()
queue=("$site"/_C*.so "$site"/lib/libtorch_global_deps.so "$site"/lib/libtorch_cuda_linalg.so
       "$site"/lib/libcaffe2_nvrtc.so "$site"/lib/libtorch_nvshmem.so)
while [ ${#queue[@]} -gt 0 ]; do
    l=${queue[0]}
    queue=("${queue[@]:1}")
    [ -e "$l" ] || fail "expected $l in the installed torch"
    case " ${torch_libs[*]} " in *" $l "*) continue ;; esac
    torch_libs+=("$l")
    for so in $(readelf -d "$l" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [ -e "$site/lib/$so" ] && queue+=("$site/lib/$so")
    done
done
[ ${#torch_libs[@]} -ge 8 ] || fail "expected torch's libraries in $site/lib, found ${#torch_libs[@]}"
echo "torch libraries checked: $(for l in "${torch_libs[@]}"; do printf '%s ' "${l##*/}"; done)"
ls "$MAYA_LIBS"/*.so* >/dev/null 2>&1 || fail "no stand-in libraries in $MAYA_LIBS: build first"

t=$TEST_TMP

# 1. The sonames torch needs: those found neither in torch/lib nor on the
#    system are the CUDA libraries maya must provide.
for l in "${torch_libs[@]}"; do readelf -d "$l" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done | sort -u > "$t/needed"
: > "$t/cuda_sonames"
: > "$t/system_libs"
while read -r so; do
    if [ -e "$site/lib/$so" ]; then
        continue
    fi
    # The toolkit's own libraries may be on the system path: they are CUDA.
    sys=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
    [ -n "$sys" ] && sys=$(readlink -f "$sys")
    if [ -n "$sys" ] && [ "${sys#/usr/local/cuda}" = "$sys" ]; then
        echo "$sys" >> "$t/system_libs"
    else
        echo "$so" >> "$t/cuda_sonames"
    fi
done < "$t/needed"
echo "CUDA libraries torch links: $(tr '\n' ' ' < "$t/cuda_sonames")"
grep -qx libcudart.so.13 "$t/cuda_sonames" || fail "expected libcudart.so.13 among torch's CUDA libraries"
missing_libs=()
while read -r so; do
    [ -e "$MAYA_LIBS/$so" ] || missing_libs+=("$so")
done < "$t/cuda_sonames"

# 2. Symbols defined outside the CUDA libraries: torch's own libraries, the
#    system libraries they need (and theirs), and the Python interpreter.
pyexe=$(readlink -f "$py")
others=("${torch_libs[@]}" "$pyexe")
while read -r lib; do others+=("$lib"); done < <(
    { cat "$t/system_libs"; ldd "$pyexe" | awk '$3 ~ /^\// { print $3 }'; } | sort -u)
for l in "${others[@]}"; do
    nm -D --defined-only "$l" 2>/dev/null | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }'
done | sort -u > "$t/defined_elsewhere"

# 3. torch's undefined imports (strong only: weak ones need not resolve),
#    as "name version importer"; version "-" when unversioned.
for l in "${torch_libs[@]}"; do
    nm -D --undefined-only --with-symbol-versions "$l" |
        awk -v lib="${l##*/}" '$1 == "U" { n = $2; v = "-"; i = index(n, "@");
            if (i) { v = substr(n, i + 1); n = substr(n, 1, i - 1) } print n, v, lib }'
done | sort -u > "$t/imports"
# Versioned imports name their library; keep those whose version node is not
# a system one, and unversioned ones no other library defines.
awk 'NR == FNR { def[$1] = 1; next }
     $2 ~ /^(GLIBC|GLIBCXX|CXXABI|GCC|GOMP|OMP|ZLIB)_/ { next }
     $2 == "-" && ($1 in def) { next }
     $2 == "-" && $1 ~ /^_?Py|^_Py/ { next }
     { print }' "$t/defined_elsewhere" "$t/imports" > "$t/cuda_imports"

# 4. What maya's libraries define: "name version" (version "-" if none).
for l in "$MAYA_LIBS"/lib*.so*; do
    [ -L "$l" ] && continue
    nm -D --defined-only --with-symbol-versions "$l" |
        awk '$2 != "A" { n = $3; v = "-"; i = index(n, "@");
            if (i) { v = substr(n, i); sub(/^@+/, "", v); n = substr(n, 1, i - 1) } print n, v }'
done | sort -u > "$t/maya_defined"

awk 'NR == FNR { have[$1 " " $2] = 1; any[$1] = 1; next }
     $2 == "-" && ($1 in any) { next }
     $2 != "-" && (($1 " " $2) in have) { next }
     { print ($2 == "-" ? $1 : $1 "@" $2) "  (imported by " $3 ")" }' \
    "$t/maya_defined" "$t/cuda_imports" > "$t/missing"

ncuda=$(awk '{ print $1, $2 }' "$t/cuda_imports" | sort -u | wc -l)
echo "CUDA symbols torch imports: $ncuda"
awk '{ print $2 }' "$t/cuda_imports" | sort | uniq -c | sed 's/^/    /'
[ "$ncuda" -gt 500 ] || fail "expected several hundred CUDA imports, found $ncuda (is the listing broken?)"

# 5. Triton's launcher (compiled at run time against libcuda) calls these
#    driver functions by name: the real driver API's names it uses.
grep -ohE '\bcu[A-Z][A-Za-z0-9_]+' "$triton/backends/nvidia/driver.c" "$triton/backends/nvidia/driver.py" |
    sort -u > "$t/triton_names"
nm -D --defined-only /usr/local/cuda/lib64/stubs/libcuda.so | awk '{ print $3 }' | sort -u > "$t/driver_api"
comm -12 "$t/triton_names" "$t/driver_api" > "$t/triton_calls"
[ -s "$t/triton_calls" ] || fail "expected driver calls in Triton's launcher source, found none"
awk '{ print $1 }' "$t/maya_defined" | sort -u > "$t/maya_names"
comm -23 "$t/triton_calls" "$t/maya_names" | sed 's/$/  (called by Triton'"'"'s launcher)/' >> "$t/missing"

# 6. NVML: none, or every function torch names.
if [ -e "$MAYA_LIBS/libnvidia-ml.so.1" ]; then
    strings -a "$site"/lib/libc10_cuda.so "$site"/lib/libtorch_cuda.so | grep -oE '^nvml[A-Z][A-Za-z0-9_]+$' |
        sort -u > "$t/nvml_names"
    nm -D --defined-only "$MAYA_LIBS/libnvidia-ml.so.1" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u > "$t/nvml_have"
    comm -23 "$t/nvml_names" "$t/nvml_have" | sed 's/$/  (NVML, dlopened by c10)/' >> "$t/missing"
fi

status=0
if [ ${#missing_libs[@]} -gt 0 ]; then
    echo "FAIL: CUDA libraries torch needs that maya does not build: ${missing_libs[*]}" >&2
    status=1
fi
if [ -s "$t/missing" ]; then
    echo "FAIL: $(wc -l < "$t/missing") CUDA symbols torch imports that maya's libraries do not define:" >&2
    sort "$t/missing" >&2
    status=1
fi
[ $status = 0 ] && echo "all $ncuda CUDA imports of torch $("$py" -c 'import importlib.metadata as m; print(m.version("torch"))') resolve in maya's libraries"
exit $status
