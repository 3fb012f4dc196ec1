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
# shellcheck source=tests/tap.sh
. "$RG_SRCDIR/tests/tap.sh"

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
for word in --image --mesh --gate --services --signal-as-root --sidecar --quiet REARGUARD_IMAGE REARGUARD_MESH \
	REARGUARD_GATE REARGUARD_SERVICES REARGUARD_SIGNAL_AS_ROOT rearguard.io/sidecars \
	ResourceList docs/inject.md DIR; do
	grep -qF -- "$word" "$tmp/out"
	check $? "--help mentions $word"
done
"$bin" --help | grep -qF 'rearguard inject [--image IMAGE] [--mesh istio|linkerd] [--gate] [--services] [FILE|-]'
check $? "rearguard --help lists inject"

refused 2 "unknown option --bogus" -- --bogus "$job"
refused 2 "--mesh: \"consul\" is not istio or linkerd" -- --mesh consul "$job"
refused 2 "option --image needs a value" -- "$job" --image
refused 2 "--sidecar \"=signal:TERM\": CONTAINER[=SPEC] needs a container's name" -- --sidecar =signal:TERM "$job"
refused 2 "\"kill\" is no preset, stop" -- --sidecar caddy=kill "$job"
refused 2 "unknown signal" -- --sidecar caddy=signal:NOPE "$job"
refused 2 "unknown key \"colour\"" -- --sidecar caddy=colour=red "$job"
refused 2 "REARGUARD_MESH" REARGUARD_MESH=kuma -- "$job"
refused 2 "REARGUARD_GATE" REARGUARD_GATE=maybe -- "$job"
refused 2 "REARGUARD_SERVICES" REARGUARD_SERVICES=maybe -- "$job"
refused 2 "REARGUARD_SIGNAL_AS_ROOT" REARGUARD_SIGNAL_AS_ROOT=maybe -- "$job"
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
# Several files and a directory, as kubectl -f takes them: one stream, "---" between the files.
mkdir -p "$tmp/dir/sub"
cp "$RG_SRCDIR/tests/inject/cases/job-cloudsql.yaml" "$tmp/dir/b.yml"
cp "$RG_SRCDIR/tests/inject/cases/pod-dapr.yaml" "$tmp/dir/a.yaml"
cp "$RG_SRCDIR/tests/inject/cases/job-vault.yaml" "$tmp/dir/sub/c.yaml"
echo 'not: [a manifest' >"$tmp/dir/notes.txt"
"$bin" inject "$job" "$tmp/dir" >"$tmp/out" 2>"$tmp/err"
check $? "a file and a directory: exit 0 ($(tail -n 1 "$tmp/err"))"
[ "$(grep -c 'REARGUARD_APPS' "$tmp/out")" = 3 ]
check $? "three workloads injected: the file's and the directory's manifests, not its subdirectory's nor its .txt"
grep -n '^rearguard: inject: ' "$tmp/err" | grep -E 'job-istio-nohold.yaml:|dir/a.yaml:|dir/b.yml:' | cut -d: -f1 |
	tr '\n' ' ' | grep -qE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ $'
check $? "notes name each file"
grep -A1 'sizeLimit: 1Mi}$' "$tmp/out" | grep -q '^---$'
check $? "a --- line between two files' documents"
"$bin" inject "$tmp/dir/a.yaml" "$tmp/dir/b.yml" 2>/dev/null | "$bin" inject - 2>/dev/null >"$tmp/again"
"$bin" inject "$tmp/dir/a.yaml" "$tmp/dir/b.yml" 2>/dev/null | cmp -s - "$tmp/again"
check $? "the stream of several files injected again is the same"
printf 'a: [\n' >"$tmp/dir/z.yaml"
"$bin" inject "$job" "$tmp/dir" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -ge 1 ] && tail -n 1 "$tmp/err" | grep -q 'dir/z.yaml:2:1: '
check $? "one malformed file among several: exit 2, nothing written, the error last ($(tail -n 1 "$tmp/err"))"

# -q: warnings only, no summary.
"$bin" inject -q "$RG_SRCDIR/tests/inject/cases/styles.yaml" >/dev/null 2>"$tmp/err"
[ "$(wc -l <"$tmp/err")" -gt 0 ] && ! grep -v ': warning: ' "$tmp/err" | grep -q .
check $? "-q keeps only the warnings"
"$bin" inject "$RG_SRCDIR/tests/inject/cases/styles.yaml" >/dev/null 2>"$tmp/err"
tail -n 1 "$tmp/err" | grep -qE '^rearguard: inject: 2 changed, 0 left unchanged, [0-9]+ warnings$'
check $? "without -q, a summary line last ($(tail -n 1 "$tmp/err"))"
"$bin" inject --image example.com/rg:1 "$job" 2>&1 >/dev/null | grep -q placeholder
[ $? = 1 ]
check $? "no placeholder warning with --image"
"$bin" inject "$job" 2>&1 >/dev/null | grep -q 'warning: the agent.s image is the placeholder'
check $? "a placeholder warning without it"

REARGUARD_GATE=true REARGUARD_MESH=linkerd "$bin" inject "$RG_SRCDIR/tests/inject/cases/job-mesh.yaml" 2>/dev/null >"$tmp/out"
grep -q 'value: linkerd' "$tmp/out" && grep -q 'postStart' "$tmp/out"
check $? "REARGUARD_MESH and REARGUARD_GATE=true take effect"
root=$RG_SRCDIR/tests/inject/cases/job-cloudsql-v1-root.yaml
REARGUARD_SIGNAL_AS_ROOT=true "$bin" inject "$root" 2>/dev/null >"$tmp/out"
[ "$(grep -c 'add: \[KILL\]' "$tmp/out")" = 1 ] && [ "$(grep -c 'runAsUser: 0$' "$tmp/out")" = 1 ]
check $? "REARGUARD_SIGNAL_AS_ROOT=true: root with KILL where a proxy may run as root, not beside one of uid 65532"
{
	printf '%s\n' 'apiVersion: config.kubernetes.io/v1' 'kind: ResourceList' 'functionConfig:' \
		'  {apiVersion: v1, kind: ConfigMap, metadata: {name: fc}, data: {signal-as-root: "true"}}' 'items:'
	awk 'NR > 1 && /^---$/ {exit} /^#/ {next} {print (/^apiVersion/ ? "- " : "  ") $0}' "$root"
} >"$tmp/rl"
"$bin" inject "$tmp/rl" 2>/dev/null | grep -q 'add: \[KILL\]'
check $? "a functionConfig's signal-as-root takes effect"
tap_done
