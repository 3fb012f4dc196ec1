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

image_busybox
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent
webhook_up shared
ns_inject "$NS"

/usr/bin/python3 -c 'import json, sys; json.dump({"name": "istio-proxy", "image": sys.argv[1], "imagePullPolicy": "Never",
	"command": json.loads(sys.argv[2]), "securityContext": {"runAsUser": 1337, "runAsGroup": 1337}}, open(sys.argv[3], "w"))' \
	"${IMAGE_FOR[docker.io/istio/proxyv2]}" "$ISTIO_PROXY_COMMAND" "$T/proxy.json"
mesh_on "zz-mesh-$$" "$T/proxy.json"

# The Job as written: one app, no sidecar, no rearguard.
START_MS=$(now_ms)
istio_job migrate | sed '/name: istio-proxy/,$d' >"$T/job.yaml"
k apply -f "$T/job.yaml" >/dev/null || fail "kubectl apply of the Job refused"
job_wait Complete 240 migrate
evidence "an app-only Job; the mesh's webhook (zz-mesh, after rearguard) adds a plain istio-proxy"
say "the mesh's webhook saw: $(paste -sd';' "$T/mesh.log")"
grep -q 'added istio-proxy' "$T/mesh.log" || fail "the mesh's webhook added no proxy"
got=$(pod_containers "$NS" "$(pod_name)")
say "pod $(pod_name): $got"
[[ $got == "rearguard migrate istio-proxy | injected="[^-]* ]] ||
	fail "the pod: $got, want the agent, the app and the mesh's proxy"
sidecars=$(k get pod "$(pod_name)" -o 'jsonpath={.spec.containers[0].env[?(@.name=="REARGUARD_SIDECARS")].value}')
say "the agent's REARGUARD_SIDECARS: $sidecars"
expect_code istio-proxy 0
expect_code rearguard 0
echo "PASS: $TEST_NAME"
