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
# shellcheck source=tests/tap.sh
. "$RG_SRCDIR/tests/tap.sh"

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
# A changed YAML document keeps every line inject did not change: diff of
# input and output shows additions only, and changed lines only where a
# line had to change: an args line or an args item (a flag turned on),
# shareProcessNamespace (set to true), a key whose null value became a
# block collection ("volumes:", "annotations: ~"), and a line holding a
# flow collection that got an item ("volumes: [{name: data}]", a JSON
# document, which is written whole). A document whose note says it was
# written whole is not held to it.
minimal=0
for input in *.yaml; do
	case=${input%.*}
	[ -f "$case.out" ] && ! cmp -s "$input" "$case.out" || continue
	grep -q "written whole" "$case.err" 2>/dev/null && continue
	diff "$input" "$case.out" | awk '
		/^[0-9]/ { hunk = $0; next }
		/^</ && $0 !~ /args:|^< *- |shareProcessNamespace:|[[{]|: *(~|null)? *(#.*)?\r?$/ { bad = 1; print hunk ": " $0 }
		END { exit bad }' >"$tmp/minimal"
	rc=$?
	check $rc "$case: diff of input and output holds only additions and the lines that had to change" "$tmp/minimal"
	[ "$rc" = 0 ] && minimal=$((minimal + 1))
done
printf '# %d changed cases keep every other line of their input\n' "$minimal"
# Documents inject leaves alone come out as they went in, comments and all.
"$bin" inject passthrough.yaml 2>/dev/null | cmp -s - passthrough.yaml
check $? "passthrough.yaml comes out byte for byte"
tap_done
