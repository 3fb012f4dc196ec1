#!/bin/bash
# manifests/job-signal-helper.yaml with an app that fails (exit 3) under
# restartPolicy: Never: the pod ends with the app's code, the helper is
# stopped all the same, and rearguard exits 0 (it did its job; the Job fails
# because of the app alone). The summary carries the app's code.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
play manifests/job-signal-helper.yaml \
	--command 'report=["sh", "-c", "echo failing; sleep 1; touch /e2e/app-exit; exit 3"]'
pod_wait 60

expect_code report 3
expect_code fluent-bit 0
expect_code rearguard 0
in_order "$(marker_ms app-exit)" "$(event_ms fluent-bit "got SIGTERM")" 5000 "the app's exit -> the helper's SIGTERM"
assert_between "$WALL_MS" 1000 60000 "ms from kube play to the pod's end (pod_wait's bound; a busy machine stretches it)"
summary_is 3 apps 0 exit_code
summary_is stopped sidecars 0 outcome
summary_is 0 exit_code
say "app exit 3 -> SIGTERM: $GAP_MS ms; pod wall time $WALL_MS ms"
