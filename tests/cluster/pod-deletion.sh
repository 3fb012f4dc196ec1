#!/bin/bash
# manifests/job-pod-deletion.yaml, and its pod deleted with
# `kubectl delete pod --grace-period 40` while the app works. The kubelet
# sends SIGTERM to every container at once (after the proxy's preStop hook,
# `rearguard wait apps-done`, from the binary `rearguard install` copied);
# the app needs 3.2 s to shut down. The proxy outlives the app: its stop
# request (or SIGTERM) comes after the app's last line, and it finished no
# earlier than the app (the kubelet's finish times, read from the deleted
# pod, which a finalizer of the test keeps until then). Every container
# exits 0. When the kubelet loses the deleted pod's end (its race on a busy
# node: tests/cluster/lib.sh, kept_last), the scenario runs once more.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox
# The real image runs as 65532 (distroless nonroot); the manifest's runAsNonRoot needs a user.
IMAGE_USER=65532 image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy
# deleted JOB: the Job JOB made and its pod deleted while the app works,
# its last state in $T/pods.json; returns 1 when the kubelet lost it
# (kept_last: its containers' end never reported).
deleted() {
	JOB_NAME=$1 job_yaml manifests/job-pod-deletion.yaml --spec backoffLimit=0 \
		--command 'import=["sh", "-c", "sleep 600 & p=$!; trap \"echo shutting down; kill $p; sleep 3; echo shut down; sleep 0.2; exit 0\" TERM; echo importing; wait $p"]'
	# The pod runs as the manifest's service account; without one the Job controller makes no pod.
	{ printf 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: long-import}\n---\n'; cat "$T/$JOB.yaml"; } >"$T/with-sa.yaml"
	apply "$T/with-sa.yaml"
	pod_wait_running 180
	pod=$(pod_name)
	end=$(($(now_ms) + 60000))
	until k logs "$pod" -c import 2>/dev/null | grep -q importing && [ -n "$(event_ms cloud-sql-proxy "turned ready")" ]; do
		[ "$(now_ms)" -lt "$end" ] || fail "the app or the proxy did not start within 60 s"
		sleep 0.5
	done
	follow_logs "$pod" import cloud-sql-proxy rearguard
	keep_pod "$pod"
	DELETE_MS=$(now_ms)
	kubectl --namespace "$NS" delete pod "$pod" --grace-period 40 --wait=false >/dev/null || fail "kubectl delete pod failed"
	kept_last "$pod" 120
}
# Once more, with a Job of another name, when the kubelet lost the end: that
# is its race on a busy node (kept_last), not rearguard's doing.
if ! deleted "$TEST_NAME"; then
	wait "${FOLLOW_PIDS[@]}" || true
	k delete job "$JOB" --wait=false >/dev/null 2>&1 || true
	rm -rf "$T/logs"
	FOLLOW_PIDS=()
	deleted "$TEST_NAME-again" || fail "the kubelet lost the end of the deleted pod's containers twice"
fi
wait "${FOLLOW_PIDS[@]}" || true
evidence "pod-deletion: kubectl delete pod --grace-period 40 while the app runs (its last state)" --recorded

expect_code import 0
expect_code cloud-sql-proxy 0
expect_code rearguard 0
app_done=$(log_ms import "shut down")
[ -n "$app_done" ] || fail "the app did not finish its shutdown"
stop=$(event_ms cloud-sql-proxy "stop request received")
term=$(event_ms cloud-sql-proxy "got SIGTERM")
[ -n "$stop$term" ] || fail "the proxy was neither asked to stop nor sent SIGTERM"
# shellcheck disable=SC2086 # either may be empty
first=$(printf '%s\n' $stop $term | sort -n | head -n 1)
# The app's line is timed when the runtime read it, later than it was
# written: the app writes it 200 ms before it exits, so that the read comes
# before the exit the agent acts on (written as it exits, the read came 5 ms
# before the stop request, and could come after it on a busy node).
in_order "$app_done" "$first" - "the app's last line -> the proxy told to stop"
in_order "$(finished_ms import)" "$(finished_ms cloud-sql-proxy)" - "the app finished -> the proxy finished"
in_order "$(finished_ms import)" "$(finished_ms rearguard)" - "the app finished -> the agent finished"
summary_is stopped sidecars 0 outcome
summary_is 0 exit_code
say "delete -> app done $((app_done - DELETE_MS)) ms; app done -> proxy told to stop $((first - app_done)) ms"
