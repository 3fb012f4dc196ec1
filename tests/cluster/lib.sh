# Sourced by every cluster test: a real Job on a real one-node Kubernetes
# 1.20 (tools/cluster), judged by what Kubernetes reports: the Job's
# conditions, the pod's phase, its containerStatuses (exit codes, restart
# counts, terminated messages, start and finish times) and the logs.
#
#   . "$RG_SRCDIR/tests/cluster/lib.sh"
#   image_agent; image_busybox
#   image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
#   job manifests/job-signal-helper.yaml --command 'report=["sh", "-c", "sleep 1"]'
#   job_wait Complete 120
#   expect_code report 0
#
# The images are those of the end-to-end tests (tests/e2e/lib.sh builds
# them: the agent's from container/Dockerfile, stand-ins and busybox by
# podman import); they are loaded into the cluster's containerd and the
# pods use imagePullPolicy: Never. Every test has its own namespace,
# deleted on exit. On failure the Job, the pod, the events and every
# container's logs (and its previous attempt's) are printed.
#
# The cluster is brought up by the first test that needs it, behind a lock
# in the build tree (tools/cluster up, its log in BUILDDIR/cluster.log), and
# left up for the next tests; tools/check brings it down at its end. The
# tests skip (exit 77) with the reason without root, podman or the static
# toolchain (as the end-to-end tests), without tools/cluster, when no
# cluster could come up, and with --disable-e2e.

# The end-to-end tests' prerequisites, image building and helpers; what
# differs on a cluster is defined below, after them.
# shellcheck source=tests/e2e/lib.sh
. "$RG_SRCDIR/tests/e2e/lib.sh"

NS=rgc-$ID
NS=${NS:0:63}
CLUSTER=$RG_SRCDIR/tools/cluster
# The cluster's state (containerd, etcd, the kubelet's) belongs to this
# build tree, so that two trees do not share one cluster by accident.
RG_CLUSTER_STATE=${RG_CLUSTER_STATE:-/var/tmp/rearguard-cluster-$(printf '%s' "$RG_BUILDDIR" | cksum | cut -d' ' -f1)}
export RG_CLUSTER_STATE
NS_MADE=
LOADED=
KEPT_PODS=
FOLLOW_PIDS=()

[ -x "$CLUSTER" ] || skip "tools/cluster is not in this tree"
# The image without its unit tests: the end-to-end tests' build ran them.
export RG_IMAGE_CHECK=no

# cluster_teardown: the tests' finalizers off the pods they kept, the
# namespace deleted and the test's own images (not the agent's, which the
# tests share) removed from the cluster's containerd; before the e2e
# teardown, which removes them from podman.
cluster_teardown() {
	local kept
	for kept in $KEPT_PODS; do
		let_go "$kept"
	done
	if [ -n "$NS_MADE" ] && [ -z "${RG_KEEP:-}" ]; then
		kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1
	fi
	# shellcheck disable=SC2086
	[ -z "$LOADED" ] || [ -n "${RG_KEEP:-}" ] ||
		timeout -k 5 60 ctr --address "$RG_CLUSTER_STATE/containerd/containerd.sock" -n k8s.io \
			images rm $LOADED >/dev/null 2>&1
	[ -z "$NS_MADE" ] || [ -z "${RG_KEEP:-}" ] || say "kept namespace $NS"
}
at_exit cluster_teardown

# kubectl ARGS...: Debian's kubectl 1.20 against the cluster, bounded.
kubectl() {
	timeout -k 5 "${RG_KUBECTL_TIMEOUT:-120}" "$CLUSTER" kubectl "$@"
}

# k ARGS...: kubectl in the test's namespace.
k() {
	kubectl --namespace "$NS" "$@"
}

