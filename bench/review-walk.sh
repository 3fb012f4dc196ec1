#!/bin/bash
# The files and functions of src/ that one AdmissionReview passes through
# on its way to a patch: bench/review-bench answers REVIEW (default
# bench/webhook-review.json) once under valgrind's callgrind, and every
# function of src/ that ran is listed with its file, then counted. Build
# with CFLAGS="-O0 -g" for a count that inlining does not change.
#
#   RG_BUILDDIR=build bench/review-walk.sh [--list] [REVIEW]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RG_BUILDDIR:-$top/build}
list=false
[ "${1:-}" = --list ] && { list=true; shift; }
review=${1:-$top/bench/webhook-review.json}
command -v valgrind >/dev/null || { echo "bench/review-walk.sh: needs valgrind" >&2; exit 2; }
[ -x "$build/bench/review-bench" ] || make -s -C "$build" bench/review-bench
out=$(mktemp)
trap 'rm -f "$out" "$out.fns"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$build/bench/review-bench" "$review" 1 >/dev/null 2>&1
# Run from the tree, callgrind_annotate names its files "src/X.c", not
# "/TOP/src/X.c": both forms are read.
callgrind_annotate --inclusive=yes --threshold=100 "$out" |
	sed -nE 's#(^|.*[[:space:]/])src/([A-Za-z0-9_-]+\.[ch]):([A-Za-z0-9_]+).*#\2 \3#p' | sort -u >"$out.fns"
$list && cat "$out.fns"
awk '{ f[$1]++ } END { for (k in f) printf "%4d %s\n", f[k], k }' "$out.fns" | sort -rn
echo "$(wc -l <"$out.fns") functions in $(cut -d' ' -f1 "$out.fns" | sort -u | wc -l) files"
