#!/bin/sh
# Print a C table of an enum's names, values and first doc sentence from a
# CUDA header, so error-name lookups cover every code the headers define.
# usage: gen_enum_names.sh HEADER "enum NAME" > out.inc
# Output lines: { "cudaErrorInvalidValue", 1, "This indicates that ..." },
set -eu
awk -v want="$2" '
    index($0, want) == 1 || ($0 ~ "^" want "[ {]*$") { inside = 1; next }
    inside && /^[ \t]*};/ { exit }
    inside && /\/\*\*/ { doc = $0; collecting = ($0 !~ /\*\//); next_doc(); next }
    inside && collecting { doc = doc " " $0; if ($0 ~ /\*\//) collecting = 0; next_doc(); next }
    inside && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*=/ {
        line = $0; sub(/\/\/.*/, "", line); sub(/\/\*.*/, "", line)
        split(line, p, "="); name = p[1]; val = p[2]
        gsub(/[ \t,]/, "", name); gsub(/[ \t,]/, "", val)
        d = clean; clean = ""
        printf "    { \"%s\", %s, \"%s\" },\n", name, val, d
    }
    function next_doc(   t) {
        if (collecting) return
        t = doc; gsub(/\/\*\*<?|\*\//, "", t); gsub(/ \* /, " ", t); gsub(/^ *\* */, "", t); gsub(/[ \t]+/, " ", t); gsub(/"/, "\\\"", t)
        gsub(/\\[a-z]+ /, "", t); gsub(/::/, "", t); sub(/^ /, "", t)
        if (match(t, /\. /)) t = substr(t, 1, RSTART)
        clean = t
    }
' "$1"
