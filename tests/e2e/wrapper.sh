#!/bin/bash
# manifests/job-wrapper.yaml on podman: no agent container and no shared PID
# namespace. An init container hands the static binary over (`rearguard
# install`); the app runs under `rearguard run --drain --sidecar istio`,
# which waits for the injected proxy's readiness itself, runs the app, then
# stops the proxy through pilot-agent's /quitquitquit and exits with the
# app's code. Run twice: an app that succeeds, and one that fails (exit 3).
. "$RG_SRCDIR/tests/e2e/lib.sh"

AGENT=
image_agent
image_busybox
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent --ready-after 1s
for code in 0 3; do
	say "an app that exits $code"
	play manifests/job-wrapper.yaml \
		--inject '{"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.3", "args": ["proxy", "sidecar"],
			"securityContext": {"runAsUser": 1337, "runAsGroup": 1337}, "position": "last"}' \
		--tail "migrate=[\"sh\", \"-c\", \"touch /e2e/app-start; sleep 1; touch /e2e/app-exit; exit $code\"]"
	pod_wait 60

	expect_code rearguard-install 0
	expect_code migrate "$code"
	expect_code istio-proxy 0
	in_order "$(event_ms istio-proxy "turned ready")" "$(marker_latest_ms app-start)" - "the proxy ready -> the app's start"
	gated=$GAP_MS
	in_order "$(marker_ms app-exit)" "$(event_ms istio-proxy "stop request received")" 5000 \
		"the app's exit -> the stop request"
	ctr_logs migrate | grep -q "no shared PID namespace" || fail "the blind confirmation is not explained"
	[ "$(cat "$(volume_file rearguard apps/migrate)")" = "$code" ] || fail "apps/migrate does not say $code"
	say "exit $code: proxy ready -> app start $gated ms; app exit -> stop request $GAP_MS ms;" \
		"pod wall time $WALL_MS ms"
	podman pod rm -f "$POD" >/dev/null
	for v in $(podman volume ls -q --filter "name=$POD-"); do podman volume rm -f "$v" >/dev/null; done
done
