#!/bin/bash
# A plain CronJob with two apps in a Linkerd mesh (tests/e2e/jobs/
# linkerd-cronjob.yaml: no rearguard, no shutdown annotation) through
# `rearguard inject`; linkerd-proxy is then added the way Linkerd's injector
# adds it (first), with its shutdown endpoint on exactly when the template
# carries config.linkerd.io/proxy-admin-shutdown: enabled, as the injector
# turns that annotation into LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED. The
# proxy is stopped by POST /shutdown after the second app, and the Job
# completes.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_proxy cr.l5d.io/linkerd/proxy /usr/lib/linkerd/linkerd2-proxy --ready-after 300ms
inject_job tests/e2e/jobs/linkerd-cronjob.yaml
[ "$(injected 'env["REARGUARD_SIDECARS"], env["REARGUARD_APPS"]')" = "('linkerd', '2')" ] ||
	fail "agent configuration: $(injected 'env')"
shutdown=false
[ "$(injected 't["metadata"]["annotations"].get("config.linkerd.io/proxy-admin-shutdown")')" = enabled ] && shutdown=true
play "$T/injected.yaml" \
	--inject "{\"name\": \"linkerd-proxy\", \"image\": \"cr.l5d.io/linkerd/proxy:stable-2.14.10\",
		\"env\": [{\"name\": \"LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED\", \"value\": \"$shutdown\"}],
		\"securityContext\": {\"runAsUser\": 2102}}" \
	--command 'extract=["sh", "-c", "sleep 1; touch /e2e/extract-exit"]' \
	--command 'load=["sh", "-c", "sleep 3; touch /e2e/load-exit"]'
pod_wait 60

expect_code extract 0
expect_code load 0
expect_code linkerd-proxy 0
expect_code rearguard 0
in_order "$(marker_ms load-exit)" "$(event_ms linkerd-proxy "stop request received")" 5000 \
	"the last app's exit -> the stop request"
[ "$(marker_ms extract-exit)" -lt "$(marker_ms load-exit)" ] || fail "the apps did not end in the order planned"
[ -z "$(event_ms linkerd-proxy "got SIGTERM")" ] || fail "the proxy needed a signal (shutdown endpoint: $shutdown)"
summary_is stopped sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
summary_is 0 apps 1 exit_code
say "last app exit -> stop request received: $GAP_MS ms; pod wall time $WALL_MS ms"
