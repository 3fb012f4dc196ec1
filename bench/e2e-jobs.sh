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
#              manifests/webhook) with an entry of its configuration that
#              selects the framework's namespaces (they lack the label
#              rearguard.io/inject=enabled): a copy of its namespace entry,
#              whose reinvocationPolicy: IfNeeded has it see the mesh's proxy
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
# this script changes are as it found them when it ends; the other webhook
# tests share the webhook with it meanwhile (webhook_up shared): their
# namespaces are served as before.
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
MESH=zz-mesh-standin
# The mesh's reviews (mesh_on, tests/cluster/lib.sh).
MESH_LOG=$out/mesh.log
# rearguard's entry that selects namespaces, and its selector as installed.
RG_ENTRY=namespace.rearguard.io
# The entry of rearguard's configuration this script adds.
E2E_ENTRY=e2e.namespace.rearguard.io

# rearguard's configuration goes back as it was, before the cluster tests'
# cleanup (namespace, images).
at_exit rearguard_off

# rearguard_on: rearguard's webhook (installed) with an entry of its
# configuration that selects the framework's namespaces: a copy of its
# namespace entry, E2E_ENTRY, with that selector. The entries the other
# tests use stay as they are.
rearguard_on() {
	kubectl get mutatingwebhookconfiguration rearguard -o json >"$T/config.json" ||
		fail "no MutatingWebhookConfiguration rearguard"
	/usr/bin/python3 - "$T/config.json" "$RG_ENTRY" "$E2E_ENTRY" >"$T/add.json" <<-'PY' ||
		import json, sys
		c, entry, e2e = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
		w = [w for w in c["webhooks"] if w["name"] == entry][0]
		w["name"] = e2e
		w["namespaceSelector"] = {"matchExpressions": [{"key": "e2e-framework", "operator": "Exists"}]}
		json.dump([{"op": "add", "path": "/webhooks/-", "value": w}], sys.stdout)
	PY
		fail "rearguard's configuration has no entry $RG_ENTRY"
	kubectl patch mutatingwebhookconfiguration rearguard --type json -p "$(cat "$T/add.json")" >/dev/null ||
		fail "cannot add $E2E_ENTRY to rearguard's configuration"
	say "rearguard's $E2E_ENTRY, a copy of $RG_ENTRY, selects the namespaces with the label e2e-framework"
}

# rearguard_off: no E2E_ENTRY in rearguard's configuration.
rearguard_off() {
	local i=0 n
	for n in $(kubectl get mutatingwebhookconfiguration rearguard -o 'jsonpath={.webhooks[*].name}' 2>/dev/null); do
		if [ "$n" = "$E2E_ENTRY" ]; then
			kubectl patch mutatingwebhookconfiguration rearguard --type json -p "[{\"op\": \"test\",
				\"path\": \"/webhooks/$i/name\", \"value\": \"$E2E_ENTRY\"}, {\"op\": \"remove\", \"path\": \"/webhooks/$i\"}]" \
				>/dev/null 2>&1 || say "could not remove $E2E_ENTRY from rearguard's configuration"
			return 0
		fi
		i=$((i + 1))
	done
}

# mesh_framework: the mesh (mesh_on) adds its istio-proxy to the pods of
# the framework's namespaces.
mesh_framework() {
	istio_proxy_json "$T/proxy.json"
	mesh_on "$MESH" "$T/proxy.json" '{matchExpressions: [{key: e2e-framework, operator: Exists}]}'
}

# no_framework_ns: no namespace of the e2e framework is left.
no_framework_ns() {
	[ -z "$(kubectl get namespaces -l e2e-framework -o name 2>/dev/null)" ]
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
	[ -z "$MESH_CONFIG" ] || tail -n +$((seen + 1)) "$out/mesh.log" >"$out/$1/mesh.log"
	# The next run on a quiet node: the kubelet tearing down this run's
	# pods (the mesh's hung ones) slowed the next run's deletions.
	WAIT_EVERY=2 wait_for 600 no_framework_ns || say "$1: the framework's namespaces remain after 600 s"
	[ -f "$out/$1/verdicts.tsv" ] || fail "$1: no verdicts ($(tail -n 3 "$out/$1.out"))"
}

with_rearguard=
if [[ " ${configs[*]} " == *" rearguard "* ]]; then
	if "$RG_BUILDDIR/rearguard" webhook --help >/dev/null 2>&1; then
		with_rearguard=1
		# Its cleanup runs before this script's (mesh_off, rearguard_off).
		# shellcheck source=tests/cluster/webhook-lib.sh
		. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"
	else
		say "rearguard: skipped: $RG_BUILDDIR/rearguard has no webhook (configure found no libmicrohttpd and GnuTLS)"
	fi
fi
# The e2e.test of tools/cluster e2e, built before the first run is timed,
# and before the webhook is held (it may take a while: another process may
# be building it).
"$CLUSTER" e2e --build-only >"$out/build.out" 2>&1 || { tail -n 20 "$out/build.out"; fail "tools/cluster e2e --build-only failed"; }
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent
# The cluster, the stand-in's image loaded and, for "rearguard", the
# webhook installed: its namespace entry selects none of the framework's
# namespaces (they lack rearguard.io/inject=enabled) until rearguard_on.
if [ -n "$with_rearguard" ]; then
	# Shared: the other webhook tests' namespaces are served as before.
	webhook_up shared
else
	cluster_up
	load_images
fi

for c in "${configs[@]}"; do
	case $c in
	plain) mesh_off; rearguard_off ;;
	mesh) rearguard_off; [ -n "$MESH_CONFIG" ] || mesh_framework ;;
	rearguard)
		# No column of an earlier run's.
		[ -n "$with_rearguard" ] || { rm -rf "${out:?}/rearguard"; continue; }
		[ -n "$MESH_CONFIG" ] || mesh_framework
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
