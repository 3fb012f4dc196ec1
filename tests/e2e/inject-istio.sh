#!/bin/bash
# A plain Job that asks for Istio's sidecar (tests/e2e/jobs/istio.yaml, no
# rearguard) through `rearguard inject`; istio-proxy is then added the way
# Istio's injector adds it without holdApplicationUntilProxyStarts (last),
# from the stand-in (pilot-agent forking "envoy"). The agent finds it by the
# spec inject wrote, stops it through pilot-agent's /quitquitquit, and the
# Job completes.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent --ready-after 500ms
inject_job tests/e2e/jobs/istio.yaml
[ "$(injected 'env["REARGUARD_SIDECARS"], env["REARGUARD_APPS"]')" = "('istio', '1')" ] ||
	fail "agent configuration: $(injected 'env')"
play "$T/injected.yaml" \
	--inject '{"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.3", "args": ["proxy", "sidecar"],
		"securityContext": {"runAsUser": 1337, "runAsGroup": 1337}, "position": "last"}' \
	--command 'migrate=["sh", "-c", "echo migrating; sleep 2; touch /e2e/app-exit; echo done"]'
pod_wait 60

expect_code migrate 0
expect_code istio-proxy 0
expect_code rearguard 0
in_order "$(marker_ms app-exit)" "$(event_ms istio-proxy "stop request received")" 5000 \
	"the app's exit -> the stop request"
[ -n "$(event_ms istio-proxy "killed envoy")" ] || fail "Envoy did not go with pilot-agent"
[ -z "$(event_ms istio-proxy "got SIGTERM")" ] || fail "the proxy needed a signal"
summary_is stopped sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
say "app exit -> stop request received: $GAP_MS ms; pod wall time $WALL_MS ms"
