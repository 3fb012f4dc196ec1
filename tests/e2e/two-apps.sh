#!/bin/bash
# manifests/job-two-apps.yaml: two apps that end 2.5 s apart; the log shipper
# is stopped after the second one, not the first.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
play manifests/job-two-apps.yaml \
	--command 'extract=["sh", "-c", "sleep 1; touch /e2e/extract-exit"]' \
	--command 'load=["sh", "-c", "sleep 3.5; touch /e2e/load-exit"]'
pod_wait 60

expect_code extract 0
expect_code load 0
expect_code fluent-bit 0
expect_code rearguard 0
first=$(marker_ms extract-exit)
last=$(marker_ms load-exit)
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$first" ] && [ -n "$last" ] && [ -n "$term" ] || fail "missing markers ($first, $last) or SIGTERM ($term)"
[ "$term" -ge "$last" ] || fail "the helper got SIGTERM at $term, before the second app exited at $last"
assert_between "$((last - first))" 1000 20000 "ms between the two apps' exits"
assert_between "$((term - last))" 0 5000 "ms from the last app's exit to the helper's SIGTERM"
assert_between "$WALL_MS" 3500 60000 "ms from kube play to the pod's end (pod_wait's bound; a busy machine stretches it)"
summary_is 0 apps 0 exit_code
summary_is 0 apps 1 exit_code
summary_is stopped sidecars 0 outcome
say "first exit -> last exit -> SIGTERM: 0, $((last - first)), $((term - first)) ms; pod wall time $WALL_MS ms"
