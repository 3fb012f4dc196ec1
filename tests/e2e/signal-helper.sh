#!/bin/bash
# manifests/job-signal-helper.yaml on podman: the app works, exits 0, and the
# log shipper (a stand-in named fluent-bit) gets SIGTERM right after; every
# container exits 0, so the Job would succeed.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
play manifests/job-signal-helper.yaml \
	--command 'report=["sh", "-c", "echo building the report; sleep 2; touch /e2e/app-exit; exit 0"]'
# The agent's resident memory while the app works (reported, not asserted).
sleep 1
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$(podman inspect --format '{{.State.Pid}}' "$POD-rearguard")/status" 2>/dev/null) || true
pod_wait 60

expect_code report 0
expect_code fluent-bit 0
expect_code rearguard 0
in_order "$(marker_ms app-exit)" "$(event_ms fluent-bit "got SIGTERM")" 5000 "the app's exit -> the helper's SIGTERM"
assert_between "$WALL_MS" 2000 60000 "ms from kube play to the pod's end (pod_wait's bound; a busy machine stretches it)"
summary_is stopped sidecars 0 outcome
summary_is signal:TERM sidecars 0 method
summary_is 0 apps 0 exit_code
summary_is 0 exit_code
say "app exit -> SIGTERM: $GAP_MS ms; pod wall time $WALL_MS ms; agent RSS ${rss:-?} KiB"
