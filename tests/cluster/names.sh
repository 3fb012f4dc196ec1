#!/bin/bash
# Jobs whose containers share one program (busybox sh), as a new user
# writes them, piped through `rearguard inject`, each judged by what
# Kubernetes reports:
#  shared:     an app and a log shipper, both sh;
#  exec:       a sidecar sh -c 'exec busybox sh ...', busybox after its exec;
#  two:        two named sidecars with one program (proxy first, shipper
#              last), stopped in reverse order;
#  many:       five sh apps beside a sh shipper;
#  fourteen:   fourteen containers, two apps failing and one gone at once:
#              the summary's fails_pod names each failed container as
#              kubectl get pod does.
# Each completes (or fails, where its apps fail) within seconds of its last
# app, every exit code the kubelet reports is the summary's, and the apps
# are named by their containers.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox

# A shipper: sh that says when it is stopped and exits 0 then.
SHIPPER='trap "echo got TERM; exit 0" TERM; while :; do sleep 1; done'

# manifest NAME ANNOTATION CONTAINER...: a Job NAME (backoffLimit 0) of the
# containers (each "NAME=SCRIPT", run by sh -c) with rearguard.io/sidecars:
# ANNOTATION, all running as uid 65532, in $T/NAME.yaml.
manifest() {
	local name=$1 ann=$2 c
	shift 2
	{
		printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s}\nspec:\n  backoffLimit: 0\n' "$name"
		printf '  template:\n    metadata:\n      annotations: {rearguard.io/sidecars: "%s"}\n' "$ann"
		# Every container as the agent's uid: busybox runs as root, whom the agent may not signal.
		printf '    spec:\n      restartPolicy: Never\n      securityContext: {runAsUser: 65532}\n      containers:\n'
		for c in "$@"; do
			printf '      - name: %s\n        image: busybox:1.36\n        command: ["sh", "-c", %s]\n' \
				"${c%%=*}" "$(printf '%s' "${c#*=}" | /usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.stdin.read()))')"
		done
	} >"$T/$name.yaml"
}

# run NAME: NAME's manifest through rearguard inject, as a Job of the cluster.
run() {
	"$RG_BUILDDIR/rearguard" inject - <"$T/$1.yaml" >"$T/$1-injected.yaml" 2>"$T/$1-inject.err" ||
		{ cat "$T/$1-inject.err"; fail "rearguard inject failed on $1"; }
	JOB_NAME=$1 job "$T/$1-injected.yaml"
}

# judged NAME CONDITION: waits for NAME's Job, prints the evidence, and
# checks that the kubelet's exit codes are the summary's.
judged() {
	JOB=$1
	job_wait "$2" 120 "$1"
	evidence "names: $1 ($(grep -o 'value: .name=[^}]*' "$T/$1-injected.yaml" | head -n 1))"
}

manifest shared "shipper=signal:TERM" \
	'report=echo reporting; sleep 3' "shipper=$SHIPPER"
manifest exec "web=signal:TERM" \
	'report=echo reporting; sleep 3' "web=exec busybox sh -c '$SHIPPER'"
manifest two "proxy=signal:TERM,shipper=signal:TERM" \
	"proxy=$SHIPPER" 'report=echo reporting; sleep 3' "shipper=$SHIPPER"
manifest many "shipper=signal:TERM" \
	'a1=sleep 1' 'a2=sleep 2' "shipper=$SHIPPER" 'a3=sleep 1' 'a4=sleep 3' 'a5=sleep 2'
fourteen=()
for i in $(seq 12); do
	case $i in
	4) fourteen+=("app$i=echo failing; sleep 1; exit 3") ;;
	# Gone at once: its name may not be read in time, but it is an app all the same.
	6) fourteen+=("app$i=exit 0") ;;
	9) fourteen+=("app$i=sleep 0.5; exit 1") ;;
	*) fourteen+=("app$i=sleep 2") ;;
	esac
done
manifest fourteen "shipper=signal:TERM" "${fourteen[@]}" "shipper=$SHIPPER"

for name in shared exec two many fourteen; do
	run "$name"
done

judged shared Complete
expect_code report 0
expect_code shipper 0
expect_code rearguard 0
codes_agree app:0=report shipper=shipper
summary_is report apps 0 name
summary_is stopped sidecars 0 outcome
in_order "$(finished_ms report)" "$(finished_ms shipper)" - "the app finished -> the shipper finished"
# Within seconds, as the kubelet times them (whole seconds), with room for a loaded node: the
# misnamed sidecar of 0.3.0's trial waited out --sidecar-wait, 2 minutes.
[ $(($(finished_ms rearguard) - $(finished_ms report))) -le 15000 ] || fail "shared: the agent finished long after the app"

judged exec Complete
expect_code report 0
expect_code web 0
codes_agree app:0=report web=web
summary_is report apps 0 name
summary_is stopped sidecars 0 outcome
[ $(($(finished_ms rearguard) - $(finished_ms report))) -le 15000 ] || fail "exec: the agent finished long after the app"

judged two Complete
expect_code proxy 0
expect_code shipper 0
expect_code report 0
codes_agree app:0=report proxy=proxy shipper=shipper
ship=$(log_ms shipper "got TERM")
prox=$(log_ms proxy "got TERM")
[ -n "$ship" ] && [ -n "$prox" ] || fail "two: a sidecar never logged its SIGTERM"
# The runtime times a line when it reads it: the order of two stops a moment apart shows.
in_order "$ship" "$prox" - "the shipper stopped -> the proxy stopped"
[ $(($(finished_ms rearguard) - $(finished_ms report))) -le 15000 ] || fail "two: the agent finished long after the app"

judged many Complete
for a in a1 a2 a3 a4 a5; do expect_code "$a" 0; done
expect_code shipper 0
summary
[ "$(jq_py "$T/summary.json" 'len(d["apps"])')" = 5 ] || fail "many: not five apps in the summary"
[ "$(jq_py "$T/summary.json" 'sorted(a["name"] for a in d["apps"])')" = '["a1", "a2", "a3", "a4", "a5"]' ] ||
	fail "many: the apps are not named by their containers: $(jq_py "$T/summary.json" 'd["apps"]')"

judged fourteen Failed
expect_code app4 3
expect_code app9 1
expect_code shipper 0
expect_code rearguard 0
summary
# 14 containers: the short form of the summary (docs/decisions.md), apps counted.
[ "$(jq_py "$T/summary.json" 'd["apps"] if isinstance(d["apps"], int) else len(d["apps"])')" = 12 ] || fail "fourteen: not twelve apps in the summary"
[ "$(jq_py "$T/summary.json" 'sorted((f["name"], f["exit_code"]) for f in d["fails_pod"] if f["role"] == "app")')" = '[["app4", 3], ["app9", 1]]' ] ||
	fail "fourteen: fails_pod does not name the failed containers: $(jq_py "$T/summary.json" 'd["fails_pod"]')"
exit 0
