#!/bin/bash
# manifests/job-istio.yaml on podman, with istio-proxy injected as Istio's
# injector does (first, for holdApplicationUntilProxyStarts) from a
# stand-in image: pilot-agent, which forks "envoy", on 15020/15021/15000 as
# docs/proxies.md says. The agent waits for 15021's readiness, and after the app
# exits POSTs pilot-agent's /quitquitquit: Envoy and pilot-agent exit 0,
# then the agent; every container exits 0, so the Job completes.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent --ready-after 500ms
play manifests/job-istio.yaml \
	--inject '{"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.3", "args": ["proxy", "sidecar"],
		"securityContext": {"runAsUser": 1337, "runAsGroup": 1337}}' \
	--command 'migrate=["sh", "-c", "echo migrating; sleep 2; touch /e2e/app-exit; echo done"]'
pod_wait 60

expect_code migrate 0
expect_code istio-proxy 0
expect_code rearguard 0
[ -n "$(event_ms istio-proxy "turned ready")" ] || fail "the proxy never turned ready"
in_order "$(marker_ms app-exit)" "$(event_ms istio-proxy "stop request received")" 5000 \
	"the app's exit -> the stop request"
[ -n "$(event_ms istio-proxy "request GET /healthz/ready")" ] || fail "readiness was not polled on 15021"
[ -n "$(event_ms istio-proxy "killed envoy")" ] || fail "Envoy did not go with pilot-agent"
[ -z "$(event_ms istio-proxy "got SIGTERM")" ] || fail "the proxy needed a signal"
assert_between "$WALL_MS" 2000 60000 "ms from kube play to the pod's end (pod_wait's bound; a busy machine stretches it)"
summary_is stopped sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
summary_is 0 apps 0 exit_code
summary_is 0 exit_code
say "app exit -> stop request received: $GAP_MS ms; pod wall time $WALL_MS ms"
