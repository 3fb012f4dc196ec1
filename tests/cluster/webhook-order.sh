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

# The mesh's certificate: an IP address, the one the API server dials.
NODE_IP=10.251.0.1
PORT=$((30000 + $$ % 2000))
MESH=zz-mesh-$$
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=$NODE_IP" \
	-addext "subjectAltName = IP:$NODE_IP" -keyout "$T/mesh.key" -out "$T/mesh.crt" 2>/dev/null ||
	fail "openssl could not make the mesh's certificate"
/usr/bin/python3 -c 'import json, sys; json.dump({"name": "istio-proxy", "image": sys.argv[1], "imagePullPolicy": "Never",
	"command": json.loads(sys.argv[2]), "securityContext": {"runAsUser": 1337, "runAsGroup": 1337}}, open(sys.argv[3], "w"))' \
	"${IMAGE_FOR[docker.io/istio/proxyv2]}" "$ISTIO_PROXY_COMMAND" "$T/proxy.json"
timeout -k 5 900 "$CLUSTER" exec /usr/bin/python3 "$RG_SRCDIR/tests/cluster/mesh-webhook.py" \
	--listen "$NODE_IP:$PORT" --cert "$T/mesh.crt" --key "$T/mesh.key" --container "$T/proxy.json" \
	--log "$T/mesh.log" --watch $$ 2>"$T/mesh.err" &
mesh_pid=$!
at_exit "kill $mesh_pid 2>/dev/null; kubectl delete mutatingwebhookconfiguration $MESH >/dev/null 2>&1"
end=$(($(now_ms) + 30000))
# It makes its log once it listens.
until [ -f "$T/mesh.log" ]; do
	kill -0 "$mesh_pid" 2>/dev/null || fail "the mesh's webhook exited: $(tail -n 5 "$T/mesh.err")"
	[ "$(now_ms)" -lt "$end" ] || fail "the mesh's webhook does not listen after 30 s"
	sleep 0.5
done
kubectl label namespace "$NS" "rearguard.io/test-mesh=$$" >/dev/null || fail "cannot label $NS"
kubectl apply -f - >/dev/null <<EOF || fail "kubectl apply of the mesh's configuration refused"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $MESH
webhooks:
  - name: mesh.test.rearguard.io
    clientConfig:
      url: https://$NODE_IP:$PORT/inject
      caBundle: $(base64 -w0 <"$T/mesh.crt")
    rules:
      - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
    namespaceSelector:
      matchLabels: {rearguard.io/test-mesh: "$$"}
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 5
    reinvocationPolicy: Never
EOF
say "webhooks in the order the API server calls them: $(kubectl get mutatingwebhookconfigurations -o 'jsonpath={.items[*].metadata.name}')"

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
