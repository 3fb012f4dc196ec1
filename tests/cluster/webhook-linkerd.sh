#!/bin/bash
# A mesh whose injector runs before rearguard's, as Linkerd's does
# (linkerd-proxy-injector-webhook-config sorts before "rearguard"): a
# second mutating webhook (tests/cluster/mesh-webhook.py) adds a plain
# linkerd-proxy to every pod of the test's namespace as Linkerd 2.16-2.19
# inject it: the stand-in linkerd2-proxy as uid 2102, its shutdown endpoint
# off by LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=false (it answers 404
# until the variable turns it on). rearguard's webhook sees the proxy at
# its first call; the annotation config.linkerd.io/proxy-admin-shutdown
# would come too late (only Linkerd's injector reads it), and the agent
# (uid 65532, no capabilities) may not signal uid 2102: the Job completes
# only because the webhook set the variable in the proxy itself.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

image_busybox
image_proxy cr.l5d.io/linkerd/proxy /usr/lib/linkerd/linkerd2-proxy
webhook_up shared
ns_inject "$NS"

/usr/bin/python3 -c 'import json, sys; json.dump({"name": "linkerd-proxy", "image": sys.argv[1], "imagePullPolicy": "Never",
	"command": ["/usr/lib/linkerd/linkerd2-proxy", "--log", "/dev/stdout", "--ready-after", "300ms"],
	"env": [{"name": "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED", "value": "false"},
		{"name": "LINKERD2_PROXY_ADMIN_LISTEN_ADDR", "value": "[::]:4191"}],
	"securityContext": {"runAsUser": 2102, "runAsNonRoot": True, "readOnlyRootFilesystem": True,
		"allowPrivilegeEscalation": False}}, open(sys.argv[2], "w"))' \
	"${IMAGE_FOR[cr.l5d.io/linkerd/proxy]}" "$T/proxy.json"
mesh_on "linkerd-test-$$" "$T/proxy.json"

# The Job as written: one app, no sidecar, no rearguard.
app_job export 'echo exporting; sleep 3; echo done' export >"$T/job.yaml"
mesh_job_done export export linkerd-proxy \
	"an app-only Job; a Linkerd-like injector (before rearguard) adds linkerd-proxy as uid 2102, shutdown off by env"
enabled=$(k get pod "$(pod_name)" \
	-o 'jsonpath={.spec.containers[?(@.name=="linkerd-proxy")].env[?(@.name=="LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED")].value}')
say "the proxy's LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED as the API server stored it: $enabled"
[ "$enabled" = true ] || fail "the webhook did not enable the proxy's shutdown endpoint ($enabled)"
ctr_logs linkerd-proxy | grep -q 'stop request received' || fail "the proxy got no stop request: $(ctr_logs linkerd-proxy | tail -n 5)"
expect_code linkerd-proxy 0
expect_code export 0
expect_code rearguard 0
summary_is stopped sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
echo "PASS: $TEST_NAME"
