#!/bin/bash
# rearguard explain against the cases in cases/: for each CASE.json or
# CASE.yaml (options in CASE.args, one line of words), the first item of
# its -o json report must have the verdict, reason and container of
# CASE.verdict ("hung runs-on cloud-sql-proxy"; "-" for no container), the
# exit status must be 1 for any verdict but fine and 0 for fine, and the
# text report must equal CASE.out. A CASE.err instead of CASE.verdict is
# bad input: exit status 2, nothing on standard output, and one line on
# standard error that holds CASE.err's text.
#
# The cluster-*.json were taken from the 1.20 cluster by
# tests/cluster/explain.sh (RG_EXPLAIN_CAPTURE), each .verdict written
# before; the others were written by hand (docs/explain.md says which).
# RG_BLESS=1 rewrites the CASE.out files from what the binary prints now.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"

bin=$RG_BUILDDIR/rearguard
cd "$RG_SRCDIR/tests/explain/cases" || exit 1
tmp=$(mktemp -d /tmp/rg-explain.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. "$RG_SRCDIR/tests/tap.sh"

for input in *.json *.yaml; do
	[ -f "$input" ] || continue
	case=${input%.*}
	args=()
	# shellcheck disable=SC2207 # the words of one line
	[ -f "$case.args" ] && args=($(cat "$case.args"))
	if [ -f "$case.err" ]; then
		"$bin" explain "${args[@]}" "$input" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF "$(cat "$case.err")" "$tmp/err"
		check $? "$case: bad input, exit $rc: $(cat "$tmp/err")" "$tmp/err"
		continue
	fi
	"$bin" explain -o json "${args[@]}" "$input" >"$tmp/json" 2>"$tmp/err"
	rc=$?
	want=$(cat "$case.verdict")
	got=$(/usr/bin/python3 -c '
import json, sys
it = json.load(open(sys.argv[1]))["items"][0]
print(it["verdict"], it["reason"], it["container"] or "-")' "$tmp/json" 2>&1)
	[ "$got" = "$want" ]
	check $? "$case: $got" "$tmp/json"
	case $want in fine*) wrc=0 ;; *) wrc=1 ;; esac
	[ "$rc" = "$wrc" ]
	check $? "$case: exit status $rc" "$tmp/err"
	"$bin" explain "${args[@]}" "$input" >"$tmp/text" 2>"$tmp/err"
	if [ "${RG_BLESS:-}" ]; then
		cp "$tmp/text" "$case.out"
	fi
	diff -u "$case.out" "$tmp/text" >"$tmp/diff"
	check $? "$case: the text report" "$tmp/diff"
done

# A must-gather dump: a directory of manifests, nested, with other files
# beside them. Its report is that of its manifests named in the order of
# their paths; a directory with none is bad input.
mkdir -p "$tmp/dump/namespaces/batch/core" "$tmp/dump/namespaces/batch/batch" "$tmp/dump/cluster"
cp cluster-plain-proxy.json "$tmp/dump/namespaces/batch/core/pods.json"
cp cluster-job-running.json "$tmp/dump/namespaces/batch/batch/jobs.json"
cp cluster-stop-404.json "$tmp/dump/cluster/pods.yaml"
echo "gathered at 02:00" >"$tmp/dump/timestamp"
"$bin" explain --all "$tmp/dump" >"$tmp/dir" 2>"$tmp/err"
rc_dir=$?
"$bin" explain --all "$tmp/dump/cluster/pods.yaml" "$tmp/dump/namespaces/batch/batch/jobs.json" \
	"$tmp/dump/namespaces/batch/core/pods.json" >"$tmp/files" 2>&1
rc_files=$?
[ "$rc_dir" = "$rc_files" ] && diff -u "$tmp/files" "$tmp/dir" >"$tmp/diff"
check $? "a directory: its manifests, recursively, in the order of their paths (exit $rc_dir)" "$tmp/diff"
mkdir -p "$tmp/empty/logs" && echo x >"$tmp/empty/logs/a.log"
"$bin" explain "$tmp/empty" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && grep -q "holds no .json, .yaml or .yml file" "$tmp/err"
check $? "a directory without manifests: exit $rc, $(cat "$tmp/err")" "$tmp/err"

tap_done
