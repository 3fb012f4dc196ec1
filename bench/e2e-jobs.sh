#!/bin/bash
# Kubernetes' own Job specs (test/e2e of 1.20, "[sig-apps] Job", through
# tools/cluster e2e) on the one-node cluster of tools/cluster, in three
# configurations, and a table of every spec's verdict and time in each:
#
#   plain      the namespaces as the e2e framework makes them
#   mesh       a mesh's injector stands in for Istio's: a mutating webhook
#              (tests/cluster/mesh-webhook.py, configuration zz-mesh-standin,
#              reinvocationPolicy: Never) adds a plain istio-proxy running
#              the stand-in pilot-agent (tests/helpers/standin.c) to every
#              pod of the framework's namespaces (those with the label
#              e2e-framework), and nothing else: a sidecar that never exits
#   rearguard  the same mesh and rearguard's webhook (tools/cluster webhook,
#              manifests/webhook) with its namespace entry selecting the
#              framework's namespaces (in place of the label
#              rearguard.io/inject=enabled, which they lack); its
#              reinvocationPolicy: IfNeeded has it see the mesh's proxy
#
#   RG_BUILDDIR=build-e2e RG_SRCDIR=. bench/e2e-jobs.sh [--nodes N] [--focus REGEX] [CONFIG...]
#
# CONFIGs: plain, mesh, rearguard (default: all three, in that order).
# --nodes N runs N specs at a time (ginkgo's parallel nodes; default 8,
# every Job spec at once: the mesh's specs that hang wait out the
# framework's 15 minutes side by side). --focus replaces "\[sig-apps\] Job"
# (e.g. "\[sig-apps\] CronJob"). The reports stay in
# RG_BUILDDIR/e2e-jobs/CONFIG/ (tools/cluster e2e's: e2e.log, JUnit,
# verdicts.tsv; mesh.log, the mesh's reviews during the run).
#
# Reuses tests/cluster/lib.sh (the cluster of this build tree, brought up if
# it is not, and the stand-in's image) and, for "rearguard",
# tests/cluster/webhook-lib.sh (the images of the agent and the webhook,
# built by tools/image for this build tree, and tools/cluster webhook); that
# needs a build tree whose rearguard has the webhook. The webhook configurations
# this script changes are as it found them when it ends.
set -euo pipefail
RG_BUILDDIR=$(cd "${RG_BUILDDIR:?RG_BUILDDIR: the build tree}" && pwd)
RG_SRCDIR=$(cd "${RG_SRCDIR:?RG_SRCDIR: the source tree}" && pwd)
export RG_BUILDDIR RG_SRCDIR
nodes=8
focus='\[sig-apps\] Job'
configs=()
while [ "$#" -gt 0 ]; do
	case $1 in
	--nodes) nodes=${2:?--nodes N}; shift ;;
	--focus) focus=${2:?--focus REGEX}; shift ;;
	plain | mesh | rearguard) configs+=("$1") ;;
	*) echo "usage: bench/e2e-jobs.sh [--nodes N] [--focus REGEX] [plain|mesh|rearguard...]" >&2; exit 2 ;;
	esac
	shift
done
[ "${#configs[@]}" -gt 0 ] || configs=(plain mesh rearguard)
. "$RG_SRCDIR/tests/cluster/lib.sh"

out=$RG_BUILDDIR/e2e-jobs
mkdir -p "$out"
NODE_IP=10.251.0.1
MESH=zz-mesh-standin
MESH_PORT=$((31000 + $$ % 1000))
MESH_PID=
# The istio-proxy container the mesh adds, as Istio's injector writes its
# command (argv[1] is "proxy") and user.
MESH_PROXY_COMMAND='["/usr/local/bin/pilot-agent", "proxy", "sidecar", "--log", "/dev/stdout", "--ready-after", "300ms"]'
# rearguard's entry that selects namespaces, and its selector as installed.
RG_ENTRY=namespace.rearguard.io
RG_SELECTOR=
RG_INDEX=

# The mesh and rearguard's selector go back as they were, before the
# cluster tests' cleanup (namespace, images).
eval "bench_$(declare -f cleanup)"
cleanup() {
	local rc=$?
	mesh_off || true
	rearguard_off || true
	(exit "$rc")
	bench_cleanup
}
trap cleanup EXIT