# image_agent: the agent's image, container/Dockerfile built for this
# machine (tests/e2e/lib.sh), or the podman image RG_AGENT_IMAGE names
# (a release, or another tree's build).
if [ -n "${RG_AGENT_IMAGE:-}" ]; then
	image_agent() {
		podman image exists "$RG_AGENT_IMAGE" || fail "RG_AGENT_IMAGE: no podman image $RG_AGENT_IMAGE"
		BUILT_IMAGE=$RG_AGENT_IMAGE
		IMAGE_FOR[registry.example.com/rearguard]=$BUILT_IMAGE
		say "the agent's image: $BUILT_IMAGE"
	}
fi

# cluster_ready: the cluster is up and its node Ready.
cluster_ready() {
	# Not a pipe into grep -q: under pipefail (bench/cluster.sh) its early exit fails the pipe.
	local st
	st=$(timeout -k 5 60 "$CLUSTER" status 2>/dev/null) || true
	[[ $st == *'Ready: True'* ]]
}

# The cluster's node is shared by the tests running at once: each holds
# BUILDDIR/node.lock shared from cluster_up to its end (fd 5).
NODE_ALONE=

# node_alone: the test has the node to itself from now to its end: it waits
# until no other test uses the cluster, and none starts meanwhile. For a
# test whose subject is the node's load (instant.sh: forty pods at once,
# apps that live milliseconds), to which other tests' pods would add.
node_alone() {
	NODE_ALONE=1
	exec 5>"$RG_BUILDDIR/node.lock"
	flock 5
}

# cluster_up: the cluster, up and its node Ready; brought up here when it
# is not, behind a lock (tools/check takes the same lock while it brings
# the cluster up beside the build), so that the other tests wait for it.
# Skips with the reason when it cannot come up; a failure is remembered for
# 30 minutes (BUILDDIR/cluster.failed), so that every test does not retry.
cluster_up() {
	local rc=0
	exec 7>"$RG_BUILDDIR/cluster.lock"
	flock 7
	if ! cluster_ready; then
		if [ -n "$(find "$RG_BUILDDIR/cluster.failed" -mmin -30 2>/dev/null)" ]; then
			exec 7>&-
			skip "no cluster: $(cat "$RG_BUILDDIR/cluster.failed")"
		fi
		say "bringing the cluster up in $RG_CLUSTER_STATE (log: $RG_BUILDDIR/cluster.log)"
		# Not with the lock: the cluster's processes would hold it as long as they run.
		timeout -k 10 "${RG_CLUSTER_UP_TIMEOUT:-3600}" "$CLUSTER" up >>"$RG_BUILDDIR/cluster.log" 2>&1 5>&- 7>&- || rc=$?
		if [ "$rc" != 0 ] || ! cluster_ready; then
			echo "tools/cluster up failed ($rc): $(tail -n 1 "$RG_BUILDDIR/cluster.log")" >"$RG_BUILDDIR/cluster.failed"
			exec 7>&-
			skip "no cluster: $(cat "$RG_BUILDDIR/cluster.failed")"
		fi
		rm -f "$RG_BUILDDIR/cluster.failed"
		touch "$RG_BUILDDIR/cluster.started"
	fi
	exec 7>&-
	# The node, shared with the other tests (unless this one holds it alone).
	if [ -z "$NODE_ALONE" ]; then
		exec 5>"$RG_BUILDDIR/node.lock"
		flock -s 5
	fi
	kubectl create namespace "$NS" >/dev/null || fail "cannot create namespace $NS"
	NS_MADE=1
	# Pods need the namespace's default service account, which the
	# controller-manager makes a moment after the namespace.
	WAIT_EVERY=0.5 wait_for 60 k get serviceaccount default || fail "no default service account in $NS after 60 s"
}

