#!/bin/bash
# kubectl's plugin: with a link kubectl-rearguard -> rearguard on PATH,
# `kubectl rearguard explain FILE` is explain's report, exit status and all
# (kubectl passes them through; a plugin needs no cluster). Debian's
# kubectl: the one tools/cluster unpacks from kubernetes-client into the
# cache, else the kubectl on PATH; skipped without one. Called by that
# name with no command, the binary prints its usage and starts no agent.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"

kubectl=$(ls "${XDG_CACHE_HOME:-$HOME/.cache}"/rearguard/kubernetes/*/kubectl/usr/bin/kubectl 2>/dev/null | head -n 1)
[ -n "$kubectl" ] || kubectl=$(command -v kubectl) || { echo "SKIP: no kubectl (tools/deps kubernetes-client)"; exit 77; }
tmp=$(mktemp -d /tmp/rg-plugin.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
ln -s "$RG_BUILDDIR/rearguard" "$tmp/bin/kubectl-rearguard"
cases=$RG_SRCDIR/tests/explain/cases
fail() { echo "FAIL: $*"; exit 1; }

PATH=$tmp/bin:$PATH HOME=$tmp timeout 60 "$kubectl" rearguard explain --now 2026-11-29T01:51:20Z \
	"$cases/cluster-plain-proxy.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "kubectl rearguard explain exited $rc, want 1 (hung): $(cat "$tmp/err")"
"$RG_BUILDDIR/rearguard" explain --now 2026-11-29T01:51:20Z "$cases/cluster-plain-proxy.json" >"$tmp/direct"
cmp -s "$tmp/out" "$tmp/direct" || fail "kubectl rearguard explain printed otherwise than rearguard explain"
echo "ok: $kubectl rearguard explain: exit 1, $(head -n 1 "$tmp/out")"

PATH=$tmp/bin:$PATH HOME=$tmp timeout 60 "$kubectl" rearguard explain "$cases/docker-inspect.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ ! -s "$tmp/out" ] || fail "bad input through kubectl: exit $rc, stdout $(wc -c <"$tmp/out") bytes"
echo "ok: bad input: exit 2, $(grep -m1 explain "$tmp/err")"

PATH=$tmp/bin:$PATH HOME=$tmp timeout 60 "$kubectl" rearguard >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q 'kubectl rearguard explain' "$tmp/err" || fail "kubectl rearguard alone: exit $rc: $(cat "$tmp/err")"
echo "ok: kubectl rearguard alone: usage, exit 2, no agent"
echo "PASS: plugin"
