#!/bin/bash
# The install as docs/webhook.md shows it: `tools/cluster webhook` with no
# options, on a cluster where the webhook was never installed (its
# configuration and its namespace, the CA with it, are deleted first). It
# builds the images itself (tools/image: localhost/rearguard:ARCH, the
# agent's, and localhost/rearguard-webhook:ARCH), applies the server of
# manifests/webhook/kubernetes-1.20, and tools/webhook-cert applies the
# configuration once a replica is ready. Judged by what the API server
# stores:
#
# - the configuration was created after the Secret and after a replica of
#   the webhook was ready (the install order), with the CA of the Secret
#   rearguard-webhook-ca as each entry's caBundle (namespace, pod and
#   services);
# - the PodDisruptionBudget was applied as policy/v1beta1 (the 1.20
#   overlay of a policy/v1 base);
# - a pod labelled rearguard.io/inject=enabled, an app and a plain
#   istio-proxy, is stored with the agent first, of the image tools/cluster
#   built, and marked rearguard.io/injected. It never runs (a node selector
#   no node has): its admission is what is tested.
#
# The webhook is given back as the other webhook tests have it (this
# tree's images, tools/cluster webhook) at the end, also on failure.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up exclusive

# webhook_as_found: the webhook with this tree's images again (a new
# install when the one under test failed halfway).
webhook_as_found() {
	exec 7>"$RG_BUILDDIR/cluster-load.lock"
	flock 7
	timeout -k 10 1200 "$CLUSTER" webhook --agent-image "$BUILT_IMAGE" --webhook-image "$WEBHOOK_IMAGE" \
		>"$T/restore.log" 2>&1 6>&- 7>&- || say "tools/cluster webhook (back to this tree's images) failed: $(tail -n 1 "$T/restore.log")"
	exec 7>&-
}
at_exit webhook_as_found

kubectl delete mutatingwebhookconfiguration rearguard --ignore-not-found >/dev/null ||
	fail "cannot delete the configuration rearguard"
RG_KUBECTL_TIMEOUT=200 kubectl delete namespace "$WEBHOOK_NS" --ignore-not-found --timeout=180s >/dev/null ||
	fail "namespace $WEBHOOK_NS not gone after 180 s"
say "no webhook: configuration rearguard and namespace $WEBHOOK_NS deleted"

exec 7>"$RG_BUILDDIR/cluster-load.lock"
flock 7
start=$(now_ms)
timeout -k 10 2400 "$CLUSTER" webhook >"$T/install.log" 2>&1 6>&- 7>&- ||
	{ exec 7>&-; tail -n 30 "$T/install.log"; fail "tools/cluster webhook (no options) failed"; }
exec 7>&-
say "tools/cluster webhook, no options: $(($(now_ms) - start)) ms"
grep -E '^tools/(cluster|webhook-cert): ' "$T/install.log" | sed 's/^/#   /'

# The install order, by the API server's timestamps (whole seconds: equal
# is in order).
config=$(kubectl get mutatingwebhookconfiguration rearguard -o 'jsonpath={.metadata.creationTimestamp}') ||
	fail "no configuration rearguard after the install"
secret=$(kubectl -n "$WEBHOOK_NS" get secret rearguard-webhook-tls -o 'jsonpath={.metadata.creationTimestamp}') ||
	fail "no Secret rearguard-webhook-tls after the install"
ready=$(kubectl -n "$WEBHOOK_NS" get pods -l app.kubernetes.io/name=rearguard-webhook \
	-o 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\n"}{end}' |
	sort | head -n 1)
say "Secret created $secret, first replica ready $ready, configuration created $config"
[ -n "$ready" ] || fail "no replica of the webhook is ready"
[[ ! $config < $secret ]] || fail "the configuration ($config) was created before the Secret ($secret)"
[[ ! $config < $ready ]] || fail "the configuration ($config) was created before a replica was ready ($ready)"

ca=$(kubectl -n "$WEBHOOK_NS" get secret rearguard-webhook-ca -o 'jsonpath={.data.ca\.crt}')
bundles=$(kubectl get mutatingwebhookconfiguration rearguard \
	-o 'jsonpath={range .webhooks[*]}{.name} {.clientConfig.caBundle} {.clientConfig.service.namespace}{"\n"}{end}')
names=$(cut -d' ' -f1 <<<"$bundles" | paste -sd' ')
[ "$names" = "namespace.rearguard.io pod.rearguard.io services.rearguard.io" ] ||
	fail "the configuration's entries are $names, want namespace.rearguard.io pod.rearguard.io services.rearguard.io"
while read -r name bundle namespace; do
	[ "$bundle" = "$ca" ] || fail "entry $name: its caBundle is not the CA of the Secret rearguard-webhook-ca"
	[ "$namespace" = "$WEBHOOK_NS" ] || fail "entry $name calls a Service in $namespace"
done <<<"$bundles"
say "entries $names: the CA as caBundle, the Service in $WEBHOOK_NS"

applied=$(kubectl -n "$WEBHOOK_NS" get poddisruptionbudget rearguard-webhook \
	-o 'jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}') ||
	fail "no PodDisruptionBudget rearguard-webhook"
[[ $applied == *'"apiVersion":"policy/v1beta1"'* ]] || fail "the PodDisruptionBudget was applied as: $applied"
say "PodDisruptionBudget applied as policy/v1beta1"

# A labelled pod, created for real: the API server stores what the webhook made of it.
agent=localhost/rearguard:$ARCH
labelled_pod asked nowhere istio >"$T/pod.yaml"
k create -f "$T/pod.yaml" >"$T/create.out" 2>&1 || fail "the labelled pod was refused: $(cat "$T/create.out")"
sed 's/^/#   /' "$T/create.out"
got=$(pod_containers "$NS" asked)
image=$(k get pod asked -o 'jsonpath={.spec.containers[0].image}')
say "stored: $got; the agent's image $image"
[[ $got == "rearguard app istio-proxy | injected="[0-9]* ]] || fail "the labelled pod was stored as $got"
[ "$image" = "$agent" ] || fail "the agent's image is $image, not $agent (what tools/cluster built)"
echo "PASS: $TEST_NAME"
