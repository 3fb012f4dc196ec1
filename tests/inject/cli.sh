#!/bin/bash
# rearguard inject's command line: --help, every bad usage as one line with
# exit status 2 (a file that cannot be read: 1), the environment twins and
# the flag that wins over them, standard input.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
bin=$RG_BUILDDIR/rearguard
job=$RG_SRCDIR/tests/inject/cases/job-istio-nohold.yaml
tmp=$(mktemp -d /tmp/rg-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then printf 'ok %d - %s\n' "$n" "$2"; else printf 'not ok %d - %s\n' "$n" "$2"; failed=$((failed + 1)); fi
}

# refused RC NEEDLE [ENV=VALUE...] -- ARG...: exit status RC, one line on stderr naming NEEDLE, nothing on stdout.
refused() {
	local rc=$1 needle=$2 envs=() got
	shift 2
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$bin" inject "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" = "$rc" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF -- "$needle" "$tmp/err" && [ ! -s "$tmp/out" ]
	check $? "inject $* ${envs[*]}: exit $got, one line naming '$needle': $(head -c 200 "$tmp/err")"
}

"$bin" inject --help >"$tmp/out" 2>&1
check $? "--help exits 0"
for word in --image --mesh --gate REARGUARD_IMAGE REARGUARD_MESH REARGUARD_GATE ResourceList docs/inject.md; do
	grep -qF -- "$word" "$tmp/out"
	check $? "--help mentions $word"
done
"$bin" --help | grep -qF 'rearguard inject [--image IMAGE] [--mesh istio|linkerd] [--gate] [FILE|-]'
check $? "rearguard --help lists inject"

refused 2 "unknown option --bogus" -- --bogus "$job"
refused 2 "--mesh: \"consul\" is not istio or linkerd" -- --mesh consul "$job"
refused 2 "option --image needs a value" -- "$job" --image
refused 2 "unexpected argument" -- "$job" "$job"
refused 2 "REARGUARD_MESH" REARGUARD_MESH=kuma -- "$job"
refused 2 "REARGUARD_GATE" REARGUARD_GATE=maybe -- "$job"
refused 1 "cannot open /nonexistent/job.yaml" -- /nonexistent/job.yaml
printf 'a: [\n' | "$bin" inject - >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q '^rearguard: inject: <stdin>:2:1: ' "$tmp/err"
check $? "malformed standard input: <stdin>:LINE:COL ($(cat "$tmp/err"))"

REARGUARD_IMAGE=example.com/env:1 "$bin" inject "$job" 2>/dev/null | grep -q 'image: example.com/env:1'
check $? "REARGUARD_IMAGE sets the image"
REARGUARD_IMAGE=example.com/env:1 "$bin" inject --image example.com/flag:2 "$job" 2>/dev/null >"$tmp/out"
grep -q 'image: example.com/flag:2' "$tmp/out" && ! grep -q env:1 "$tmp/out"
check $? "--image wins over REARGUARD_IMAGE"
"$bin" inject <"$job" 2>/dev/null | cmp -s - <("$bin" inject "$job" 2>/dev/null)
check $? "no FILE reads standard input, as - does"
REARGUARD_GATE=true REARGUARD_MESH=linkerd "$bin" inject "$RG_SRCDIR/tests/inject/cases/job-mesh.yaml" 2>/dev/null >"$tmp/out"
grep -q 'value: linkerd' "$tmp/out" && grep -q 'postStart' "$tmp/out"
check $? "REARGUARD_MESH and REARGUARD_GATE=true take effect"
printf '1..%d\n' "$n"
[ "$failed" = 0 ]
