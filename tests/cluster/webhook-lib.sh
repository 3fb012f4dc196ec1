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
# Commands the cleanup runs first (at_exit).
AT_EXIT=()

# Skipped, not failed, when the tree's rearguard has no webhook (configure
# found no libmicrohttpd or GnuTLS): the image would have none either.
"$RG_BUILDDIR/rearguard" webhook --help >/dev/null 2>&1 ||
	skip "this build's rearguard has no webhook (configure found no libmicrohttpd and GnuTLS: tools/deps libmicrohttpd-dev libgnutls28-dev)"

# The extra namespaces go with the test's own.
eval "cluster_$(declare -f cleanup)"
cleanup() {
	local rc=$? n c
	for c in "${AT_EXIT[@]}"; do
		eval "$c" || true
	done
	if [ -z "${RG_KEEP:-}" ]; then
		for n in $EXTRA_NS; do
			timeout -k 5 60 "$CLUSTER" kubectl delete namespace "$n" --wait=false >/dev/null 2>&1
		done
	fi
	(exit "$rc")
	cluster_cleanup
}
trap cleanup EXIT

# at_exit COMMAND: COMMAND (a string, eval'd) runs at the test's end, also
# on failure, before the namespaces go.
at_exit() {
	AT_EXIT+=("$1")
}

# image_webhook: the webhook's image, container/Dockerfile.webhook built
# for this machine by tools/image --webhook and named after this build
# tree, in WEBHOOK_IMAGE; rebuilt when a file of the source tree is newer
# than the last build (as the agent's image, tests/e2e/lib.sh).
image_webhook() {
	local stamp=$RG_BUILDDIR/image-webhook-$ARCH.stamp started newer rc=0
	WEBHOOK_IMAGE=localhost/rearguard-e2e/webhook:$ARCH-$(printf '%s' "$RG_BUILDDIR" | cksum | cut -d' ' -f1)
	exec 8>"$RG_BUILDDIR/image-webhook-$ARCH.lock"
	flock 8
	if [ "$(cat "$stamp" 2>/dev/null)" = "$WEBHOOK_IMAGE" ] && podman image exists "$WEBHOOK_IMAGE"; then
		newer=$(find "$RG_SRCDIR" \( -name .git -o -path "$RG_BUILDDIR" \
			-o -type d \( -name build -o -name 'build-*' -o -name autom4te.cache \) \) -prune \
			-o ! -type d -newer "$stamp" -print -quit)
		if [ -z "$newer" ]; then
			exec 8>&-
			return 0
		fi
		say "rebuilding the webhook's image: $newer changed"
	fi
	started=$(date +%s)
	RG_IMAGE_TIMEOUT=2400 timeout -k 10 2500 "$RG_SRCDIR/tools/image" --webhook --arch "$ARCH" \
		--tag "$WEBHOOK_IMAGE" >"$RG_BUILDDIR/image-webhook-$ARCH.log" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		exec 8>&-
		tail -n 40 "$RG_BUILDDIR/image-webhook-$ARCH.log"
		fail "tools/image --webhook failed (log: $RG_BUILDDIR/image-webhook-$ARCH.log)"
	fi
	say "$(grep '^tools/image: .* built in' "$RG_BUILDDIR/image-webhook-$ARCH.log" | tail -n 1)"
	echo "$WEBHOOK_IMAGE" >"$stamp"
	touch -d "@$started" "$stamp"
	exec 8>&-
}

# webhook_installed: the webhook runs with this tree's images (the
# webhook's as built last: tools/cluster webhook notes its id), both
# replicas ready and no other left.
webhook_installed() {
	local got id
	id=$(podman image inspect --format '{{.Id}}' "$WEBHOOK_IMAGE") || return 1
	got=$(kubectl -n "$WEBHOOK_NS" get deployment rearguard-webhook -o 'jsonpath={.spec.template.spec.containers[0].image} {.spec.template.metadata.annotations.rearguard\.io/webhook-image-id} {.spec.template.spec.containers[0].args} {.status.readyReplicas} {.status.updatedReplicas} {.status.replicas}' \
		2>/dev/null) || return 1
	[[ $got == "$WEBHOOK_IMAGE ${id:0:12} "*"$BUILT_IMAGE"*" 2 2 2" ]]
}

