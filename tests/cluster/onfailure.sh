#!/bin/bash
# restartPolicy: OnFailure (manifests/job-signal-helper.yaml, the agent told
# so): an app that fails twice, then succeeds, counting its attempts in an
# emptyDir. The kubelet restarts it twice (restartCount 2); the agent waits
# through both restarts, stops the helper after the third attempt, and the
# Job completes with every container's last exit 0. The manifest's
# backoffLimit 2 is raised: under OnFailure the Job controller counts the
# restarts of a running pod's containers against it, and fails the Job at
# the second restart even though the pod then succeeds.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
job manifests/job-signal-helper.yaml --restart-policy OnFailure --spec backoffLimit=6 \
	--env rearguard=REARGUARD_RESTART_POLICY=OnFailure \
	--command 'report=["sh", "-c", "n=$(($(cat /e2e/attempts 2>/dev/null || echo 0) + 1)); echo $n >/e2e/attempts; echo attempt $n; [ $n -ge 3 ]"]'
job_wait Complete 300
evidence "onfailure: manifests/job-signal-helper.yaml, OnFailure, the app fails twice"

[ "$(ctr report 'c["restartCount"]')" = 2 ] || fail "the app restarted $(ctr report 'c["restartCount"]') times, want 2"
[ "$(ctr fluent-bit 'c["restartCount"]')" = 0 ] || fail "the helper restarted"
[ "$(ctr rearguard 'c["restartCount"]')" = 0 ] || fail "the agent restarted"
expect_code report 0
[ "$(ctr report 'c["lastState"]["terminated"]["exitCode"]')" = 1 ] || fail "the app's previous attempt did not exit 1"
expect_code fluent-bit 0
expect_code rearguard 0
[ "$(ctr_logs report)" = "attempt 3" ] || fail "the last attempt says $(ctr_logs report)"
codes_agree app:0=report fluent-bit=fluent-bit
summary_is exited apps 0 state
summary_is '[]' fails_pod
# The helper was stopped after the last attempt began.
in_order "$(started_ms report)" "$(log_ms fluent-bit "got SIGTERM")" - "the third attempt's start -> the helper's SIGTERM"
say "apply -> Complete: $WALL_MS ms"
