#!/bin/bash
# manifests/job-start-gating.yaml on podman: cloud-sql-proxy (a stand-in
# that turns ready 1.5 s after its start), then the agent with its postStart
# hook `rearguard wait ready`, then the app. The containers are started in
# order and each postStart hook holds the next start, as the kubelet does
# (lib.sh's kubelet_start): the app must start only after the proxy turned
# ready, and the pod must still complete.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy --ready-after 1500ms
play manifests/job-start-gating.yaml \
	--command 'import=["sh", "-c", "touch /e2e/app-start; echo importing; sleep 1; touch /e2e/app-exit"]'
pod_wait 60

expect_code cloud-sql-proxy 0
expect_code rearguard 0
expect_code import 0
in_order "$(event_ms cloud-sql-proxy "turned ready")" "$(marker_latest_ms app-start)" - "the proxy ready -> the app's start"
gated=$GAP_MS
grep -q . "$T/rearguard.poststart.log" && fail "the postStart hook said: $(cat "$T/rearguard.poststart.log")"
in_order "$(marker_ms app-exit)" "$(event_ms cloud-sql-proxy "stop request received")" 5000 \
	"the app's exit -> the stop request"
summary_is stopped sidecars 0 outcome
summary_is 0 exit_code
say "proxy ready -> app start: $gated ms; app exit -> stop request: $GAP_MS ms;" \
	"pod wall time $WALL_MS ms"
