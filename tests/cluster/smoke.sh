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
set -euo pipefail

srcdir=${RG_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TEST_NAME=cluster-smoke
skip() { printf 'SKIP: %s: %s\n' "$TEST_NAME" "$*"; exit 77; }
say() { printf '# %s\n' "$*"; }
fail() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*"
	[ -z "${ns:-}" ] || kc -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  | /' || true
	exit 1
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
cluster() { timeout -k 10 900 "$srcdir/tools/cluster" --state "$state" "$@"; }
kc() { cluster kubectl "$@"; }
image=localhost/rg-cluster-smoke-busybox:$$
ns=
work=$(mktemp -d)

# The host's side of things the cluster could leave behind.
snapshot() {
	grep -F "$state" /proc/self/mountinfo | awk '{ print "mount", $5 }' || true
	find /sys/fs/cgroup/ -mindepth 2 -maxdepth 2 -type d -name 'rearguard-cluster-*' -printf 'cgroup %p\n'
	ip -o link show | awk -F': ' '$2 ~ /^rg0/ { print "link", $2 }'
	local f
	for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops \
		kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
		[ -e "/proc/sys/$f" ] && echo "sysctl $f $(cat "/proc/sys/$f")"
	done
	pgrep -af -- "$state" | awk '{ $1 = "process"; print }' || true
	for f in /run/containerd /var/lib/cni /var/lib/kubelet /var/log/pods /var/log/containers \
		/opt/containerd /usr/libexec/kubernetes; do
		[ -e "$f" ] && echo "path $f"
	done
	return 0
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$ns" ] && [ "$own" = no ]; then
		kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
	fi
	if [ "$own" = yes ]; then
		cluster down >/dev/null 2>&1 || true
		rm -rf "$state"
	fi
	podman rmi -f "$image" >/dev/null 2>&1 || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT INT TERM

# wait_until SECONDS WHAT CMD...: until CMD succeeds.
wait_until() {
	local limit=$1 what=$2 end
	shift 2
	end=$(($(date +%s) + limit))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || fail "no $what after $limit s"
		sleep 1
	done
}

before=
if [ "$own" = yes ]; then
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
podman import "$work/busybox.tar" "$image" >/dev/null || fail "podman import failed"
cluster load "$image" 2>/dev/null || fail "tools/cluster load $image failed"

ns=smoke-$$
kc create namespace "$ns" >/dev/null || fail "cannot create namespace $ns"
wait_until 60 "default ServiceAccount in $ns" kc -n "$ns" get serviceaccount default

# 1. A plain Job completes, its termination message read back.
kc -n "$ns" apply -f - >/dev/null <<EOF || fail "cannot create the plain Job"
apiVersion: batch/v1
kind: Job
metadata: {name: plain}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: app
        image: $image
        imagePullPolicy: Never
        command: ["sh", "-c", "echo done >/dev/termination-log"]
EOF
kc -n "$ns" wait --for=condition=complete job/plain --timeout=180s >/dev/null ||
	fail "the plain Job did not complete"
msg=$(kc -n "$ns" get pods -l job-name=plain \
	-o 'jsonpath={.items[0].status.containerStatuses[0].state.terminated.message}')
[ "$msg" = "done" ] || fail "termination message \"$msg\", expected \"done\""
say "plain Job: Complete, termination message \"$msg\""

# 2. A Job whose app ends but whose second container never does stays active.
kc -n "$ns" apply -f - >/dev/null <<EOF || fail "cannot create the Job with a sidecar"
apiVersion: batch/v1
kind: Job
metadata: {name: stuck}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: app
        image: $image
        imagePullPolicy: Never
        command: ["sh", "-c", "exit 0"]
      - name: sidecar
        image: $image
        imagePullPolicy: Never
        command: ["sleep", "1000000"]
EOF
app_done() {
	[ "$(kc -n "$ns" get pods -l job-name=stuck \
		-o 'jsonpath={.items[0].status.containerStatuses[?(@.name=="app")].state.terminated.exitCode}')" = 0 ]
}
wait_until 180 "end of the app container of Job stuck" app_done
active=$(kc -n "$ns" get job stuck -o 'jsonpath={.status.active}')
succeeded=$(kc -n "$ns" get job stuck -o 'jsonpath={.status.succeeded}')
if [ "$active" != 1 ] || [ -n "$succeeded" ]; then
	fail "Job stuck: active \"$active\", succeeded \"$succeeded\"; expected active 1 while its sidecar runs"
fi
say "Job with a never-ending sidecar: app exited 0, the Job stays active"

# 3. shareProcessNamespace: one container sees the other's processes.
kc -n "$ns" apply -f - >/dev/null <<EOF || fail "cannot create the shared-PID pod"
apiVersion: v1
kind: Pod
metadata: {name: shared}
spec:
  shareProcessNamespace: true
  restartPolicy: Never
  containers:
  - name: one
    image: $image
    imagePullPolicy: Never
    command: ["sleep", "1000001"]
  - name: two
    image: $image
    imagePullPolicy: Never
    command: ["sleep", "1000002"]
EOF
kc -n "$ns" wait --for=condition=ready pod/shared --timeout=180s >/dev/null ||
	fail "the shared-PID pod did not become ready"
seen=$(kc -n "$ns" exec shared -c two -- ps -o pid,args) || fail "kubectl exec ps failed"
grep -q 'sleep 1000001' <<<"$seen" || fail "container two does not see container one's sleep: $seen"
grep -q '/pause' <<<"$seen" || fail "container two does not see the pause process: $seen"
say "shareProcessNamespace: container two sees $(grep -c . <<<"$seen") processes, one's sleep among them"

if [ "$own" = yes ]; then
	cluster down >/dev/null || fail "tools/cluster down failed"
	cluster down >/dev/null || fail "a second tools/cluster down failed"
	after=$(snapshot)
	[ "$before" = "$after" ] || fail "the host changed across up and down: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | paste -sd' ')"
	say "down: host as before (mounts, processes, cgroups, links, sysctls, paths)"
fi
echo "PASS: $TEST_NAME"