# webhook_up shared|exclusive: the images, the cluster and the test's
# namespace (with the test's images loaded), and the webhook installed by
# tools/cluster webhook unless it runs already with these images; then
# the webhook lock, shared or held alone.
webhook_up() {
	local mode=$1 end
	image_agent
	image_webhook
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
	end=$(($(now_ms) + 300000))
	until webhook_installed; do
		[ "$(now_ms)" -lt "$end" ] || fail "the webhook's Deployment is not ready (2 replicas) after 300 s"
		sleep 1
	done
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
	local end
	EXTRA=${NS:0:$((62 - ${#1}))}-$1
	kubectl create namespace "$EXTRA" >/dev/null || fail "cannot create namespace $EXTRA"
	EXTRA_NS="$EXTRA_NS $EXTRA"
	end=$(($(now_ms) + 60000))
	until kubectl -n "$EXTRA" get serviceaccount default >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$end" ] || fail "no default service account in $EXTRA after 60 s"
		sleep 0.5
	done
}

# The istio-proxy's command, as Istio's injector writes it (argv[1] is
# "proxy"), for the stand-in pilot-agent.
ISTIO_PROXY_COMMAND='["/usr/local/bin/pilot-agent", "proxy", "sidecar", "--log", "/dev/stdout", "--ready-after", "300ms"]'

# istio_job NAME [COMMAND]: a Job as a mesh leaves it for rearguard to
# find: an app (busybox, COMMAND; default a few seconds' work) and a plain
# istio-proxy (the stand-in pilot-agent), no rearguard, restartPolicy
# Never, on stdout.
istio_job() {
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
		        - name: migrate
		          image: ${IMAGE_FOR[busybox]}
		          imagePullPolicy: Never
		          command: ["sh", "-c", "$cmd"]
		        - name: istio-proxy
		          image: ${IMAGE_FOR[docker.io/istio/proxyv2]}
		          imagePullPolicy: Never
		          command: $ISTIO_PROXY_COMMAND
		          securityContext: {runAsUser: 1337, runAsGroup: 1337}
	EOF
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
	local end=$(($(now_ms) + $3 * 1000)) p
	while :; do
		p=$(kubectl -n "$1" get pods -l "job-name=$2" -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null) || true
		[ -z "$p" ] || break
		[ "$(now_ms)" -lt "$end" ] || fail "job $2 in $1: no pod within $3 s ($(kubectl -n "$1" describe job "$2" | tail -n 5))"
		sleep 0.5
	done
	echo "$p"
}

# mesh_on CONFIG CONTAINER_JSON: a mesh's injector (tests/cluster/mesh-webhook.py,
# on the node's address in the cluster's network namespace) that adds the
# container of the file CONTAINER_JSON to every pod of the test's namespace
# without one of its name, from the MutatingWebhookConfiguration CONFIG: the
# API server calls it before rearguard's when CONFIG sorts before
# "rearguard" (linkerd-...), after when it sorts after (zz-...). Its reviews
# are lines of $T/mesh.log. Both go at the test's end.
mesh_on() {
	local config=$1 container=$2 port=$((30000 + $$ % 2000)) node_ip=10.251.0.1 pid end
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=$node_ip" \
		-addext "subjectAltName = IP:$node_ip" -keyout "$T/mesh.key" -out "$T/mesh.crt" 2>/dev/null ||
		fail "openssl could not make the mesh's certificate"
	timeout -k 5 900 "$CLUSTER" exec /usr/bin/python3 "$RG_SRCDIR/tests/cluster/mesh-webhook.py" \
		--listen "$node_ip:$port" --cert "$T/mesh.crt" --key "$T/mesh.key" --container "$container" \
		--log "$T/mesh.log" --watch $$ 2>"$T/mesh.err" &
	pid=$!
	at_exit "kill $pid 2>/dev/null; kubectl delete mutatingwebhookconfiguration $config >/dev/null 2>&1"
	end=$(($(now_ms) + 30000))
	# It makes its log once it listens.
	until [ -f "$T/mesh.log" ]; do
		kill -0 "$pid" 2>/dev/null || fail "the mesh's webhook exited: $(tail -n 5 "$T/mesh.err")"
		[ "$(now_ms)" -lt "$end" ] || fail "the mesh's webhook does not listen after 30 s"
		sleep 0.5
	done
	kubectl label namespace "$NS" "rearguard.io/test-mesh=$$" >/dev/null || fail "cannot label $NS"
	kubectl apply -f - >/dev/null <<-EOF || fail "kubectl apply of the mesh's configuration refused"
		apiVersion: admissionregistration.k8s.io/v1
		kind: MutatingWebhookConfiguration
		metadata:
		  name: $config
		webhooks:
		  - name: mesh.test.rearguard.io
		    clientConfig:
		      url: https://$node_ip:$port/inject
		      caBundle: $(base64 -w0 <"$T/mesh.crt")
		    rules:
		      - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
		    namespaceSelector:
		      matchLabels: {rearguard.io/test-mesh: "$$"}
		    failurePolicy: Fail
		    sideEffects: None
		    admissionReviewVersions: [v1]
		    timeoutSeconds: 5
		    reinvocationPolicy: Never
	EOF
	say "webhooks in the order the API server calls them: $(kubectl get mutatingwebhookconfigurations -o 'jsonpath={.items[*].metadata.name}')"
}
