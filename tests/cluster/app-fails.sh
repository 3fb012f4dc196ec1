#!/bin/bash
# manifests/job-signal-helper.yaml with an app that exits 3 and
# backoffLimit: 0: the Job is Failed (BackoffLimitExceeded), the helper is
# stopped all the same and exits 0, the agent exits 0, and the app's code is
# in the agent's terminated message and in its fails_pod.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
job manifests/job-signal-helper.yaml --spec backoffLimit=0 \
	--command 'report=["sh", "-c", "echo failing; sleep 1; exit 3"]'
job_wait Failed 180
evidence "app-fails: manifests/job-signal-helper.yaml, the app exits 3, backoffLimit 0"

[ "$(jq_py "$T/job.json" '[c["reason"] for c in d["status"]["conditions"] if c["type"] == "Failed"][0]')" = BackoffLimitExceeded ] ||
	fail "the Job failed for another reason: $(jq_py "$T/job.json" 'd["status"]["conditions"]')"
[ "$(jq_py "$T/pods.json" 'd["items"][0]["status"]["phase"]')" = Failed ] || fail "the pod did not fail"
expect_code report 3
expect_code fluent-bit 0
expect_code rearguard 0
codes_agree app:0=report fluent-bit=fluent-bit
summary_is stopped sidecars 0 outcome
summary_is '[{"role": "app", "name": "'"$(jq_py "$T/summary.json" 'd["apps"][0]["name"]')"'", "exit_code": 3}]' fails_pod
[ -n "$(log_ms fluent-bit "got SIGTERM")" ] || fail "the helper got no SIGTERM"
say "apply -> Failed: $WALL_MS ms"
