#!/bin/bash
# tools/cluster against itself: the one-node cluster runs a plain Job to
# completion, keeps a Job with a never-ending second container active, and
# runs a shareProcessNamespace pod whose containers see each other's
# processes.
#
# With RG_CLUSTER_STATE naming the state directory of a cluster that is up
# (tools/cluster --state DIR up), the checks run there, in a namespace of
# their own that is deleted after. Without it the test brings up a cluster
# of its own in a fresh state directory, runs the checks and takes it down,
# then checks that the host is as before: no mount, process, cgroup or
# network link of the cluster left, the covered sysctls unchanged.
#
# Skipped (exit 77) without root or without podman and busybox-static (the
# image of the pods is made from /bin/busybox).
set -o pipefail
RG_SRCDIR=${RG_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TEST_NAME=cluster-smoke
# shellcheck source=tests/common.sh
. "$RG_SRCDIR/tests/common.sh"
# fail_dump: the namespace's pods and Jobs.
fail_dump() {
	[ -z "${ns:-}" ] || kc -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  | /' || true
}

[ "$(id -u)" = 0 ] || skip "needs root (tools/cluster runs namespaces, cgroups and mounts)"
command -v podman >/dev/null 2>&1 || skip "podman not found"
/bin/busybox --list >/dev/null 2>&1 || skip "no /bin/busybox (busybox-static)"

podman() { timeout -k 10 300 "$(type -P podman)" "$@"; }
own=no
state=${RG_CLUSTER_STATE:-}
if [ -z "$state" ]; then
	own=yes
	state=$(mktemp -d /var/tmp/rg-cluster-smoke.XXXXXX)
fi
cluster() { timeout -k 10 900 "$RG_SRCDIR/tools/cluster" --state "$state" "$@"; }
kc() { cluster kubectl "$@"; }
image=localhost/rg-cluster-smoke-busybox:$$
ns=
tmp_dir rg-cluster-smoke
work=$T

# The host's side of things the cluster could leave behind.
snapshot() {
	grep -F "$state" /proc/self/mountinfo | awk '{ print "mount", $5 }' || true
	find /sys/fs/cgroup/ -mindepth 2 -maxdepth 2 -type d -name "${cgroup#/}" -printf 'cgroup %p\n'
	ip -o link show | awk -F': ' '$2 ~ /^rg0/ { print "link", $2 }'
	local f
	for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops \
		kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
		[ -e "/proc/sys/$f" ] && echo "sysctl $f $(cat "/proc/sys/$f")"
	done
	pgrep -af -- "$state" | awk '{ $1 = "process"; print }' || true
	for f in /run/containerd /var/lib/cni /var/lib/kubelet /var/log/pods /var/log/containers \
		/opt/containerd /usr/libexec/kubernetes /etc/kubernetes /var/run/kubernetes; do
		[ -e "$f" ] && echo "path $f"
	done
	return 0
}

# smoke_teardown: the namespace, or the cluster of its own, and the image gone.
smoke_teardown() {
	if [ -n "$ns" ] && [ "$own" = no ]; then
		kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
	fi
	if [ "$own" = yes ]; then
		cluster down >/dev/null 2>&1 || true
		rm -rf "$state"
	fi
	podman rmi -f "$image" >/dev/null 2>&1 || true
}
at_exit smoke_teardown

before=
if [ "$own" = yes ]; then
	# The cgroup of this state directory (other clusters may come and go).
	cgroup=$(cluster status | sed -n 's/^cgroup root: //p' || true)
	[ -n "$cgroup" ] || fail "tools/cluster status names no cgroup root"
	before=$(snapshot)
	say "bringing up a cluster in $state"
	cluster up >/dev/null || fail "tools/cluster up failed"
fi
cluster status >/dev/null || fail "tools/cluster status: no cluster up in $state"

# The pods' image: busybox-static and the applets the checks use.
mkdir -p "$work/root/bin"
cp /bin/busybox "$work/root/bin/busybox"
for a in sh sleep ps cat echo; do ln -s busybox "$work/root/bin/$a"; done
tar -C "$work/root" -cf "$work/busybox.tar" .
podman import "$work/busybox.tar" "$image" >/dev/null 2>&1 || fail "podman import failed"
cluster load "$image" 2>/dev/null || fail "tools/cluster load $image failed"

ns=smoke-$$
kc create namespace "$ns" >/dev/null || fail "cannot create namespace $ns"
WAIT_EVERY=1 wait_for 60 kc -n "$ns" get serviceaccount default || fail "no default ServiceAccount in $ns after 60 s"

# containers INDENT NAME=COMMAND...: containers of the pods' image, COMMAND
# a JSON array.
containers() {
	local indent=$1 c
	shift
	for c in "$@"; do
		printf '%s- {name: %s, image: %s, imagePullPolicy: Never, command: %s}\n' \
			"$indent" "${c%%=*}" "$image" "${c#*=}"
	done
}
# job NAME NAME=COMMAND...: a Job of these containers, never restarted.
job() {
	local name=$1
	shift
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s}\nspec:\n  backoffLimit: 0\n' "$name"
	printf '  template:\n    spec:\n      restartPolicy: Never\n      containers:\n'
	containers "      " "$@"
}

