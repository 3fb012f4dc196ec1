#!/bin/bash
# problem.sh's Job (tests/e2e/jobs/cloudsql.yaml) piped through the build
# tree's `rearguard inject` completes: the agent stops the proxy through its
# stop endpoint once the app is done. The agent's terminated message is its
# summary, valid JSON, and its exit codes (the agent's, the app's, the
# proxy's) equal those Kubernetes reports in containerStatuses.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy --ready-after 300ms
inject tests/e2e/jobs/cloudsql.yaml
job "$T/injected.yaml" --command 'batch=["sh", "-c", "echo billing; sleep 2; echo billed"]'
job_wait Complete 180
evidence "inject: tests/e2e/jobs/cloudsql.yaml | rearguard inject"

expect_code batch 0
expect_code cloud-sql-proxy 0
expect_code rearguard 0
[ "$(jq_py "$T/pods.json" 'd["items"][0]["status"]["phase"]')" = Succeeded ] || fail "the pod did not succeed"
codes_agree app:0=batch cloudsql=cloud-sql-proxy
summary_is stopped sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
[ -n "$(log_ms cloud-sql-proxy "stop request received")" ] || fail "the proxy got no stop request"
[ -z "$(log_ms cloud-sql-proxy "got SIGTERM")" ] || fail "the proxy needed a signal"
say "apply -> Complete: $WALL_MS ms"