# mesh_on: the mesh's webhook serves on the node's address in the cluster's
# network namespace (the API server dials its URL: no Service, no
# kube-proxy) and zz-mesh-standin sends it the pods of the framework's
# namespaces.
mesh_on() {
	local end
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=$NODE_IP" \
		-addext "subjectAltName = IP:$NODE_IP" -keyout "$T/mesh.key" -out "$T/mesh.crt" 2>/dev/null ||
		fail "openssl could not make the mesh's certificate"
	/usr/bin/python3 -c 'import json, sys; json.dump({"name": "istio-proxy", "image": sys.argv[1], "imagePullPolicy": "Never",
		"command": json.loads(sys.argv[2]), "securityContext": {"runAsUser": 1337, "runAsGroup": 1337}}, open(sys.argv[3], "w"))' \
		"${IMAGE_FOR[docker.io/istio/proxyv2]}" "$MESH_PROXY_COMMAND" "$T/proxy.json"
	rm -f "$out/mesh.log"
	"$CLUSTER" exec /usr/bin/python3 "$RG_SRCDIR/tests/cluster/mesh-webhook.py" --listen "$NODE_IP:$MESH_PORT" \
		--cert "$T/mesh.crt" --key "$T/mesh.key" --container "$T/proxy.json" --log "$out/mesh.log" --watch $$ \
		2>"$T/mesh.err" &
	MESH_PID=$!
	end=$(($(now_ms) + 30000))
	# It makes its log once it listens.
	until [ -f "$out/mesh.log" ]; do
		kill -0 "$MESH_PID" 2>/dev/null || fail "the mesh's webhook exited: $(tail -n 5 "$T/mesh.err")"
		[ "$(now_ms)" -lt "$end" ] || fail "the mesh's webhook does not listen after 30 s"
		sleep 0.5
	done
	kubectl apply -f - >/dev/null <<-EOF || fail "kubectl apply of $MESH refused"
		apiVersion: admissionregistration.k8s.io/v1
		kind: MutatingWebhookConfiguration
		metadata:
		  name: $MESH
		webhooks:
		  - name: mesh.standin.rearguard.io
		    clientConfig:
		      url: https://$NODE_IP:$MESH_PORT/inject
		      caBundle: $(base64 -w0 <"$T/mesh.crt")
		    rules:
		      - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
		    namespaceSelector:
		      matchExpressions:
		        - {key: e2e-framework, operator: Exists}
		    failurePolicy: Fail
		    sideEffects: None
		    admissionReviewVersions: [v1]
		    timeoutSeconds: 5
		    reinvocationPolicy: Never
	EOF
	say "the mesh's webhook: $MESH, https://$NODE_IP:$MESH_PORT/inject, its reviews in $out/mesh.log"
}

# mesh_off: no zz-mesh-standin, no mesh webhook.
mesh_off() {
	timeout -k 5 60 "$CLUSTER" kubectl delete mutatingwebhookconfiguration "$MESH" --ignore-not-found >/dev/null 2>&1
	[ -n "$MESH_PID" ] || return 0
	# The server (nsenter execs it: tools/cluster exec's child), then tools/cluster exec.
	pkill -P "$MESH_PID" 2>/dev/null || true
	kill "$MESH_PID" 2>/dev/null || true
	wait "$MESH_PID" 2>/dev/null || true
	MESH_PID=
}

# rearguard_on: rearguard's webhook (installed) with its namespace entry
# selecting the framework's namespaces.
rearguard_on() {
	local i n names
	names=$(kubectl get mutatingwebhookconfiguration rearguard -o 'jsonpath={.webhooks[*].name}') ||
		fail "no MutatingWebhookConfiguration rearguard"
	i=0
	for n in $names; do
		[ "$n" != "$RG_ENTRY" ] || RG_INDEX=$i
		i=$((i + 1))
	done
	[ -n "$RG_INDEX" ] || fail "rearguard's configuration has no entry $RG_ENTRY ($names)"
	RG_SELECTOR=$(kubectl get mutatingwebhookconfiguration rearguard -o "jsonpath={.webhooks[$RG_INDEX].namespaceSelector}")
	kubectl patch mutatingwebhookconfiguration rearguard --type json -p "[{\"op\": \"replace\",
		\"path\": \"/webhooks/$RG_INDEX/namespaceSelector\",
		\"value\": {\"matchExpressions\": [{\"key\": \"e2e-framework\", \"operator\": \"Exists\"}]}}]" >/dev/null ||
		fail "cannot patch rearguard's $RG_ENTRY"
	say "rearguard's $RG_ENTRY selects the namespaces with the label e2e-framework (was: $RG_SELECTOR)"
}

