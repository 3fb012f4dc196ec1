#!/bin/bash
# rearguard inject against the golden files in cases/: for each
# CASE.yaml or CASE.json (options in CASE.args, one a line), standard output must equal
# CASE.out byte for byte, standard error CASE.err, and the exit status
# CASE.rc (0 when absent); a failed run writes nothing to standard output.
# Every output is injected once more and must come back byte for byte the
# same (injecting twice equals injecting once).
#
# RG_BLESS=1 rewrites the expected files from what the binary does now;
# review the diff before committing it.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"

bin=$RG_BUILDDIR/rearguard
cd "$RG_SRCDIR/tests/inject/cases" || exit 1
tmp=$(mktemp -d /tmp/rg-golden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		printf 'ok %d - %s\n' "$n" "$2"
	else
		printf 'not ok %d - %s\n' "$n" "$2"
		failed=$((failed + 1))
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | head -n 40
	fi
}

for input in *.yaml *.json; do
	case=${input%.*}
	args=()
	[ -f "$case.args" ] && mapfile -t args <"$case.args"
	"$bin" inject "${args[@]}" "$input" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "${RG_BLESS:-}" ]; then
		if [ "$rc" = 0 ]; then cp "$tmp/out" "$case.out"; else rm -f "$case.out"; fi
		if [ -s "$tmp/err" ]; then cp "$tmp/err" "$case.err"; else rm -f "$case.err"; fi
		if [ "$rc" = 0 ]; then rm -f "$case.rc"; else echo "$rc" >"$case.rc"; fi
	fi
	want_rc=0
	[ -f "$case.rc" ] && want_rc=$(cat "$case.rc")
	[ "$rc" = "$want_rc" ]
	check $? "$case: exit status $rc (want $want_rc)" "$tmp/err"
	if [ "$want_rc" = 0 ]; then
		diff -u "$case.out" "$tmp/out" >"$tmp/diff" 2>&1
		check $? "$case: output as $case.out" "$tmp/diff"
		"$bin" inject "${args[@]}" - <"$tmp/out" >"$tmp/again" 2>/dev/null
		cmp -s "$tmp/out" "$tmp/again"
		check $? "$case: injecting the output again changes nothing"
	else
		[ ! -s "$tmp/out" ]
		check $? "$case: nothing on standard output after an error"
	fi
	if [ -f "$case.err" ]; then
		diff -u "$case.err" "$tmp/err" >"$tmp/diff" 2>&1
	else
		diff -u /dev/null "$tmp/err" >"$tmp/diff" 2>&1
	fi
	check $? "$case: standard error as expected" "$tmp/diff"
done
# Documents inject leaves alone come out as they went in, comments and all.
"$bin" inject passthrough.yaml 2>/dev/null | cmp -s - passthrough.yaml
check $? "passthrough.yaml comes out byte for byte"
printf '1..%d\n' "$n"
[ "$failed" = 0 ]
