#!/bin/bash
# rearguard explain on what Kubernetes 1.20 reports: each case made live as
# a Job in the test's namespace, its pods taken with kubectl get -o json
# once the state it is about is there, and explain's verdict checked
# against tests/explain/cases/cluster-NAME.verdict (written before the
# cases were first made):
#
#   plain-proxy     the Cloud SQL proxy stand-in beside an app, no rearguard: the app exits
#   job-running     the same while the app still runs
#   not-permitted   the agent (uid 65532) and a signal-stopped sidecar that runs as root
#   stop-404        Linkerd's proxy stand-in, shutdown endpoint off, as uid 2102
#   ignores-term    a sidecar that ignores SIGTERM: killed, 137, the pod failed
#   gate-timeout    the start gate's hook, for a proxy that is never ready
#   init-sidecar    the proxy in initContainers without restartPolicy: Always
#
# RG_EXPLAIN_CAPTURE=DIR keeps each case's JSON as DIR/cluster-NAME.json
# with the --now it was judged at in DIR/cluster-NAME.args: the golden
# inputs of tests/explain/golden.sh were taken so.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_busybox
image_agent
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy
image_proxy cr.l5d.io/linkerd/proxy /usr/lib/linkerd/linkerd2-proxy
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
image_standin example.com/stubborn /usr/bin/stubborn --on TERM:ignore

BUSYBOX=${IMAGE_FOR[busybox]}
AGENT_IMAGE=${IMAGE_FOR[registry.example.com/rearguard]}
SQL=${IMAGE_FOR[gcr.io/cloud-sql-connectors/cloud-sql-proxy]}

# job NAME APP-SECONDS CONTAINERS-YAML [POD-SPEC-YAML]: a Job of one pod, never retried.
job_of() {
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 5
      volumes: [{name: rearguard, emptyDir: {medium: Memory, sizeLimit: 1Mi}}]
${4:-}
      containers:
$3
        - {name: app, image: $BUSYBOX, imagePullPolicy: Never, command: ["sh", "-c", "echo working; sleep $2; echo done"]}
EOF
}

# The agent, as inject writes it, with its configuration in REARGUARD_*.
agent() {
	cat <<EOF
        - name: rearguard
          image: $AGENT_IMAGE
          imagePullPolicy: Never
          env:
            - {name: REARGUARD_APPS, value: "1"}
            - {name: REARGUARD_RESTART_POLICY, value: Never}
            - {name: REARGUARD_SIDECARS, value: "$1"}
            - {name: REARGUARD_STOP_TIMEOUT, value: 2s}
            - {name: REARGUARD_KILL_AFTER, value: 2s}
            - {name: REARGUARD_LOG_FORMAT, value: json}
          volumeMounts: [{name: rearguard, mountPath: /var/run/rearguard}]
          securityContext: {runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true}
${2:-}
EOF
}

sql() {
	echo "        - {name: cloud-sql-proxy, image: $SQL, imagePullPolicy: Never, args: [\"--port=5432\", \"p:r:i\"${1:-}]}"
}

cluster_up
load_images
START_MS=$(now_ms)
{
	job_of plain-proxy 2 "$(sql)"
	echo ---
	job_of job-running 3600 "$(sql)"
	echo ---
	job_of not-permitted 2 "$(agent "name=fluent-bit,match=fluent-bit,stop=signal:TERM,container=fluent-bit")
        - {name: fluent-bit, image: ${IMAGE_FOR[cr.fluentbit.io/fluent/fluent-bit]}, imagePullPolicy: Never, securityContext: {runAsUser: 0}}" \
		"      shareProcessNamespace: true"
	echo ---
	job_of stop-404 2 "$(agent linkerd)
        - {name: linkerd-proxy, image: ${IMAGE_FOR[cr.l5d.io/linkerd/proxy]}, imagePullPolicy: Never, securityContext: {runAsUser: 2102}}" \
		"      shareProcessNamespace: true"
	echo ---
	job_of ignores-term 2 "$(agent "name=stubborn,match=stubborn,stop=signal:TERM,container=stubborn")
        - {name: stubborn, image: ${IMAGE_FOR[example.com/stubborn]}, imagePullPolicy: Never, securityContext: {runAsUser: 65532}}" \
		"      shareProcessNamespace: true"
	echo ---
	# The gate's order: the sidecar, then the agent and its hook, then the apps.
	job_of gate-timeout 2 "$(sql)
$(agent cloudsql "          lifecycle: {postStart: {exec: {command: [/rearguard, wait, ready, --timeout, 10s]}}}")" \
		"      shareProcessNamespace: true"
	echo ---
	job_of init-sidecar 2 "" "      initContainers:
$(sql)"
} >"$T/jobs.yaml"
k apply -f "$T/jobs.yaml" >/dev/null || { cat "$T/jobs.yaml"; fail "kubectl apply refused the Jobs"; }