# 1. A plain Job completes, its termination message read back.
job plain 'app=["sh", "-c", "echo done >/dev/termination-log"]' | kc -n "$ns" apply -f - >/dev/null ||
	fail "cannot create the plain Job"
kc -n "$ns" wait --for=condition=complete job/plain --timeout=180s >/dev/null ||
	fail "the plain Job did not complete"
msg=$(kc -n "$ns" get pods -l job-name=plain \
	-o 'jsonpath={.items[0].status.containerStatuses[0].state.terminated.message}')
[ "$msg" = "done" ] || fail "termination message \"$msg\", expected \"done\""
say "plain Job: Complete, termination message \"$msg\""

# 2. A Job whose app ends but whose second container never does stays active.
job stuck 'app=["sh", "-c", "exit 0"]' 'sidecar=["sleep", "1000000"]' | kc -n "$ns" apply -f - >/dev/null ||
	fail "cannot create the Job with a sidecar"
app_done() {
	[ "$(kc -n "$ns" get pods -l job-name=stuck \
		-o 'jsonpath={.items[0].status.containerStatuses[?(@.name=="app")].state.terminated.exitCode}')" = 0 ]
}
WAIT_EVERY=1 wait_for 180 app_done || fail "no end of the app container of Job stuck after 180 s"
active=$(kc -n "$ns" get job stuck -o 'jsonpath={.status.active}')
succeeded=$(kc -n "$ns" get job stuck -o 'jsonpath={.status.succeeded}')
if [ "$active" != 1 ] || [ -n "$succeeded" ]; then
	fail "Job stuck: active \"$active\", succeeded \"$succeeded\"; expected active 1 while its sidecar runs"
fi
say "Job with a never-ending sidecar: app exited 0, the Job stays active"

# 3. shareProcessNamespace: one container sees the other's processes.
{
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: shared}\n'
	printf 'spec:\n  shareProcessNamespace: true\n  restartPolicy: Never\n  containers:\n'
	containers "  " 'one=["sleep", "1000001"]' 'two=["sleep", "1000002"]'
} | kc -n "$ns" apply -f - >/dev/null || fail "cannot create the shared-PID pod"
kc -n "$ns" wait --for=condition=ready pod/shared --timeout=180s >/dev/null ||
	fail "the shared-PID pod did not become ready"
seen=$(kc -n "$ns" exec shared -c two -- ps -o pid,args) || fail "kubectl exec ps failed"
grep -q 'sleep 1000001' <<<"$seen" || fail "container two does not see container one's sleep: $seen"
grep -q '/pause' <<<"$seen" || fail "container two does not see the pause process: $seen"
say "shareProcessNamespace: container two sees $(grep -c . <<<"$seen") processes, one's sleep among them"

if [ "$own" = yes ]; then
	ns=
	cluster down >/dev/null || fail "tools/cluster down failed"
	cluster down >/dev/null || fail "a second tools/cluster down failed"
	after=$(snapshot)
	[ "$before" = "$after" ] || fail "the host changed across up and down: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | paste -sd' ')"
	say "down: host as before (mounts, processes, cgroups, links, sysctls, paths)"
fi
echo "PASS: $TEST_NAME"
