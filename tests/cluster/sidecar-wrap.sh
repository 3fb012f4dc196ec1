#!/bin/bash
# Plain sidecars that die of SIGTERM, through rearguard inject and through
# the webhook, side by side on the cluster, judged by the Jobs' conditions
# and the containers' exit codes as Kubernetes reports them:
#
# - wrap-never, wrap-onfailure (inject), hook-never, hook-onfailure (the
#   webhook, in a namespace labelled rearguard.io/inject=enabled; inject's
#   pods, which have the agent already, it leaves alone): busybox httpd
#   behind sh -c 'exec ...',
#   tail -n+1 -F on the app's log file, sleep infinity and a program that
#   ignores SIGTERM, each with its command in the spec: inject runs each
#   under rearguard sidecar, and the Job is Complete with every container's
#   exit code 0, under Never and under OnFailure (no sidecar restarted
#   after its stop); the agent's summary says how each program ended;
# - bare: the same shapes given as args (the image's entrypoint), as the
#   agent's uid so that it may signal them: inject cannot wrap them and
#   warns; the agent says before each stop what it
#   will do, and the Job is Failed with the codes both said (143, and 137
#   for the one that ignores SIGTERM);
# - flaky: a wrapped sidecar that exits 1 on its own while the app runs
#   still fails the pod.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

image_busybox
webhook_up shared
ns_inject "$NS"

# wrap_job NAME POLICY command|args [APP-SCRIPT]: the Job, its sidecars' programs given as command or as args.
wrap_job() {
	local name=$1 policy=$2 how=$3 app=${4:-'for i in 1 2 3 4 5; do echo line $i >>/logs/report.log; sleep 1; done'}
	# Unwrapped, the agent signals them itself: they run as its uid (busybox's image runs as root).
	local uid='{}'
	[ "$how" = command ] || uid='{runAsUser: 65532}'
	cat <<-EOF
		apiVersion: batch/v1
		kind: Job
		metadata:
		  name: $name
		spec:
		  backoffLimit: 0
		  template:
		    metadata:
		      annotations:
		        rearguard.io/sidecars: "web;shipper;idle;deaf"
		    spec:
		      restartPolicy: $policy
		      securityContext: $uid
		      volumes:
		        - {name: logs, emptyDir: {}}
		      containers:
		        - name: report
		          image: busybox
		          command: ["sh", "-c", "$app"]
		          volumeMounts: [{name: logs, mountPath: /logs}]
		        - name: web
		          image: busybox
		          $how: ["sh", "-c", "exec busybox httpd -f -p 8080 -h /tmp"]
		        - name: shipper
		          image: busybox
		          $how: ["tail", "-n+1", "-F", "/logs/report.log"]
		          volumeMounts: [{name: logs, mountPath: /logs, readOnly: true}]
		        - name: idle
		          image: busybox
		          $how: ["sleep", "infinity"]
		        - name: deaf
		          image: busybox
		          $how: ["sh", "-c", "trap '' TERM; exec sleep 100000"]
	EOF
}

# submit NAME: the Job in $T/src-NAME.yaml through rearguard inject, then applied; inject's notes in $T/NAME.err.
submit() {
	"$RG_BUILDDIR/rearguard" inject - <"$T/src-$1.yaml" >"$T/inj-$1.yaml" 2>"$T/$1.err" ||
		{ cat "$T/$1.err"; fail "rearguard inject failed on $1"; }
	JOB_NAME=$1 job_yaml "$T/inj-$1.yaml"
	apply "$T/$1.yaml"
}

# full_summary: the agent's whole summary (its last log line, JSON or text), in $T/full.json: the
# termination message of a pod of seven containers is the short form.
full_summary() {
	ctr_logs rearguard | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    try:
        d = json.loads(line)
        if d.get("msg") == "finished":
            json.dump(d["summary"], sys.stdout)
    except ValueError:
        if " finished " in line and "summary=" in line:
            json.dump(json.JSONDecoder().raw_decode(line[line.index("summary=") + 8:])[0], sys.stdout)
' >"$T/full.json"
	[ -s "$T/full.json" ] || fail "no finished line in the agent's log"
}

# program SIDECAR: "signal_fate program exit_code" of the sidecar in the whole summary.
program() {
	jq_py "$T/full.json" "' '.join(str(x) for x in [(s['signal_fate'], s['program'], s['exit_code']) for s in d['sidecars'] if s['name'] == '$1'][0])"
}

