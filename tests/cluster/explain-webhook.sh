#!/bin/bash
# rearguard explain on a pod the webhook did not see: the test's namespace
# labelled rearguard.io/inject=enabled, the webhook scaled to zero
# (namespace.rearguard.io has failurePolicy: Ignore, so the pod is created
# as written), a Job with a plain istio-proxy whose app still runs. The
# namespace and the pod, as kubectl get prints them, must make explain say
# tests/explain/cases/cluster-webhook-missed.verdict (written before the
# case was first made); RG_EXPLAIN_CAPTURE=DIR keeps the input there.
# The webhook is scaled back to two replicas at the end, also on failure.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up exclusive
ns_inject "$NS"

webhook_down
JOB=webhook-missed
istio_job "$JOB" 'echo migrating; sleep 3600' >"$T/job.yaml"
k apply -f "$T/job.yaml" >/dev/null || fail "kubectl apply of the Job refused"
end=$(($(now_ms) + 180000))
until pod_json && [ "$(jq_py "$T/pods.json" 'd["items"] and "running" in status("migrate")["state"] and "running" in status("istio-proxy")["state"]')" = True ]; do
	[ "$(now_ms)" -lt "$end" ] || fail "the Job's pod does not run within 180 s"
	sleep 1
done
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# What kubectl get namespaces,pods prints: one List of both.
kubectl get namespace "$NS" -o json >"$T/ns.json" || fail "kubectl get namespace failed"
pod_json
/usr/bin/python3 -c '
import json, sys
pods = json.load(open(sys.argv[2]))
pods["items"].append(json.load(open(sys.argv[1])))
json.dump(pods, open(sys.argv[3], "w"), indent=4)' "$T/ns.json" "$T/pods.json" "$T/case.json" || fail "cannot make the List"
if [ -n "${RG_EXPLAIN_CAPTURE:-}" ]; then
	cp "$T/case.json" "$RG_EXPLAIN_CAPTURE/cluster-webhook-missed.json"
	echo "--now $now" >"$RG_EXPLAIN_CAPTURE/cluster-webhook-missed.args"
fi
rc=0
"$RG_BUILDDIR/rearguard" explain --now "$now" "$T/case.json" >"$T/case.txt" || rc=$?
sed 's/^/# /' "$T/case.txt"
[ "$rc" = 1 ] || fail "explain exited $rc, want 1"
"$RG_BUILDDIR/rearguard" explain -o json --now "$now" "$T/case.json" >"$T/case.out" || true
got=$(/usr/bin/python3 -c '
import json, sys
it = [i for i in json.load(open(sys.argv[1]))["items"] if i["kind"] == "Pod"][0]
print(it["verdict"], it["reason"], it["container"] or "-")' "$T/case.out") || fail "explain's JSON"
want=$(cat "$RG_SRCDIR/tests/explain/cases/cluster-webhook-missed.verdict")
[ "$got" = "$want" ] || fail "explain says \"$got\", want \"$want\""
say "webhook-missed: $got"
echo "PASS: $TEST_NAME"
