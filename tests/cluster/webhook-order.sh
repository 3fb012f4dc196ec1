#!/bin/bash
# Ordering with a mesh's injector that runs after rearguard's: a second
# mutating webhook (tests/cluster/mesh-webhook.py, on the node's address in
# the cluster's network namespace), adds a plain
# never-ending istio-proxy (the stand-in pilot-agent) to every pod of the
# test's namespace, as a mesh would, from a configuration whose name sorts
# after "rearguard" (zz-mesh-...): the API server calls rearguard's webhook
# first, on a pod with no sidecar yet, then the mesh's. The Job, an app
# alone as written, completes only because rearguard's entry has
# reinvocationPolicy: IfNeeded: called again after the mesh, the webhook
# gave the agent that proxy.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up shared
ns_inject "$NS"

istio_proxy_json "$T/proxy.json"
mesh_on "zz-mesh-$$" "$T/proxy.json"

# The Job as written: one app, no sidecar, no rearguard.
app_job migrate >"$T/job.yaml"
mesh_job_done migrate migrate istio-proxy "an app-only Job; the mesh's webhook (zz-mesh, after rearguard) adds a plain istio-proxy"
sidecars=$(k get pod "$(pod_name)" -o 'jsonpath={.spec.containers[0].env[?(@.name=="REARGUARD_SIDECARS")].value}')
say "the agent's REARGUARD_SIDECARS: $sidecars"
expect_code istio-proxy 0
expect_code rearguard 0
echo "PASS: $TEST_NAME"
