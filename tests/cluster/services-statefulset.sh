#!/bin/bash
# A StatefulSet of two pods, each an app that calls a backend through
# Debian's nginx as its outbound proxy (a plain sidecar, slower than the app
# to start) and goes on calling for 5 s after its own SIGTERM, made through
# `rearguard inject` (its pod template labelled rearguard.io/inject:
# services): a client in the cluster counts the calls that fail as the
# pods start, during `kubectl rollout restart` and during `kubectl delete
# pod`. The same StatefulSet without rearguard first, where the app's calls
# after its SIGTERM fail (nginx got its SIGTERM with the app) and its first
# call fails (nginx was not listening yet). With rearguard, no call fails,
# every first call goes through, and no pod takes longer to delete than
# its app's stop, its sidecar's and a second (what Kubernetes reports of
# each deleted pod).
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/services-lib.sh"

services_images
backend_up

workload StatefulSet web >"$T/plain.yaml"
apply "$T/plain.yaml"
run_phases StatefulSet web without
workload_gone StatefulSet web

workload StatefulSet web services >"$T/template.yaml"
"$RG_BUILDDIR/rearguard" inject --image "${IMAGE_FOR[registry.example.com/rearguard]}" "$T/template.yaml" \
	>"$T/injected.yaml" 2>"$T/inject.err" || { cat "$T/inject.err"; fail "rearguard inject failed"; }
grep -q 'rearguard added for a long-running pod' "$T/inject.err" || fail "inject did not add rearguard: $(cat "$T/inject.err")"
apply "$T/injected.yaml"
run_phases StatefulSet web with bound

verdicts without
verdicts with