# load_images: every image the test made, and the agent's, into the
# cluster's containerd (imagePullPolicy: Never finds them there).
load_images() {
	local images=()
	# shellcheck disable=SC2206
	images=($IMAGES)
	[ -z "${BUILT_IMAGE:-}" ] || images+=("$BUILT_IMAGE")
	[ "${#images[@]}" = 0 ] && return 0
	# One load at a time: tools/cluster load saves each image to one file
	# of the state directory.
	exec 7>"$RG_BUILDDIR/cluster-load.lock"
	flock 7
	timeout -k 10 600 "$CLUSTER" load "${images[@]}" >"$T/load.log" 2>&1 7>&- ||
		{ exec 7>&-; tail -n 20 "$T/load.log"; fail "tools/cluster load failed"; }
	exec 7>&-
	LOADED=$IMAGES
}

# job_yaml MANIFEST [PODIFY-OPTION...]: the manifest's Job (a CronJob's
# jobTemplate) named JOB (JOB_NAME, default: the test's name), with the
# local images, a scratch emptyDir at /e2e and the agent logging JSON, in
# $T/JOB.yaml.
job_yaml() {
	local manifest=$1 args=() repo
	shift
	case $manifest in /*) ;; *) manifest=$RG_SRCDIR/$manifest ;; esac
	JOB=${JOB_NAME:-$TEST_NAME}
	for repo in "${!IMAGE_FOR[@]}"; do args+=(--image "$repo=${IMAGE_FOR[$repo]}"); done
	[ -z "${AGENT-rearguard}" ] || args+=(--env "${AGENT:-rearguard}=REARGUARD_LOG_FORMAT=json")
	/usr/bin/python3 "$RG_SRCDIR/tests/e2e/podify.py" "$manifest" --job --name "$JOB" --scratch /e2e \
		"${args[@]}" "$@" >"$T/$JOB.yaml" || fail "cannot make a Job of $manifest"
}

# ns_ready: the cluster up, the test's namespace made and its images
# loaded, once.
ns_ready() {
	[ -n "$NS_MADE" ] && return 0
	cluster_up
	load_images
}

# apply FILE: kubectl apply in the test's namespace; the first call brings
# up the cluster, makes the namespace and loads the images.
apply() {
	ns_ready
	START_MS=$(now_ms)
	k apply -f "$1" >/dev/null || fail "kubectl apply refused $1"
}

# job MANIFEST [PODIFY-OPTION...]: job_yaml, applied.
job() {
	job_yaml "$@"
	apply "$T/$JOB.yaml"
}

# inject MANIFEST [INJECT-OPTION...]: the manifest piped through the build
# tree's `rearguard inject` into $T/injected.yaml, its notes in $T/inject.err.
inject() {
	local manifest=$1
	shift
	"$RG_BUILDDIR/rearguard" inject "$@" - <"$RG_SRCDIR/$manifest" >"$T/injected.yaml" 2>"$T/inject.err" ||
		{ cat "$T/inject.err"; fail "rearguard inject failed on $manifest"; }
}

# job_json: the Job as the apiserver has it, in $T/job.json.
job_json() {
	k get job "$JOB" -o json >"$T/job.json" || fail "kubectl get job $JOB failed"
}

# pod_json: the Job's pods (kubectl get pods -l job-name=JOB), in $T/pods.json.
pod_json() {
	k get pods -l "job-name=$JOB" -o json >"$T/pods.json" || fail "kubectl get pods failed"
}

# jq_py FILE EXPRESSION: a Python expression over the JSON in FILE (d),
# printed (None as null, lists and dicts as JSON).
jq_py() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def status(name, pod=None):
    """The containerStatus of NAME in the pod (the only or the given one)."""
    pods = d["items"] if "items" in d else [d]
    p = pods[0] if pod is None else pod
    for c in p["status"].get("containerStatuses", []) + p["status"].get("initContainerStatuses", []):
        if c["name"] == name:
            return c
    raise SystemExit("no status of container %s" % name)
v = eval(sys.argv[2])
print("null" if v is None else json.dumps(v) if isinstance(v, (list, dict)) else v)
PY
}

# job_condition: the Job's terminal condition (Complete, Failed), or nothing.
job_condition() {
	job_json
	jq_py "$T/job.json" '" ".join(c["type"] for c in d["status"].get("conditions", []) if c["status"] == "True")'
}

# job_wait CONDITION SECONDS [JOB]: waits until the Job has CONDITION
# (Complete or Failed); fails when it gets the other one, or none in time.
# WALL_MS is the time from the apply to then.
job_wait() {
	local want=$1 end=$(($(now_ms) + $2 * 1000)) got
	[ -z "${3:-}" ] || JOB=$3
	while :; do
		got=$(job_condition)
		case " $got " in
		*" $want "*) break ;;
		*" Complete "* | *" Failed "*) fail "job $JOB: $got, want $want" ;;
		esac
		[ "$(now_ms)" -lt "$end" ] || fail "job $JOB: not $want within $2 s (conditions: ${got:-none})"
		sleep 0.5
	done
	WALL_MS=$(($(now_ms) - START_MS))
	pod_json
	say "job $JOB: $want ($(jq_py "$T/job.json" '[c["type"] + ":" + c.get("reason", "") for c in d["status"]["conditions"]]'))"
}

# pod_phase: the phase of the Job's pod (pod_json), or None.
pod_phase() {
	pod_json
	jq_py "$T/pods.json" 'd["items"][0]["status"]["phase"] if d["items"] else None'
}

# pod_wait_running SECONDS: waits until the Job's pod runs.
pod_wait_running() {
	WAIT_EVERY=0.5 wait_for "$1" eval '[ "$(pod_phase)" = Running ]' ||
		fail "the pod is not running after $1 s (phase $(pod_phase))"
}

# pod_name: the Job's pod's name (the only one).
pod_name() {
	jq_py "$T/pods.json" 'd["items"][0]["metadata"]["name"]'
}

# ctr CONTAINER PYTHON-EXPRESSION: a value from the container's status (c)
# in $T/pods.json (the first pod), printed.
ctr() {
	jq_py "$T/pods.json" "(lambda c: $2)(status(\"$1\"))" || fail "no status of container $1"
}

# expect_code CONTAINER CODE: the container terminated with CODE.
expect_code() {
	local got
	got=$(ctr "$1" 'c["state"].get("terminated", {}).get("exitCode")')
	[ "$got" = "$2" ] || fail "container $1: exit code $got, want $2 (state: $(ctr "$1" 'c["state"]'))"
}

# ctr_logs CONTAINER [--timestamps]: what the container wrote (from
# follow_logs when it followed the container).
ctr_logs() {
	local c=$1
	shift
	if [ -f "$T/logs/$c" ]; then
		if [ "${1:-}" = --timestamps ]; then cat "$T/logs/$c"; else cut -d' ' -f2- "$T/logs/$c"; fi
		return
	fi
	k logs "$(pod_name)" -c "$c" "$@" 2>&1
}

# follow_logs POD CONTAINER...: follows the containers' logs (with their
# times) into $T/logs/ in the background, for a pod whose logs go with it
# when it is deleted.
follow_logs() {
	local pod=$1 c
	shift
	mkdir -p "$T/logs"
	for c in "$@"; do
		timeout -k 5 300 "$CLUSTER" kubectl --namespace "$NS" logs -f "$pod" -c "$c" --timestamps \
			>"$T/logs/$c" 2>"$T/logs/$c.err" 5>&- &
		FOLLOW_PIDS+=($!)
	done
}

# summary: the agent's terminated message (the summary), checked to be
# valid JSON, in $T/summary.json.
summary() {
	ctr "${AGENT:-rearguard}" 'c["state"]["terminated"]["message"]' >"$T/summary.json" ||
		fail "the agent left no terminated message"
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/summary.json" ||
		fail "the agent's terminated message is not JSON: $(head -c 300 "$T/summary.json")"
}

# summary_is VALUE KEY...: a value of the agent's terminated message.
summary_is() {
	local want=$1 got
	shift
	summary
	got=$(/usr/bin/python3 - "$T/summary.json" "$@" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print("null" if v is None else json.dumps(v) if isinstance(v, (list, dict)) else v)
PY
) || fail "no value at $* in the agent's terminated message"
	[ "$got" = "$want" ] || fail "summary $*: $got, want $want"
}

# time_ms RFC3339: milliseconds since the epoch.
time_ms() {
	[ -n "$1" ] && [ "$1" != null ] || return 0
	date -d "$1" +%s%3N
}

# evidence TITLE [--recorded]: what Kubernetes reported (the Job's
# conditions, every container's state, restarts and exit code, the agent's
# terminated message) to stdout, under TITLE; with --recorded, the pod
# state is the one in $T/pods.json.
evidence() {
	job_json
	[ "${2:-}" = --recorded ] || pod_json
	printf '#### %s\n' "$1"
	/usr/bin/python3 - "$T/job.json" "$T/pods.json" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
pods = json.load(open(sys.argv[2]))["items"]
print("# job conditions:", json.dumps([{k: c.get(k) for k in ("type", "status", "reason")}
                                      for c in job["status"].get("conditions", [])]))
print("# job status: active=%s succeeded=%s failed=%s" % tuple(job["status"].get(k, 0) for k in ("active", "succeeded", "failed")))
for p in pods:
    print("# pod %s: phase %s" % (p["metadata"]["name"], p["status"].get("phase")))
    for c in p["status"].get("initContainerStatuses", []) + p["status"].get("containerStatuses", []):
        s = c["state"]
        t = s.get("terminated")
        if t:
            print("#   %s: terminated exitCode=%s reason=%s restarts=%s started=%s finished=%s"
                  % (c["name"], t["exitCode"], t.get("reason"), c["restartCount"], t.get("startedAt"), t.get("finishedAt")))
            if c["name"] == "rearguard" and t.get("message"):
                print("#   rearguard message: %s" % t["message"].strip())
        else:
            print("#   %s: %s restarts=%s" % (c["name"], json.dumps(s), c["restartCount"]))
PY
}

# fail_dump: on failure, the Job, its pods, the events and every
# container's logs (and those of its previous attempt).
fail_dump() {
	local p c
	[ -n "$NS_MADE" ] || return 0
	# A test of no Job (manifests.sh) has no Job's evidence.
	[ -z "${JOB:-}" ] || evidence "at the failure" 2>&1 || true
	k get events --sort-by=.lastTimestamp 2>&1 | tail -n 30
	for p in $(k get pods -o name 2>/dev/null); do
		for c in $(k get "$p" -o jsonpath='{.spec.initContainers[*].name} {.spec.containers[*].name}' 2>/dev/null); do
			printf -- '---- %s %s\n' "$p" "$c"
			k logs "$p" -c "$c" --timestamps 2>&1 | tail -n 40
			k logs "$p" -c "$c" --previous 2>/dev/null | tail -n 20 | sed 's/^/previous: /'
		done
	done
}

# log_ms CONTAINER TEXT: when the container wrote its first line holding
# TEXT (ms), as its runtime's log recorded it (kubectl logs --timestamps);
# empty if it did not.
log_ms() {
	local at
	at=$(ctr_logs "$1" --timestamps | awk -v e="$2" 'index($0, e) { print $1; exit }')
	time_ms "$at"
}

# finished_ms CONTAINER / started_ms CONTAINER: the container's finish and
# start time in its status (ms; the kubelet reports whole seconds).
finished_ms() {
	time_ms "$(ctr "$1" 'c["state"].get("terminated", {}).get("finishedAt")')"
}
started_ms() {
	time_ms "$(ctr "$1" '(c["state"].get("terminated") or c["state"].get("running") or {}).get("startedAt")')"
}

# codes_agree APP=CONTAINER... SIDECAR=CONTAINER...: the exit codes of the
# agent's terminated message (the agent's own, apps[i] by position as
# "app:I", sidecars by spec name) equal those the kubelet reports for the
# containers; prints them.
codes_agree() {
	summary
	/usr/bin/python3 - "$T/summary.json" "$T/pods.json" "$@" <<'PY' || fail "the summary's exit codes differ from the containers' statuses"
import json, sys
s = json.load(open(sys.argv[1]))
pod = json.load(open(sys.argv[2]))["items"][0]
kube = {c["name"]: c["state"].get("terminated", {}).get("exitCode") for c in pod["status"]["containerStatuses"]}
pairs = [("rearguard", "rearguard")] + [a.split("=", 1) for a in sys.argv[3:]]
sidecars = {x["name"]: x for x in s["sidecars"]}
bad = []
for what, ctr in pairs:
    if what == "rearguard":
        mine = s["exit_code"]
    elif what.startswith("app:"):
        mine = s["apps"][int(what[4:])]["exit_code"]
    else:
        mine = sidecars[what]["exit_code"]
    print("# %s: summary %s, containerStatuses[%s] %s" % (what, mine, ctr, kube.get(ctr)))
    if mine != kube.get(ctr):
        bad.append(what)
sys.exit(1 if bad else 0)
PY
}

# busybox_with PROGRAM NAME: the tree $T/img/NAME, busybox's image (made
# before) with the host's PROGRAM and the libraries it links, as Debian
# installed them: a real program in an image without a registry.
busybox_with() {
	local d=$T/img/$2 lib
	[ -x "$1" ] || skip "$2 not installed (tools/deps $2)"
	mkdir -p "$d"
	cp -a "$T/img/busybox/." "$d/"
	chmod 1777 "$d/tmp"
	mkdir -p "$d$(dirname "$1")"
	cp "$1" "$d$1"
	for lib in $(ldd "$1" | awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }'); do
		mkdir -p "$d$(dirname "$lib")"
		cp -L "$lib" "$d$lib"
	done
}

# nginx_conf SERVER...: an nginx.conf of NGINX_WORKERS workers (1 unless set), its files in /tmp, logging to
# stderr, with the server blocks SERVER.
nginx_conf() {
	cat <<-EOF
		worker_processes ${NGINX_WORKERS:-1};
		pid /tmp/nginx.pid;
		error_log stderr notice;
		events { worker_connections 256; }
		http {
		  access_log off;
		  client_body_temp_path /tmp/body;
		  proxy_temp_path /tmp/proxy;
		  fastcgi_temp_path /tmp/fastcgi;
		  uwsgi_temp_path /tmp/uwsgi;
		  scgi_temp_path /tmp/scgi;
	EOF
	printf '  %s\n' "$@"
	echo "}"
}

# image_nginx: Debian's nginx (the host's /usr/sbin/nginx and the libraries
# it links) in the busybox image, standing in for the nginx repository, with
# a configuration for a non-root master and two workers on 127.0.0.1:8080
# logging to stderr: `nginx -e stderr -g 'daemon off;'`.
image_nginx() {
	local d=$T/img/nginx
	image_busybox
	busybox_with /usr/sbin/nginx nginx
	mkdir -p "$d/etc/nginx"
	# shellcheck disable=SC2016 # nginx's $pid
	NGINX_WORKERS=2 nginx_conf 'server { listen 127.0.0.1:8080; location / { return 200 "served by $pid\n"; } }' \
		>"$d/etc/nginx/nginx.conf"
	image nginx nginx "$d" 'ENV PATH=/usr/sbin:/bin' \
		'ENTRYPOINT ["/usr/sbin/nginx", "-e", "stderr", "-g", "daemon off;"]'
}

# A finalizer of the tests' own, which keeps a deleted pod (and the last
# status the kubelet gave it) until the test has read it.
KEEP_FINALIZER=rearguard.io/test-keep

# keep_pod POD: the pod stays, once deleted, until kept_last has read its last
# state: a watch may miss the kubelet's last status update before the pod goes.
keep_pod() {
	k patch pod "$1" --type merge -p "{\"metadata\":{\"finalizers\":[\"$KEEP_FINALIZER\"]}}" >/dev/null ||
		fail "could not put a finalizer on pod $1"
	KEPT_PODS="$KEPT_PODS $1"
}

# kept_last POD SECONDS: waits (at most SECONDS) until the deleted pod shows
# every container terminated, puts that state in $T/pods.json (as pod_json
# would), then lets the pod go and waits until it is gone. Returns 1 (the
# pod let go as well) when the kubelet lost their end: the 1.20 kubelet
# removes a deleted pod's exited containers at once, and when that comes
# before it has reported them terminated (a slow status sync on a busy
# node), the pod ends with its containers "waiting", their exit codes gone.
kept_last() {
	KEPT_LOST=
	WAIT_EVERY=0.5 wait_for "$2" kept_state "$1" ||
		fail "the deleted pod $1 did not show every container terminated within $2 s"
	/usr/bin/python3 -c 'import json, sys; json.dump({"items": [json.load(open(sys.argv[1]))]}, open(sys.argv[2], "w"))' \
		"$T/kept.json" "$T/pods.json"
	let_go "$1"
	WAIT_EVERY=0.5 wait_for "$2" pod_gone "$1" || fail "the pod $1 was not gone within $2 s"
	[ -n "$KEPT_LOST" ] || return 0
	say "the kubelet removed the containers of the deleted pod $1 before it reported their end"
	return 1
}

# pod_gone POD: the pod is no more.
pod_gone() {
	! k get pod "$1" >/dev/null 2>&1
}

# kept_state POD: the deleted pod's state, in $T/kept.json, shows every
# container terminated; or the pod is over with a container that never
# was (KEPT_LOST set: see kept_last).
kept_state() {
	k get pod "$1" -o json >"$T/kept.json" 2>/dev/null || return 1
	/usr/bin/python3 - "$T/kept.json" <<-'PY' && return 0
		import json, sys
		p = json.load(open(sys.argv[1]))
		cs = p["status"].get("containerStatuses", [])
		sys.exit(0 if p["metadata"].get("deletionTimestamp") and cs and all("terminated" in c["state"] for c in cs) else 1)
	PY
	/usr/bin/python3 - "$T/kept.json" <<-'PY' || return 1
		import json, sys
		p = json.load(open(sys.argv[1]))
		cs = p["status"].get("containerStatuses", [])
		over = p["metadata"].get("deletionTimestamp") and p["status"].get("phase") in ("Succeeded", "Failed")
		sys.exit(0 if over and cs and not any("running" in c["state"] for c in cs) else 1)
	PY
	KEPT_LOST=1
}

# let_go POD: removes the tests' finalizer from the pod.
let_go() {
	k patch pod "$1" --type json -p '[{"op": "remove", "path": "/metadata/finalizers"}]' >/dev/null 2>&1
}

# The istio-proxy's command, as Istio's injector writes it (argv[1] is
# "proxy"), for the stand-in pilot-agent.
ISTIO_PROXY_COMMAND='["/usr/local/bin/pilot-agent", "proxy", "sidecar", "--log", "/dev/stdout", "--ready-after", "300ms"]'

# istio_proxy_json FILE: the istio-proxy container Istio's injector adds
# (the stand-in pilot-agent of image_proxy docker.io/istio/proxyv2, uid
# 1337), as JSON in FILE, for mesh_on.
istio_proxy_json() {
	/usr/bin/python3 -c 'import json, sys; json.dump({"name": "istio-proxy", "image": sys.argv[1], "imagePullPolicy": "Never",
		"command": json.loads(sys.argv[2]), "securityContext": {"runAsUser": 1337, "runAsGroup": 1337}}, open(sys.argv[3], "w"))' \
		"${IMAGE_FOR[docker.io/istio/proxyv2]}" "$ISTIO_PROXY_COMMAND" "$1" || fail "cannot write $1"
}

MESH_CONFIG=
MESH_PID=
# mesh_on CONFIG CONTAINER_JSON [NAMESPACE_SELECTOR]: a mesh's injector
# (tests/cluster/mesh-webhook.py, on the node's address in the cluster's
# network namespace, on a port the kernel picks) that adds the container of
# the file CONTAINER_JSON to every pod without one of its name, from the
# MutatingWebhookConfiguration CONFIG: the API server calls it before
# rearguard's when CONFIG sorts before "rearguard" (linkerd-...), after when
# it sorts after (zz-...). It is sent the pods of the namespaces
# NAMESPACE_SELECTOR (a YAML flow mapping) selects; by default, those of the
# test's namespace. Its reviews are lines of MESH_LOG (default $T/mesh.log).
# It goes at mesh_off, or at the test's end.
mesh_on() {
	local selector=${3:-} node_ip=10.251.0.1 port
	MESH_CONFIG=$1
	MESH_LOG=${MESH_LOG:-$T/mesh.log}
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=$node_ip" \
		-addext "subjectAltName = IP:$node_ip" -keyout "$T/mesh.key" -out "$T/mesh.crt" 2>/dev/null ||
		fail "openssl could not make the mesh's certificate"
	rm -f "$MESH_LOG" "$T/mesh.port"
	# Its life is the test's (--watch), or until mesh_off.
	"$CLUSTER" exec /usr/bin/python3 "$RG_SRCDIR/tests/cluster/mesh-webhook.py" --listen "$node_ip:0" \
		--port-file "$T/mesh.port" --cert "$T/mesh.crt" --key "$T/mesh.key" --container "$2" \
		--log "$MESH_LOG" --watch $$ 2>"$T/mesh.err" 5>&- &
	MESH_PID=$!
	at_exit mesh_off
	# It writes its port once it listens.
	WAIT_EVERY=0.5 wait_for 30 test -s "$T/mesh.port" ||
		fail "the mesh's webhook does not listen after 30 s: $(tail -n 5 "$T/mesh.err")"
	port=$(cat "$T/mesh.port")
	if [ -z "$selector" ]; then
		kubectl label namespace "$NS" "rearguard.io/test-mesh=$$" >/dev/null || fail "cannot label $NS"
		selector="{matchLabels: {rearguard.io/test-mesh: \"$$\"}}"
	fi
	kubectl apply -f - >/dev/null <<-EOF || fail "kubectl apply of the mesh's configuration refused"
		apiVersion: admissionregistration.k8s.io/v1
		kind: MutatingWebhookConfiguration
		metadata:
		  name: $MESH_CONFIG
		webhooks:
		  - name: mesh.test.rearguard.io
		    clientConfig:
		      url: https://$node_ip:$port/inject
		      caBundle: $(base64 -w0 <"$T/mesh.crt")
		    rules:
		      - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
		    namespaceSelector: $selector
		    failurePolicy: Fail
		    sideEffects: None
		    admissionReviewVersions: [v1]
		    timeoutSeconds: 5
		    reinvocationPolicy: Never
	EOF
	say "the mesh's webhook: $MESH_CONFIG, https://$node_ip:$port/inject, its reviews in $MESH_LOG"
	say "webhooks in the order the API server calls them: $(kubectl get mutatingwebhookconfigurations -o 'jsonpath={.items[*].metadata.name}')"
}

# mesh_off: no mesh (mesh_on's configuration and server gone).
mesh_off() {
	[ -n "$MESH_CONFIG" ] || return 0
	kubectl delete mutatingwebhookconfiguration "$MESH_CONFIG" --ignore-not-found >/dev/null 2>&1 || true
	# The server (tools/cluster exec's child: nsenter execs it), then tools/cluster exec.
	pkill -P "$MESH_PID" 2>/dev/null || true
	kill "$MESH_PID" 2>/dev/null || true
	wait "$MESH_PID" 2>/dev/null || true
	MESH_CONFIG= MESH_PID=
}
