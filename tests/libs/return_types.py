#!/usr/bin/env python3
"""Print the return type of every function a library's headers declare.

usage: return_types.py INCLUDE_DIR HEADER... < names
Reads symbol names (one a line) and prints "name<TAB>return type" for each,
with "?" when no header declares it (a library's internal exports). Each
header is preprocessed on its own as C++ (some declarations, e.g.
cublasHgemm, exist only for C++), so headers that exclude one another
(cublas.h and cublas_v2.h) can both be read."""
import re
import subprocess
import sys

inc, headers = sys.argv[1], sys.argv[2:]
decls = {}
for h in headers:
    pp = subprocess.run(["g++", "-E", "-P", "-I" + inc, "-x", "c++", "-"], input=f"#include <{h}>\n",
                        capture_output=True, text=True, check=True).stdout
    pp = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", pp)
    pp = re.sub(r"\s+", " ", pp)
    for d in re.split(r"[;{}]", pp):
        m = re.match(r"^\s*(?:extern\s+(?:\"C\"\s*)?)?(.*?)\b(\w+)\s*\((.*)\)\s*(?:noexcept)?\s*$", d)
        if not m or "(" in m.group(1) or not m.group(1).strip():
            continue
        ret = re.sub(r"\b(static|inline|extern|__inline__)\b", "", m.group(1)).strip()
        if ret and ret not in ("return", "typedef") and not ret.startswith("typedef"):
            decls.setdefault(m.group(2), re.sub(r"\s+", " ", ret))
for line in sys.stdin:
    name = line.strip()
    if name and not name.startswith("#"):
        print(f"{name}\t{decls.get(name, '?')}")
