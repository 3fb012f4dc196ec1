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
# The kubelet may have removed the previous attempt's container once the pod
# succeeded, and lastState with it; when it is there, it says 1.
last=$(ctr report 'c["lastState"].get("terminated", {}).get("exitCode")')
[ "$last" = null ] || [ "$last" = 1 ] || fail "the app's previous attempt exited $last, want 1"
expect_code fluent-bit 0
expect_code rearguard 0
[ "$(ctr_logs report)" = "attempt 3" ] || fail "the last attempt says $(ctr_logs report)"
# Each attempt is a container of its own to the agent: two restarted with 1, the last exited 0.
summary
attempts=$(jq_py "$T/summary.json" '" ".join("%s:%s" % (a["state"], a["exit_code"]) for a in d["apps"])')
[ "$attempts" = "restarted:1 restarted:1 exited:0" ] || fail "the summary's attempts: $attempts"
codes_agree app:2=report fluent-bit=fluent-bit
summary_is '[]' fails_pod
# The helper was stopped after the last attempt began.
in_order "$(started_ms report)" "$(log_ms fluent-bit "got SIGTERM")" - "the third attempt's start -> the helper's SIGTERM"
say "apply -> Complete: $WALL_MS ms"
