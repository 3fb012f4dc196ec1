#!/bin/bash
# The failure policies, with the webhook scaled to zero replicas (its
# Service without endpoints, so every call fails):
#
# - namespace.rearguard.io (failurePolicy: Ignore): a Job's pod in a
#   namespace labelled rearguard.io/inject=enabled is still created, as
#   written, without rearguard;
# - pod.rearguard.io (failurePolicy: Fail): a pod labelled
#   rearguard.io/inject=enabled is refused, with the API server's reason;
# - rearguard-system (labelled rearguard.io/inject=disabled) is never
#   sent to the webhook: a labelled pod is admitted there, and the
#   webhook's own pods are created when it is scaled back up.
#
# The webhook is scaled back to two replicas at the end, also on failure.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up exclusive
ns_inject "$NS"

webhook_down
say "webhook scaled to 0: no pod, endpoints of the Service: none"

# Ignore: the Job's pod is created, as written.
START_MS=$(now_ms)
istio_job migrate >"$T/job.yaml"
k apply -f "$T/job.yaml" >/dev/null || fail "kubectl apply of the Job refused"
pod=$(job_pod "$NS" migrate 120)
got=$(pod_containers "$NS" "$pod")
say "namespace entry (failurePolicy: Ignore): pod $pod created: $got"
[ "$got" = "migrate istio-proxy | injected=-" ] || fail "the Job's pod: $got, want it as written"
k delete job migrate --wait=false >/dev/null 2>&1 || true

# Fail: the labelled pod is refused.
labelled_pod asked >"$T/pod.yaml"
if k apply -f "$T/pod.yaml" >"$T/refused.out" 2>&1; then
	fail "a pod labelled rearguard.io/inject=enabled was admitted with no webhook running: $(cat "$T/refused.out")"
fi
say "pod entry (failurePolicy: Fail): kubectl apply said: $(cat "$T/refused.out")"
grep -q 'failed calling webhook "pod.rearguard.io"' "$T/refused.out" || fail "refused for another reason"
[ -z "$(k get pod asked -o name 2>/dev/null)" ] || fail "the refused pod exists"

# rearguard-system: never sent to the webhook.
kubectl -n "$WEBHOOK_NS" apply --dry-run=server -f "$T/pod.yaml" >"$T/system.out" 2>&1 ||
	fail "a labelled pod in $WEBHOOK_NS was refused: $(cat "$T/system.out")"
say "in $WEBHOOK_NS: $(cat "$T/system.out")"
kubectl -n "$WEBHOOK_NS" scale deployment rearguard-webhook --replicas=2 >/dev/null || fail "kubectl scale failed"
kubectl -n "$WEBHOOK_NS" rollout status deployment/rearguard-webhook --timeout=300s >/dev/null ||
	fail "the webhook did not come back within 300 s"
say "scaled back: $(kubectl -n "$WEBHOOK_NS" get deployment rearguard-webhook -o 'jsonpath={.status.readyReplicas}') replicas ready, created with no webhook serving"

# And the labelled pod is admitted again (a dry run: nothing is created).
end=$(($(now_ms) + 60000))
until k apply --dry-run=server -f "$T/pod.yaml" >"$T/back.out" 2>&1; do
	[ "$(now_ms)" -lt "$end" ] || fail "the labelled pod is still refused 60 s after the webhook came back: $(cat "$T/back.out")"
	sleep 1
done
say "webhook back: $(cat "$T/back.out")"
echo "PASS: $TEST_NAME"
