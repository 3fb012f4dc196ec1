#!/bin/bash
# bench/review-walk.sh counts the functions a review passes through, the
# figure docs/modules.md gives for the walk. It lists the same functions
# wherever it is run from (callgrind_annotate names files relative to the
# directory it runs in), the static ones included: yamldoc-json.c's value is
# one (recursive: never inlined), review_answer an exported one.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?RG_BUILDDIR is set by make check}"
command -v valgrind >/dev/null || { echo "SKIP: review-walk: no valgrind (tools/deps valgrind)"; exit 77; }
# valgrind cannot run a program built with AddressSanitizer.
[[ $("$RG_BUILDDIR/rearguard" --version 2>&1) != *asan* ]] || { echo "SKIP: review-walk: a sanitized build (valgrind cannot run it)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
walk() { RG_BUILDDIR=$RG_BUILDDIR "$RG_SRCDIR/bench/review-walk.sh" --list; }
(cd "$RG_SRCDIR" && walk) >"$tmp/tree" 2>&1 || { echo "FAIL: review-walk: failed in the tree: $(tail -n 3 "$tmp/tree")"; exit 1; }
(cd "$tmp" && walk) >"$tmp/elsewhere" 2>&1 || { echo "FAIL: review-walk: failed elsewhere: $(tail -n 3 "$tmp/elsewhere")"; exit 1; }
cmp -s "$tmp/tree" "$tmp/elsewhere" || {
	echo "FAIL: review-walk: run in the tree: $(tail -n 1 "$tmp/tree"); elsewhere: $(tail -n 1 "$tmp/elsewhere")"
	exit 1
}
for fn in "yamldoc-json.c value" "review.c review_answer" "yamldoc-json.c ydoc_parse_json_some"; do
	grep -qx "$fn" "$tmp/tree" || { echo "FAIL: review-walk: $fn is not listed"; exit 1; }
done
echo "PASS: review-walk: $(tail -n 1 "$tmp/tree"), the same from the tree and from elsewhere"
