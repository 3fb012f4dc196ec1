#!/bin/bash
# On the one-node Kubernetes 1.20 of tools/cluster, with rearguard's webhook
# installed (tools/cluster webhook, as the webhook's cluster tests do): the
# time the API server takes to create a Job's pod (an app and a plain
# istio-proxy) in a namespace labelled rearguard.io/inject=enabled, where
# the webhook reviews and patches it, against an unlabelled one, where no
# webhook is called. Each create is a dry run (dryRun=All: admitted,
# defaulted, validated, not stored, so nothing is scheduled), sent by curl
# with the admin's certificate on a fresh connection, labelled and
# unlabelled in turns so that both share the machine's load alike.
#
#   RG_BUILDDIR=build RG_SRCDIR=. bench/webhook-cluster.sh [REQUESTS]   (default 200 each)
#
# Prints p50, p90 and p99 of each in milliseconds, the difference of the
# medians, and what the API server's own histogram of the webhook's calls
# says (apiserver_admission_webhook_admission_duration_seconds). Reports,
# never judges.
set -euo pipefail
RG_BUILDDIR=$(cd "${RG_BUILDDIR:?RG_BUILDDIR: the build tree}" && pwd)
RG_SRCDIR=$(cd "${RG_SRCDIR:?RG_SRCDIR: the source tree}" && pwd)
export RG_BUILDDIR RG_SRCDIR
requests=${1:-200}
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up shared
ns_inject "$NS"
extra_ns plain
PLAIN=$EXTRA

state=$RG_CLUSTER_STATE
server=$(kubectl config view --raw -o 'jsonpath={.clusters[0].cluster.server}')
[ -n "$server" ] || fail "no API server address in the kubeconfig"
istio_job bench | python3 -c '
import json, sys, yaml
job = yaml.safe_load(sys.stdin)
tmpl = job["spec"]["template"]
print(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "bench-"}, "spec": tmpl["spec"]}))
' >"$T/pod.json"

# create NAMESPACE: one dry-run create; prints its time in ms, or fails.
create() {
	local out
	# In the cluster's network namespace, where the API server's address is.
	out=$("$CLUSTER" exec curl -sS -o "$T/answer.json" -w '%{http_code} %{time_total}' --max-time 30 --cacert "$state/pki/ca.crt" \
		--cert "$state/pki/admin.crt" --key "$state/pki/admin.key" -H 'Content-Type: application/json' \
		--data-binary @"$T/pod.json" "$server/api/v1/namespaces/$1/pods?dryRun=All") ||
		fail "curl to the API server failed"
	[ "${out%% *}" = 201 ] || fail "a dry-run create in $1 answered ${out%% *}: $(head -c 300 "$T/answer.json")"
	awk -v s="${out#* }" 'BEGIN { printf "%.3f\n", s * 1000 }'
}

# The labelled namespace's pod is patched: a create there that gave no agent measures nothing.
create "$NS" >/dev/null
grep -Eq '"name": ?"rearguard"' "$T/answer.json" || fail "the labelled namespace's dry-run pod has no rearguard"
create "$PLAIN" >/dev/null
grep -Eq '"name": ?"rearguard"' "$T/answer.json" && fail "the unlabelled namespace's dry-run pod has rearguard"

: >"$T/on.ms"
: >"$T/off.ms"
for ((i = 0; i < requests; i++)); do
	create "$NS" >>"$T/on.ms"
	create "$PLAIN" >>"$T/off.ms"
done

# pct FILE P: the P-th percentile of the numbers in FILE (nearest rank).
pct() {
	sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END { i = int((p / 100) * NR + 0.999999); if (i < 1) i = 1; print v[i] }'
}
printf '%-32s %8s %8s %8s\n' "pod create (dry run), ms" p50 p90 p99
printf '%-32s %8s %8s %8s\n' "labelled: webhook reviews" "$(pct "$T/on.ms" 50)" "$(pct "$T/on.ms" 90)" "$(pct "$T/on.ms" 99)"
printf '%-32s %8s %8s %8s\n' "unlabelled: no webhook" "$(pct "$T/off.ms" 50)" "$(pct "$T/off.ms" 90)" "$(pct "$T/off.ms" 99)"
awk -v a="$(pct "$T/on.ms" 50)" -v b="$(pct "$T/off.ms" 50)" -v n="$requests" \
	'BEGIN { printf "added at p50: %.3f ms (%d requests each)\n", a - b, n }'
# The API server's view of the webhook's calls (all since it started).
kubectl get --raw /metrics 2>/dev/null |
	awk '/^apiserver_admission_webhook_admission_duration_seconds_(sum|count)\{.*name="namespace.rearguard.io".*type="admit"/ {
		split($0, a, " "); if ($0 ~ /_sum/) s = a[2]; else c = a[2] }
	     END { if (c > 0) printf "API server, calls to namespace.rearguard.io: %d, mean %.3f ms\n", c, s / c * 1000 }'