# rearguard_off: rearguard's namespace entry selects what it did.
rearguard_off() {
	[ -n "$RG_SELECTOR" ] || return 0
	timeout -k 5 60 "$CLUSTER" kubectl patch mutatingwebhookconfiguration rearguard --type json \
		-p "[{\"op\": \"replace\", \"path\": \"/webhooks/$RG_INDEX/namespaceSelector\", \"value\": $RG_SELECTOR}]" \
		>/dev/null 2>&1
	RG_SELECTOR=
}

# run_e2e CONFIG: tools/cluster e2e, its report in $out/CONFIG, the mesh's
# reviews of the run (if it is on) in $out/CONFIG/mesh.log.
run_e2e() {
	local rc=0 t seen=0
	rm -rf "${out:?}/$1"
	[ ! -f "$out/mesh.log" ] || seen=$(wc -l <"$out/mesh.log")
	t=$(now_ms)
	say "$1: tools/cluster e2e --nodes $nodes --ginkgo.focus='$focus'"
	"$CLUSTER" e2e --nodes "$nodes" --report-dir "$out/$1" --ginkgo.focus="$focus" >"$out/$1.out" 2>&1 || rc=$?
	say "$1: e2e.test exited $rc after $((($(now_ms) - t) / 1000)) s ($out/$1/e2e.log)"
	[ -z "$MESH_PID" ] || tail -n +$((seen + 1)) "$out/mesh.log" >"$out/$1/mesh.log"
	# The next run on a quiet node: the kubelet tearing down this run's
	# pods (the mesh's hung ones) slowed the next run's deletions.
	t=$(now_ms)
	while [ -n "$(kubectl get namespaces -l e2e-framework -o name 2>/dev/null)" ]; do
		[ "$(($(now_ms) - t))" -lt 600000 ] || { say "$1: the framework's namespaces remain after 600 s"; break; }
		sleep 2
	done
	[ -f "$out/$1/verdicts.tsv" ] || fail "$1: no verdicts ($(tail -n 3 "$out/$1.out"))"
}

with_rearguard=
if [[ " ${configs[*]} " == *" rearguard "* ]]; then
	if "$RG_BUILDDIR/rearguard" webhook --help >/dev/null 2>&1; then
		with_rearguard=1
		# Its cleanup runs this script's (mesh_off, rearguard_off) after its own.
		# shellcheck source=tests/cluster/webhook-lib.sh
		. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"
	else
		say "rearguard: skipped: $RG_BUILDDIR/rearguard has no webhook (configure found no libmicrohttpd and GnuTLS)"
	fi
fi
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent
# The cluster, the stand-in's image loaded and, for "rearguard", the
# webhook installed: its namespace entry selects none of the framework's
# namespaces (they lack rearguard.io/inject=enabled) until rearguard_on.
if [ -n "$with_rearguard" ]; then
	webhook_up exclusive
else
	cluster_up
	load_images
fi
# The e2e.test of tools/cluster e2e, built before the first run is timed.
"$CLUSTER" e2e --build-only >"$out/build.out" 2>&1 || { tail -n 20 "$out/build.out"; fail "tools/cluster e2e --build-only failed"; }

for c in "${configs[@]}"; do
	case $c in
	plain) mesh_off; rearguard_off ;;
	mesh) rearguard_off; [ -n "$MESH_PID" ] || mesh_on ;;
	rearguard)
		# No column of an earlier run's.
		[ -n "$with_rearguard" ] || { rm -rf "${out:?}/rearguard"; continue; }
		[ -n "$MESH_PID" ] || mesh_on
		rearguard_on
		;;
	esac
	run_e2e "$c"
done

# The table: a row a spec, a column a configuration (verdict, seconds).
/usr/bin/python3 - "$out" "${configs[@]}" <<'PY'
import os, sys
out, configs = sys.argv[1], sys.argv[2:]
cells, names, whys = {}, [], []
for c in configs:
    f = os.path.join(out, c, "verdicts.tsv")
    if not os.path.exists(f):
        continue
    for line in open(f):
        v, t, name, why = (line.rstrip("\n").split("\t") + [""])[:4]
        if name not in names:
            names.append(name)
        cells[c, name] = "%s %6.1f s" % (v, float(t))
        if why:
            whys.append("%s, %s: %s" % (c, name, why))
configs = [c for c in configs if any((c, n) in cells for n in names)]
w = max([len(n) for n in names] + [4])
print("%-*s  %s" % (w, "spec", "  ".join("%-16s" % c for c in configs)))
for n in sorted(names):
    print("%-*s  %s" % (w, n, "  ".join("%-16s" % cells.get((c, n), "-") for c in configs)))
for line in whys:
    print("# " + line)
PY
