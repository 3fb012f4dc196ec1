#!/bin/bash
# A Deployment of two pods, each an app that calls a backend through
# Debian's nginx as its outbound proxy (a plain sidecar, slower than the app
# to start) and goes on calling for 5 s after its own SIGTERM: a client in
# the cluster counts the calls that fail as the pods start, during
# `kubectl rollout restart` and during `kubectl delete pod`. First without
# rearguard: the app's calls after its SIGTERM fail (nginx got its SIGTERM
# with the app), and its first call fails (nginx was not listening yet).
# Then the same Deployment, unchanged, in its namespace labelled
# rearguard.io/inject=services: rearguard's webhook (the configuration's
# entry services.rearguard.io) gives each pod the agent, the gate and the
# hold. No call fails, every first call goes through, and no pod takes
# longer to delete than its app's stop, its sidecar's and a second (what
# Kubernetes reports of each deleted pod).
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"
. "$RG_SRCDIR/tests/cluster/services-lib.sh"

services_images
webhook_up shared
backend_up

workload Deployment web >"$T/web.yaml"
apply "$T/web.yaml"
run_phases Deployment web without
workload_gone Deployment web

kubectl label namespace "$NS" rearguard.io/inject=services --overwrite >/dev/null || fail "cannot label $NS"
apply "$T/web.yaml"
settled 180
pods_json
[ "$(wl_py 'all([c["name"] for c in p["spec"]["containers"]] == ["proxy", "rearguard", "app"] for p in live)')" = True ] ||
	fail "the webhook did not give every pod the agent, gated: $(wl_py '[[c["name"] for c in p["spec"]["containers"]] for p in live]')"
run_phases Deployment web with bound

verdicts without
verdicts with