wrap_job wrap-never Never command >"$T/src-wrap-never.yaml"
wrap_job wrap-onfailure OnFailure command >"$T/src-wrap-onfailure.yaml"
wrap_job bare Never args >"$T/src-bare.yaml"
cat >"$T/src-flaky.yaml" <<-EOF
	apiVersion: batch/v1
	kind: Job
	metadata:
	  name: flaky
	spec:
	  backoffLimit: 0
	  template:
	    metadata:
	      annotations:
	        rearguard.io/sidecars: "flaky"
	    spec:
	      restartPolicy: Never
	      containers:
	        - name: report
	          image: busybox
	          command: ["sh", "-c", "sleep 20"]
	        - name: flaky
	          image: busybox
	          command: ["sh", "-c", "sleep 3; exit 1"]
EOF
for j in wrap-never wrap-onfailure bare flaky; do
	submit "$j"
done
# The webhook's, as written: the webhook wraps them as the API server creates their pods.
wrap_job hook-never Never command >"$T/src-hook-never.yaml"
wrap_job hook-onfailure OnFailure command >"$T/src-hook-onfailure.yaml"
for j in hook-never hook-onfailure; do
	AGENT= JOB_NAME=$j job_yaml "$T/src-$j.yaml"
	apply "$T/$j.yaml"
done

# What inject said: the wrap of each command, and the fixes where there is none.
for c in web shipper idle deaf; do
	grep -q "container $c: its command now runs under rearguard sidecar" "$T/wrap-never.err" ||
		fail "inject did not say it wrapped $c: $(cat "$T/wrap-never.err")"
	grep -q "warning: .*container $c is stopped by SIGTERM and its spec gives no command.*exit code 143 fails the pod" \
		"$T/bare.err" || fail "inject did not warn that $c cannot be wrapped: $(cat "$T/bare.err")"
done

for j in wrap-never wrap-onfailure hook-never hook-onfailure; do
	job_wait Complete 300 "$j"
	evidence "$j: four plain sidecars that die of SIGTERM or ignore it, under rearguard sidecar"
	got=$(ctr web 'c["name"]' >/dev/null; jq_py "$T/pods.json" '[c for c in d["items"][0]["spec"]["containers"] if c["name"] == "web"][0]["command"][:2]')
	[ "$got" = '["/opt/rearguard/rearguard", "sidecar"]' ] || fail "$j: web's command begins $got"
	expect_code rearguard-install 0
	for c in rearguard report web shipper idle deaf; do
		expect_code "$c" 0
		[ "$(ctr "$c" 'c["restartCount"]')" = 0 ] || fail "$j: container $c was restarted"
	done
	full_summary
	for c in web shipper idle; do
		got=$(program "$c")
		[ "$got" = "wrapped signal:TERM 0" ] || fail "$j: sidecar $c: $got, want wrapped signal:TERM 0"
	done
	got=$(program deaf)
	[ "$got" = "wrapped timeout 0" ] || fail "$j: sidecar deaf: $got, want wrapped timeout 0"
	ctr_logs deaf | grep -q "still ran when the stop timeout passed" || fail "$j: deaf's wrapper did not say it killed it"
done

job_wait Failed 300 bare
evidence "bare: the same shapes as args (the image's entrypoint): not wrapped, warned"
expect_code rearguard 0
expect_code report 0
for c in web shipper idle; do
	expect_code "$c" 143
	ctr_logs rearguard | grep -q "$c's main process has no handler for SIGTERM: it dies of it and its container exits 143" ||
		fail "the agent did not say that $c dies of SIGTERM"
done
expect_code deaf 137
ctr_logs rearguard | grep -q "deaf's main process ignores SIGTERM.*exits 137" ||
	fail "the agent did not say that deaf ignores SIGTERM"
full_summary
[ "$(program web)" = "dies None 143" ] || fail "bare: web: $(program web)"
[ "$(program deaf)" = "ignores None 137" ] || fail "bare: deaf: $(program deaf)"

job_wait Failed 300 flaky
evidence "flaky: a wrapped sidecar that exits 1 on its own while the app runs"
expect_code flaky 1
expect_code report 0
expect_code rearguard 0
ctr_logs flaky | grep -q "ended before any stop" || fail "flaky's wrapper did not say it failed before any stop"
