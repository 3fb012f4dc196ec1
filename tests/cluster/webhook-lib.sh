# Sourced by the webhook's cluster tests (tests/cluster/webhook-*.sh), after
# tests/cluster/lib.sh: rearguard's admission webhook installed on the
# cluster from manifests/webhook by `tools/cluster webhook`, with the image
# container/Dockerfile.webhook builds (tools/image --webhook, once per
# build tree while the sources do not change) and the agent's image of the
# other cluster tests.
#
#   . "$RG_SRCDIR/tests/cluster/lib.sh"
#   . "$RG_SRCDIR/tests/cluster/webhook-lib.sh"
#   image_busybox; image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent
#   webhook_up shared        # or exclusive: the test disturbs the webhook
#   ns_inject                # the test's namespace: rearguard.io/inject=enabled
#
# The webhook stays installed for the next tests (and for the cluster's
# life). It serves every namespace labelled rearguard.io/inject=enabled and
# every pod labelled so: the other cluster tests have neither, so they run
# beside these as before. Among themselves the webhook's tests share it
# (a lock in the build tree): one that scales it down or rotates its
# certificate holds it alone, and gives it back as it found it.

WEBHOOK_NS=rearguard-system
EXTRA_NS=

# Skipped, not failed, when the tree's rearguard has no webhook (configure
# found no libmicrohttpd or GnuTLS): the image would have none either.
"$RG_BUILDDIR/rearguard" webhook --help >/dev/null 2>&1 ||
	skip "this build's rearguard has no webhook (configure found no libmicrohttpd and GnuTLS: tools/deps libmicrohttpd-dev libgnutls28-dev)"

# extra_ns_teardown: the test's other namespaces (extra_ns) deleted,
# before its own.
extra_ns_teardown() {
	local n
	[ -z "${RG_KEEP:-}" ] || return 0
	for n in $EXTRA_NS; do
		kubectl delete namespace "$n" --wait=false >/dev/null 2>&1
	done
}
at_exit extra_ns_teardown

# webhook_pods: the webhook's pods, each "NAME PHASE", and " deleting"
# when it is, sorted and joined by commas.
webhook_pods() {
	kubectl -n "$WEBHOOK_NS" get pods -l app.kubernetes.io/name=rearguard-webhook -o \
		'jsonpath={range .items[*]}{.metadata.name}{" "}{.status.phase}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' |
		awk 'NF { print $1, $2 (NF > 2 ? " deleting" : "") }' | sort | paste -sd,
}

# webhook_installed: the webhook runs with this tree's images (the
# webhook's as built last: tools/cluster webhook notes its id), both
# replicas ready.
webhook_installed() {
	local got id
	id=$(podman image inspect --format '{{.Id}}' "$WEBHOOK_IMAGE") || return 1
	got=$(kubectl -n "$WEBHOOK_NS" get deployment rearguard-webhook -o 'jsonpath={.spec.template.spec.containers[0].image} {.spec.template.metadata.annotations.rearguard\.io/webhook-image-id} {.spec.template.spec.containers[0].args} {.status.readyReplicas} {.status.updatedReplicas} {.status.replicas}' \
		2>/dev/null) || return 1
	[[ $got == "$WEBHOOK_IMAGE ${id:0:12} "*"$BUILT_IMAGE"*" 2 2 2" ]]
}

# webhook_settled: installed, and no other replica left: one replaced by a
# rollout before (still draining) is not counted in the Deployment's
# status, so the pods are read too.
webhook_settled() {
	webhook_installed && [[ $(webhook_pods) =~ ^[^,]+\ Running,[^,]+\ Running$ ]]
}

