#!/bin/bash
# The webhook adds the agent where it belongs, and nowhere else, judged by
# what the API server stored and what the Jobs did:
#
# - in a namespace labelled rearguard.io/inject=enabled, a Job with a plain
#   istio-proxy (the stand-in pilot-agent) and no rearguard completes; its
#   pod has the rearguard container and the annotation
#   rearguard.io/injected;
# - the same Job in an unlabelled namespace stays active once its app is
#   done: its pod has no rearguard;
# - a CronJob's (batch/v1beta1) Job, made with kubectl create job --from,
#   completes, its pod injected;
# - a bare pod with restartPolicy: Never reaches Succeeded, injected;
# - a Deployment's pods in the labelled namespace are left as they were.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up shared
ns_inject "$NS"
extra_ns off
OFF=$EXTRA

# All at once: the cluster runs them side by side.
START_MS=$(now_ms)
istio_job migrate >"$T/job.yaml"
k apply -f "$T/job.yaml" >/dev/null || fail "kubectl apply of the Job refused"
kubectl -n "$OFF" apply -f "$T/job.yaml" >/dev/null || fail "kubectl apply of the Job in $OFF refused"
{
	printf 'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: hourly}\nspec:\n'
	printf '  schedule: "0 * * * *"\n  concurrencyPolicy: Forbid\n  jobTemplate:\n'
	istio_job unused 'echo syncing; sleep 2; echo synced' | sed -n '/^spec:/,$p' | sed 's/^/    /'
} >"$T/cronjob.yaml"
k apply -f "$T/cronjob.yaml" >/dev/null || fail "kubectl apply of the CronJob refused"
k create job --from=cronjob/hourly hourly-manual >/dev/null || fail "kubectl create job --from=cronjob/hourly failed"
{
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\n'
	istio_job unused 'echo once; sleep 2' | sed -n '/^    spec:/,$p' | sed 's/^    //'
} >"$T/pod.yaml"
k apply -f "$T/pod.yaml" >/dev/null || fail "kubectl apply of the bare pod refused"
{
	printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: server}\nspec:\n  replicas: 1\n'
	printf '  selector: {matchLabels: {app: server}}\n  template:\n    metadata: {labels: {app: server}}\n'
	istio_job unused "sleep 100000" | sed -n "/^    spec:/,\$p" | sed "/restartPolicy/d; s/name: migrate/name: server/"
} >"$T/deployment.yaml"
k apply -f "$T/deployment.yaml" >/dev/null || fail "kubectl apply of the Deployment refused"

# 1. The Job in the labelled namespace: injected, Complete.
job_wait Complete 240 migrate
evidence "a Job with a plain istio-proxy in a namespace labelled rearguard.io/inject=enabled"
got=$(pod_containers "$NS" "$(pod_name)")
say "pod $(pod_name): $got"
[[ $got == "rearguard migrate istio-proxy | injected="[^-]* ]] ||
	fail "the Job's pod: $got, want the agent first and the annotation rearguard.io/injected"
expect_code rearguard 0
expect_code migrate 0
expect_code istio-proxy 0

# The same Job where nobody asked: its app ends, the Job does not.
off_pod=$(job_pod "$OFF" migrate 60)
end=$(($(now_ms) + 180000))
until [ "$(kubectl -n "$OFF" get pod "$off_pod" \
	-o 'jsonpath={.status.containerStatuses[?(@.name=="migrate")].state.terminated.exitCode}')" = 0 ]; do
	[ "$(now_ms)" -lt "$end" ] || fail "the app of the Job in $OFF did not end within 180 s"
	sleep 1
done
sleep 5
got=$(pod_containers "$OFF" "$off_pod")
state=$(kubectl -n "$OFF" get job migrate \
	-o 'jsonpath=active={.status.active} succeeded={.status.succeeded} conditions={.status.conditions[*].type}')
say "unlabelled namespace: pod $off_pod: $got; job: $state"
[ "$got" = "migrate istio-proxy | injected=-" ] || fail "the pod in the unlabelled namespace was changed: $got"
[ "$state" = "active=1 succeeded= conditions=" ] || fail "the Job in the unlabelled namespace: $state, want it active"
kubectl -n "$OFF" delete job migrate --wait=false >/dev/null 2>&1 || true

# 2. The CronJob's Job and the bare pod.
job_wait Complete 240 hourly-manual
evidence "a Job made from a batch/v1beta1 CronJob (kubectl create job --from)"
got=$(pod_containers "$NS" "$(pod_name)")
say "pod $(pod_name): $got"
[[ $got == "rearguard migrate istio-proxy | injected="[^-]* ]] || fail "the CronJob's pod: $got"
expect_code istio-proxy 0
end=$(($(now_ms) + 240000))
until [ "$(k get pod bare -o 'jsonpath={.status.phase}')" = Succeeded ]; do
	phase=$(k get pod bare -o 'jsonpath={.status.phase}')
	[ "$phase" != Failed ] || fail "the bare pod failed"
	[ "$(now_ms)" -lt "$end" ] || fail "the bare pod did not succeed within 240 s (phase $phase)"
	sleep 1
done
got=$(pod_containers "$NS" bare)
say "bare pod (restartPolicy: Never): $(k get pod bare \
	-o 'jsonpath={.status.phase}: {range .status.containerStatuses[*]}{.name}={.state.terminated.exitCode} {end}')| $got"
[[ $got == "rearguard migrate istio-proxy | injected="[^-]* ]] || fail "the bare pod: $got"

# 3. The Deployment's pod: as written.
end=$(($(now_ms) + 120000))
until dpod=$(k get pods -l app=server -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null) && [ -n "$dpod" ]; do
	[ "$(now_ms)" -lt "$end" ] || fail "the Deployment made no pod within 120 s"
	sleep 1
done
got=$(pod_containers "$NS" "$dpod")
say "Deployment's pod $dpod: $got"
[ "$got" = "server istio-proxy | injected=-" ] || fail "the Deployment's pod was changed: $got"
k delete deployment server --wait=false >/dev/null 2>&1 || true
echo "PASS: $TEST_NAME"
