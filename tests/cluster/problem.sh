#!/bin/bash
# The problem rearguard solves, reproduced on Kubernetes: a Job with the
# Cloud SQL Auth Proxy beside its app and no rearguard
# (tests/e2e/jobs/cloudsql.yaml; the proxy is the stand-in, which serves
# until it is asked to stop). The app finishes with 0, the proxy keeps
# running, and the Job stays active: checked 30 s after the app's exit.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy
AGENT='' job tests/e2e/jobs/cloudsql.yaml \
	--command 'batch=["sh", "-c", "echo billing; sleep 2; echo billed"]'

# The app's exit, then 30 s more.
end=$(($(now_ms) + 180000))
until pod_json && [ "$(jq_py "$T/pods.json" 'd["items"] and status("batch")["state"].get("terminated", {}).get("exitCode")')" = 0 ]; do
	[ "$(now_ms)" -lt "$end" ] || fail "the app did not exit 0 within 180 s"
	sleep 1
done
sleep 30
evidence "problem: no rearguard, 30 s after the app's exit"

[ -z "$(job_condition)" ] || fail "the Job has the condition $(job_condition): it should still be active"
[ "$(jq_py "$T/job.json" 'd["status"].get("active")')" = 1 ] || fail "the Job has no active pod"
pod_json
[ "$(jq_py "$T/pods.json" 'd["items"][0]["status"]["phase"]')" = Running ] || fail "the pod is not Running"
[ "$(ctr cloud-sql-proxy '"running" in c["state"]')" = True ] || fail "the proxy is not running"
[ "$(ctr cloud-sql-proxy 'c["restartCount"]')" = 0 ] || fail "the proxy restarted"
expect_code batch 0
say "the app exited 0 at $(ctr batch 'c["state"]["terminated"]["finishedAt"]'); 30 s later the Job is still active, the proxy running"