# state_of JOB PYTHON-EXPRESSION: the expression over the Job's pod p (st(NAME): a container's
# state, "running", "terminated:CODE", "waiting", or None), printed.
state_of() {
	k get pods -l "job-name=$1" -o json >"$T/$1.json" 2>/dev/null || return 1
	/usr/bin/python3 - "$T/$1.json" "$2" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
if not items:
    print("none"); sys.exit(0)
p = items[0]
def st(name):
    for c in p["status"].get("initContainerStatuses", []) + p["status"].get("containerStatuses", []):
        if c["name"] == name:
            s = c["state"]
            if "terminated" in s:
                return "terminated:%d" % s["terminated"]["exitCode"]
            return "running" if "running" in s else "waiting"
    return None
print(eval(sys.argv[2]))
PY
}

# until_state JOB SECONDS PYTHON-EXPRESSION: waits until the expression is True.
until_state() {
	local end=$(($(now_ms) + $2 * 1000)) got
	until [ "$(got=$(state_of "$1" "$3"); echo "$got")" = True ]; do
		[ "$(now_ms)" -lt "$end" ] || { evidence "$1" || true; fail "job $1: not in the state within $2 s: $3"; }
		sleep 1
	done
}

# explain_case JOB: explain's verdict on the Job's pods as kubectl prints them, against the case's.
explain_case() {
	local name=$1 want now got rc=0
	want=$(cat "$RG_SRCDIR/tests/explain/cases/cluster-$name.verdict")
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	k get pods -l "job-name=$name" -o json >"$T/$name.json" || fail "kubectl get pods failed"
	if [ -n "${RG_EXPLAIN_CAPTURE:-}" ]; then
		cp "$T/$name.json" "$RG_EXPLAIN_CAPTURE/cluster-$name.json"
		echo "--now $now" >"$RG_EXPLAIN_CAPTURE/cluster-$name.args"
	fi
	# Exit status 1: a pod hung or at risk, as all but none of these are.
	"$RG_BUILDDIR/rearguard" explain --now "$now" "$T/$name.json" >"$T/$name.txt" || rc=$?
	[ "${rc:-0}" = 1 ] || fail "$name: explain exited ${rc:-0}, want 1: $(cat "$T/$name.txt")"
	sed 's/^/# /' "$T/$name.txt"
	"$RG_BUILDDIR/rearguard" explain -o json --now "$now" "$T/$name.json" >"$T/$name.out" || true
	got=$(/usr/bin/python3 -c '
import json, sys
it = json.load(open(sys.argv[1]))["items"][0]
print(it["verdict"], it["reason"], it["container"] or "-")' "$T/$name.out") || fail "explain's JSON for $name"
	[ "$got" = "$want" ] || fail "$name: explain says \"$got\", want \"$want\""
	say "$name: $got"
}

JOB=plain-proxy
until_state plain-proxy 180 'st("app") == "terminated:0" and st("cloud-sql-proxy") == "running"'
until_state job-running 180 'st("app") == "running" and st("cloud-sql-proxy") == "running"'
until_state not-permitted 180 'st("app") == "terminated:0" and (st("rearguard") or "").startswith("terminated")'
until_state stop-404 180 'st("app") == "terminated:0" and (st("rearguard") or "").startswith("terminated")'
until_state ignores-term 180 'p["status"].get("phase") == "Failed"'
until_state gate-timeout 240 'st("app") == "terminated:0" and st("rearguard") != "running"'
until_state init-sidecar 180 'st("cloud-sql-proxy") == "running"'
for c in plain-proxy job-running not-permitted stop-404 ignores-term gate-timeout init-sidecar; do
	explain_case "$c"
done
echo "PASS: $TEST_NAME"