# webhook_up shared|exclusive: the images, the cluster and the test's
# namespace (with the test's images loaded), and the webhook installed by
# tools/cluster webhook unless it runs already with these images; then
# the webhook lock, shared or held alone.
webhook_up() {
	local mode=$1
	image_agent
	built_image webhook "$ARCH"
	cluster_up
	load_images
	exec 6>"$RG_BUILDDIR/webhook.lock"
	# An exclusive holder gives the webhook back as it found it.
	flock -s 6
	if ! webhook_installed; then
		# tools/cluster load saves each image to one file of the state directory.
		exec 7>"$RG_BUILDDIR/cluster-load.lock"
		flock 7
		if ! webhook_installed; then
			say "installing the webhook (tools/cluster webhook, log: $T/webhook.log)"
			timeout -k 10 1200 "$CLUSTER" webhook --agent-image "$BUILT_IMAGE" --webhook-image "$WEBHOOK_IMAGE" \
				>"$T/webhook.log" 2>&1 6>&- 7>&- ||
				{ exec 7>&-; tail -n 30 "$T/webhook.log"; fail "tools/cluster webhook failed"; }
			say "$(grep 'went through the webhook' "$T/webhook.log" | sed 's/^tools\/cluster: //')"
		fi
		exec 7>&-
	fi
	if [ "$mode" = exclusive ]; then
		flock -u 6
		flock 6
	fi
	# Held: both replicas ready (a test before may have just scaled it back).
	WAIT_EVERY=1 wait_for 300 webhook_settled || fail "the webhook's Deployment is not ready (2 replicas and no other) after 300 s: $(webhook_pods)"
}

# ns_inject [NAMESPACE]: the namespace (default the test's) labelled
# rearguard.io/inject=enabled.
ns_inject() {
	kubectl label namespace "${1:-$NS}" rearguard.io/inject=enabled --overwrite >/dev/null ||
		fail "cannot label namespace ${1:-$NS}"
}

