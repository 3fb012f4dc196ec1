#!/bin/bash
# kubectl apply --dry-run=server of a pod the webhook changes (sideEffects:
# None lets the API server call it in a dry run): kubectl prints the
# webhook's notes as warnings ("Warning: ..."), the pod it shows has the
# agent and the annotation rearguard.io/injected, and nothing is created.
# The pod: a Cloud SQL Auth Proxy v1 (cloud_sql_proxy), which has no stop
# endpoint, so the webhook has something to say.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

image_busybox
webhook_up shared
ns_inject "$NS"

cat >"$T/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: ledger-close
spec:
  restartPolicy: Never
  containers:
    - name: close
      image: ${IMAGE_FOR[busybox]}
      imagePullPolicy: Never
      command: ["sh", "-c", "echo closing"]
    - name: cloudsql-proxy
      image: gcr.io/cloudsql-docker/gce-proxy:1.37.0
      command: ["/cloud_sql_proxy", "-instances=project:region:ledger=tcp:5432"]
EOF
k apply --dry-run=server -o json -f "$T/pod.yaml" >"$T/dry.json" 2>"$T/dry.err" ||
	fail "kubectl apply --dry-run=server failed: $(cat "$T/dry.err")"
say "kubectl apply --dry-run=server printed on stderr:"
sed 's/^/#   /' "$T/dry.err"
grep -q '^Warning: ' "$T/dry.err" || fail "no warning printed"
grep '^Warning: ' "$T/dry.err" | grep -qi 'cloud_sql_proxy\|cloudsql' || fail "no warning about the proxy"
got=$(jq_py "$T/dry.json" '" ".join(c["name"] for c in d["spec"]["containers"]) + " | injected=" + (d["metadata"].get("annotations") or {}).get("rearguard.io/injected", "-")')
say "the pod as the dry run returned it: $got"
[[ $got == "rearguard close cloudsql-proxy | injected="[^-]* ]] || fail "the dry run's pod: $got"
left=$(k get pods -o name)
[ -z "$left" ] || fail "the dry run created something: $left"
say "pods in $NS after the dry run: none"
echo "PASS: $TEST_NAME"
