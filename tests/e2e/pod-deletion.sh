#!/bin/bash
# manifests/job-pod-deletion.yaml on podman, and the pod deleted while the
# app works. The kubelet's part (lib.sh's pod_delete): every container at
# once gets its preStop hook, then SIGTERM. The app needs its proxy for 2 s
# of shutdown work after its SIGTERM; the proxy's preStop hook (`rearguard
# wait apps-done`, the binary handed over by `rearguard install`) and the
# agent, which holds its own SIGTERM, keep the proxy until the app is gone.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy
play manifests/job-pod-deletion.yaml \
	--command 'import=["sh", "-c", "sleep 600 & p=$!; trap \"echo shutting down; kill $p; sleep 2; touch /e2e/app-exit; exit 0\" TERM; touch /e2e/app-start; wait $p"]'
wait_file 30 "$(volume_file rearguard ready)"
wait_file 30 "$(volume_file e2e app-start)"
pod_delete 35

expect_code import 0
expect_code cloud-sql-proxy 0
expect_code rearguard 0
exited=$(marker_ms app-exit)
term=$(event_ms cloud-sql-proxy "got SIGTERM")
stop=$(event_ms cloud-sql-proxy "stop request received")
[ -n "$exited" ] || fail "the app did not finish its shutdown"
[ -n "$term$stop" ] || fail "the proxy was neither stopped nor sent SIGTERM"
first=$(printf '%s\n' $term $stop | sort -n | head -n 1)
[ "$first" -ge "$exited" ] || fail "the proxy was told to stop at $first, before the app exited at $exited"
[ -f "$T/cloud-sql-proxy.prestop.end" ] || fail "the proxy's preStop hook did not run"
hook_end=$(cat "$T/cloud-sql-proxy.prestop.end")
[ "$hook_end" -ge "$exited" ] || fail "the preStop hook returned at $hook_end, before the app exited at $exited"
grep -q . "$T/cloud-sql-proxy.prestop.log" && fail "the preStop hook said: $(cat "$T/cloud-sql-proxy.prestop.log")"
summary_is stopped sidecars 0 outcome
summary_is 0 exit_code
end=$(now_ms)
say "delete -> app exit $((exited - DELETE_MS)) ms; app exit -> proxy told to stop $((first - exited)) ms;" \
	"delete -> pod gone $((end - DELETE_MS)) ms"
