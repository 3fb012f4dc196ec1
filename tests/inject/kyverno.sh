#!/bin/bash
# manifests/kyverno/'s policy makes the pods of the golden files' Jobs what
# rearguard inject makes of their templates (tests/inject/kyverno.py says
# how the policy is applied without a Kyverno).
set -eu
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
/usr/bin/python3 -c 'import yaml, jmespath' 2>/dev/null ||
	{ echo "SKIP: python3-yaml and python3-jmespath are needed (tools/deps installs them)"; exit 77; }
cd "$RG_SRCDIR/tests/inject/cases"
corpus=()
for f in *.yaml; do
	# Cases with options of their own (--mesh, --gate), that fail, or that CASE.kyverno says the
	# policy does not do (one line: why) have no policy twin.
	[ -f "${f%.yaml}.args" ] || [ -f "${f%.yaml}.rc" ] || [ -f "${f%.yaml}.kyverno" ] || corpus+=("$f")
done
exec /usr/bin/python3 ../kyverno.py "$RG_SRCDIR/manifests/kyverno/rearguard-inject.yaml" "$RG_BUILDDIR/rearguard" \
	"${corpus[@]}" kyverno-jobs.yaml