# extra_ns SUFFIX: another namespace of the test's, NS-SUFFIX (deleted with
# it), in EXTRA; waits for its default service account.
extra_ns() {
	EXTRA=${NS:0:$((62 - ${#1}))}-$1
	kubectl create namespace "$EXTRA" >/dev/null || fail "cannot create namespace $EXTRA"
	EXTRA_NS="$EXTRA_NS $EXTRA"
	WAIT_EVERY=0.5 wait_for 60 kubectl -n "$EXTRA" get serviceaccount default ||
		fail "no default service account in $EXTRA after 60 s"
}

# istio_images: the images of istio_job: busybox for the app, the stand-in
# pilot-agent for the istio-proxy.
istio_images() {
	image_busybox
	image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent
}

# app_job NAME [COMMAND] [APP]: a Job of one app, container APP (default
# migrate: busybox running COMMAND, default a few seconds' work), with no
# sidecar and no rearguard, restartPolicy Never, on stdout.
app_job() {
	local cmd=${2:-'echo migrating; sleep 3; echo done'}
	cat <<-EOF
		apiVersion: batch/v1
		kind: Job
		metadata:
		  name: $1
		spec:
		  backoffLimit: 0
		  template:
		    spec:
		      restartPolicy: Never
		      containers:
		        - name: ${3:-migrate}
		          image: ${IMAGE_FOR[busybox]}
		          imagePullPolicy: Never
		          command: ["sh", "-c", "$cmd"]
	EOF
}

# istio_job NAME [COMMAND]: a Job as a mesh leaves it for rearguard to
# find: app_job's, with a plain istio-proxy (the stand-in pilot-agent)
# beside the app.
istio_job() {
	app_job "$@"
	cat <<-EOF
		        - name: istio-proxy
		          image: ${IMAGE_FOR[docker.io/istio/proxyv2]}
		          imagePullPolicy: Never
		          command: $ISTIO_PROXY_COMMAND
		          securityContext: {runAsUser: 1337, runAsGroup: 1337}
	EOF
}

# labelled_pod NAME [nowhere] [istio]: a pod labelled
# rearguard.io/inject=enabled (what the configuration's pod entry sends to
# the webhook) with one app (busybox, true), on stdout; "nowhere" gives it a
# node selector no node has (it never runs: its admission is what is
# tested), "istio" a plain istio-proxy beside the app.
labelled_pod() {
	local name=$1 nowhere= istio=
	shift
	while [ "$#" -gt 0 ]; do
		case $1 in
		nowhere) nowhere=1 ;;
		istio) istio=1 ;;
		*) fail "labelled_pod: $1?" ;;
		esac
		shift
	done
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {rearguard.io/inject: enabled}\n' "$name"
	printf 'spec:\n  restartPolicy: Never\n'
	[ -z "$nowhere" ] || printf '  nodeSelector: {rearguard.io/test-nowhere: "true"}\n'
	printf '  containers:\n    - {name: app, image: %s, imagePullPolicy: Never, command: ["true"]}\n' \
		"${IMAGE_FOR[busybox]}"
	[ -z "$istio" ] || printf '    - {name: istio-proxy, image: %s, imagePullPolicy: Never, command: %s}\n' \
		"${IMAGE_FOR[docker.io/istio/proxyv2]}" "$ISTIO_PROXY_COMMAND"
}

# webhook_down: the webhook scaled to zero replicas, once its pods and its
# Service's endpoints are gone; scaled back to two at the test's end, also
# on failure. Needs the webhook held alone (webhook_up exclusive).
webhook_down() {
	at_exit "kubectl -n $WEBHOOK_NS scale deployment rearguard-webhook --replicas=2 >/dev/null 2>&1"
	kubectl -n "$WEBHOOK_NS" scale deployment rearguard-webhook --replicas=0 >/dev/null || fail "kubectl scale failed"
	WAIT_EVERY=1 wait_for 120 webhook_gone || fail "the webhook's pods are not gone after 120 s"
}

# webhook_gone: no pod of the webhook, no endpoint of its Service.
webhook_gone() {
	[ -z "$(kubectl -n "$WEBHOOK_NS" get pods -l app.kubernetes.io/name=rearguard-webhook -o name)" ] &&
		[ -z "$(kubectl -n "$WEBHOOK_NS" get endpoints rearguard-webhook -o 'jsonpath={.subsets[*].addresses[*].ip}')" ]
}

# mesh_job_done JOB APP PROXY WHAT: the app-only Job JOB of $T/job.yaml
# (its app container APP) applied and Complete within 240 s, its evidence
# printed under WHAT; the mesh's webhook (mesh_on) added PROXY to its pod,
# rearguard's the agent: the pod holds the agent, APP and PROXY, marked
# rearguard.io/injected.
mesh_job_done() {
	local got
	START_MS=$(now_ms)
	k apply -f "$T/job.yaml" >/dev/null || fail "kubectl apply of the Job refused"
	job_wait Complete 240 "$1"
	evidence "$4"
	say "the mesh's webhook saw: $(paste -sd';' "$MESH_LOG")"
	grep -q "added $3" "$MESH_LOG" || fail "the mesh's webhook added no proxy"
	got=$(pod_containers "$NS" "$(pod_name)")
	say "pod $(pod_name): $got"
	[[ $got == "rearguard $2 $3 | injected="[^-]* ]] ||
		fail "the pod: $got, want the agent, the app and the mesh's proxy"
}

# pod_containers NAMESPACE POD: the pod's containers' names and its
# annotation rearguard.io/injected ("-" when it has none), as the API
# server has them: "rearguard migrate istio-proxy | injected=..."
pod_containers() {
	local got
	got=$(kubectl -n "$1" get pod "$2" \
		-o 'jsonpath={.spec.containers[*].name} | injected={.metadata.annotations.rearguard\.io/injected}') ||
		fail "kubectl get pod $2 in $1 failed"
	[[ $got == *"injected=" ]] && got+=-
	echo "$got"
}

# job_pod NAMESPACE JOB SECONDS: the Job's pod's name, once it has one.
job_pod() {
	local get=(kubectl -n "$1" get pods -l "job-name=$2" -o 'jsonpath={.items[0].metadata.name}')
	WAIT_EVERY=0.5 wait_for "$3" eval '[ -n "$("${get[@]}" 2>/dev/null)" ]' ||
		fail "job $2 in $1: no pod within $3 s ($(kubectl -n "$1" describe job "$2" | tail -n 5))"
	"${get[@]}"
}
