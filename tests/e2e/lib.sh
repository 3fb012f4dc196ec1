# Sourced by every end-to-end test: a manifest from manifests/ played as a
# real pod on podman, with the image container/Dockerfile builds.
#
#   . "$RG_SRCDIR/tests/e2e/lib.sh"
#   image_agent; image_busybox
#   image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit
#   play manifests/job-signal-helper.yaml --command 'report=["sh", "-c", "sleep 1"]'
#   pod_wait 60
#   expect_code report 0
#   summary_is stopped sidecars 0 outcome
#
# The agent's image is the one users build: tools/image builds
# container/Dockerfile with podman (no registry), once per build tree while
# the sources do not change. Every test builds its other images (tagged with
# its name and pid), plays its own pod, and removes pod, volumes and those
# images on exit, also on failure. podman runs with
# tests/e2e/containers.conf (CONTAINERS_CONF), not the machine's
# configuration. Skipped (exit 77) with the reason when podman, debootstrap
# or the static toolchain is missing, or when configured with --disable-e2e.

: "${RG_BUILDDIR:?RG_BUILDDIR is set by make check}"
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
# shellcheck source=tests/common.sh
. "$RG_SRCDIR/tests/common.sh"

ID=$(printf '%s-%s' "$TEST_NAME" "$$" | tr 'A-Z_' 'a-z-')
POD=rge2e-$ID
IMAGES=
declare -A IMAGE_FOR # repository in the manifest -> local image

# Every podman call has a limit: a stuck storage lock or runtime must fail
# the test (and let its cleanup run), not hang it.
podman() { timeout -k 10 "${RG_PODMAN_TIMEOUT:-300}" "$(type -P podman)" "$@"; }

# fail_dump: every container of the pod, its state and the end of its log.
fail_dump() {
	local c
	[ -n "$T" ] && [ -f "$T/pod.yaml" ] || return 0
	for c in $(podman ps -a --filter "pod=$POD" --format '{{.Names}}' 2>/dev/null); do
		printf -- '---- %s: %s\n' "$c" "$(podman inspect --format '{{.State.Status}} exit {{.State.ExitCode}}' "$c" 2>&1)"
		podman logs "$c" 2>&1 | tail -n 40
	done
}

# e2e_teardown: the pod, its volumes and the test's images removed.
e2e_teardown() {
	local v
	if [ -f "$T/pod.yaml" ]; then
		podman pod rm -f "$POD" >/dev/null 2>&1 || true
		for v in $(podman volume ls -q --filter "name=$POD-" 2>/dev/null); do
			podman volume rm -f "$v" >/dev/null 2>&1 || true
		done
	fi
	# shellcheck disable=SC2086
	[ -z "$IMAGES" ] || podman rmi -f $IMAGES >/dev/null 2>&1 || true
}

if [ "${RG_E2E:-yes}" != yes ]; then
	skip "configured with --disable-e2e (these tests exercise the static release binary; CI runs them in the plain build)"
fi
[ "$(id -u)" = 0 ] || skip "needs root (rootful podman)"
for tool in podman runc; do
	type -P "$tool" >/dev/null || skip "$tool not installed (tools/deps podman runc installs it)"
done
for tool in musl-gcc dpkg-source; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed: cannot build the static binary (tools/deps musl-tools dpkg-dev)"
done
for tool in autoreconf:autoconf libtoolize:libtool debootstrap:debootstrap; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || skip "${tool%%:*} not installed (tools/deps ${tool#*:})"
done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed"
export CONTAINERS_CONF=$RG_SRCDIR/tests/e2e/containers.conf
podman info >/dev/null 2>&1 || skip "podman does not work here: $(podman info 2>&1 | tail -n 1)"

tmp_dir rg-e2e
at_exit e2e_teardown

# The static stand-ins, built once for all tests (the script caches and
# locks), for this machine. The libraries are kept in RG_STATIC_CACHE
# (default ~/.cache/rearguard), shared by build trees; RG_STATIC_CACHE=
# keeps them in the build tree.
STATIC=$RG_BUILDDIR/static
ARCH=$(dpkg --print-architecture)
STATIC_CACHE=()
[ -z "${RG_STATIC_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/rearguard}" ] ||
	STATIC_CACHE=(--cache "${RG_STATIC_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/rearguard}/static-$ARCH")
"$RG_SRCDIR/container/build-static.sh" --arch "$ARCH" "${STATIC_CACHE[@]}" "$STATIC" >"$T/build-static.log" 2>&1 ||
	{ tail -n 30 "$T/build-static.log"; fail "container/build-static.sh failed"; }

# image REPOSITORY NAME DIR CHANGE...: a local image of DIR's content (podman
# import, no registry), standing in for REPOSITORY in the manifests.
image() {
	local repo=$1 name=localhost/rearguard-e2e/$2:$ID dir=$3 changes=() c
	shift 3
	for c in "$@"; do changes+=(--change "$c"); done
	tar -C "$dir" -c . | podman import -q "${changes[@]}" - "$name" >/dev/null ||
		fail "cannot import image $name"
	IMAGES="$IMAGES $name"
	IMAGE_FOR[$repo]=$name
}

# built_image KIND ARCH: the image tools/image builds for ARCH (amd64,
# arm64), named after this build tree: KIND agent is container/Dockerfile
# (its name goes to BUILT_IMAGE), webhook container/Dockerfile.webhook
# (tools/image --webhook; to WEBHOOK_IMAGE). Built once: later calls (tests
# run in parallel, behind a lock) reuse it while no file of the source tree
# is newer than the build (files, not directories: autogen.sh's temporary
# files do not count). The first test builds it; podman's layer cache keeps
# the Debian base and the packages for the next build, and the agent's
# static libraries are those of the stand-ins and tests/arm64 (tools/image
# hands their cache to the build). The log is BUILDDIR/image-ARCH.log
# (image-webhook-ARCH.log).
built_image() {
	local kind=$1 arch=$2 file tag started newer rc=0 opts=()
	case $kind in
	agent)
		file=image-$arch
		tag=localhost/rearguard-e2e/image:$arch
		# The arm64 build's unit tests under qemu are tests/arm64/unit.sh's:
		# not twice. The amd64 build runs its static suite, natively, as the
		# only run of the unit tests on musl for amd64. The cluster tests'
		# image (RG_IMAGE_CHECK=no) leaves them out too: the end-to-end
		# tests' build ran them.
		[ "$arch" != arm64 ] && [ "${RG_IMAGE_CHECK:-yes}" = yes ] || opts=(--no-check)
		;;
	webhook)
		file=image-webhook-$arch
		tag=localhost/rearguard-e2e/webhook:$arch
		opts=(--webhook)
		;;
	*) fail "built_image: no image of kind $kind" ;;
	esac
	tag=$tag-$(printf '%s' "$RG_BUILDDIR" | cksum | cut -d' ' -f1)
	exec 8>"$RG_BUILDDIR/$file.lock"
	flock 8
	if [ "$(cat "$RG_BUILDDIR/$file.stamp" 2>/dev/null)" = "$tag" ] && podman image exists "$tag"; then
		newer=$(find "$RG_SRCDIR" \( -name .git -o -path "$RG_BUILDDIR" \
			-o -type d \( -name build -o -name 'build-*' -o -name autom4te.cache \) \) -prune \
			-o ! -type d -newer "$RG_BUILDDIR/$file.stamp" -print -quit)
		[ -z "$newer" ] || say "rebuilding the $kind image for $arch: $newer changed"
	else
		newer=yes
	fi
	if [ -n "$newer" ]; then
		started=$(date +%s)
		RG_IMAGE_TIMEOUT=2400 timeout -k 10 2500 "$RG_SRCDIR/tools/image" "${opts[@]}" --arch "$arch" --tag "$tag" \
			>"$RG_BUILDDIR/$file.log" 2>&1 || rc=$?
		if [ "$rc" != 0 ]; then
			exec 8>&-
			tail -n 40 "$RG_BUILDDIR/$file.log"
			fail "tools/image ${opts[*]} --arch $arch failed (log: $RG_BUILDDIR/$file.log)"
		fi
		say "$(grep '^tools/image: .* built in' "$RG_BUILDDIR/$file.log" | tail -n 1)"
		# The stamp's time is the build's start: an edit during the build counts.
		echo "$tag" >"$RG_BUILDDIR/$file.stamp"
		touch -d "@$started" "$RG_BUILDDIR/$file.stamp"
	fi
	exec 8>&-
	case $kind in
	agent) BUILT_IMAGE=$tag ;;
	webhook) WEBHOOK_IMAGE=$tag ;;
	esac
}

# image_agent: the agent's image, container/Dockerfile built for this
# machine's architecture (scratch, the static binary, uid 65532).
image_agent() {
	built_image agent "$ARCH"
	IMAGE_FOR[registry.example.com/rearguard]=$BUILT_IMAGE
}

# image_busybox: the apps' image, busybox-static with its applets.
image_busybox() {
	local d=$T/img/busybox a
	[ -x /bin/busybox ] || skip "busybox-static not installed (tools/deps busybox-static)"
	mkdir -p "$d/bin" "$d/tmp"
	cp /bin/busybox "$d/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$d/bin/$a"
	done
	image busybox busybox "$d" 'ENV PATH=/bin'
}

# image_standin REPOSITORY PATH [ARG...]: a stand-in for a sidecar's image:
# the static fake process at PATH (its process name is PATH's basename), run
# with ARGs, logging "<ms> <name> <pid> <event>" lines to its stdout.
image_standin() {
	image_program fake "$@"
}

# image_proxy REPOSITORY PATH [ARG...]: a stand-in for a proxy's image: the
# static stand-in proxy (tests/helpers/standin.c) at PATH, whose basename
# picks the proxy it behaves like (pilot-agent, cloud-sql-proxy, ...), run
# with ARGs, logging as image_standin's.
image_proxy() {
	image_program standin "$@"
}

# image_program PROGRAM REPOSITORY PATH [ARG...]: the static build's
# standins/PROGRAM at PATH, as the image's entrypoint with ARGs; with
# IMAGE_USER=UID set, the image's user (as the real image has it).
image_program() {
	local program=$1 repo=$2 path=$3 name d entry user=()
	shift 3
	name=$(basename "$path")
	d=$T/img/$name
	mkdir -p "$d$(dirname "$path")"
	cp "$STATIC/standins/$program" "$d$path"
	entry=$(/usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$path" --log /dev/stdout "$@")
	[ -z "${IMAGE_USER:-}" ] || user=("USER $IMAGE_USER")
	image "$repo" "$name" "$d" "ENTRYPOINT $entry" "${user[@]}"
}

# play MANIFEST [PODIFY-OPTION...]: the manifest's pod template as a pod
# (tests/e2e/podify.py), with the local images and a scratch volume at /e2e.
# The agent is the container named $AGENT (default rearguard; empty: none).
# Its containers start in the manifest's order, as the kubelet starts them
# (see kubelet_start); podman's own start would start them all at once.
play() {
	local manifest=$1 args=() repo
	shift
	# A path of the source tree, or a file the test made ($T/injected.yaml).
	case $manifest in /*) ;; *) manifest=$RG_SRCDIR/$manifest ;; esac
	for repo in "${!IMAGE_FOR[@]}"; do args+=(--image "$repo=${IMAGE_FOR[$repo]}"); done
	# The agent logs JSON (through its environment twin), so its last line is the summary.
	[ -z "${AGENT-rearguard}" ] || args+=(--env "${AGENT:-rearguard}=REARGUARD_LOG_FORMAT=json")
	/usr/bin/python3 "$RG_SRCDIR/tests/e2e/podify.py" "$manifest" --name "$POD" --scratch /e2e \
		--kubelet "$T/kubelet.json" "${args[@]}" "$@" >"$T/pod.yaml" || fail "cannot make a pod of $manifest"
	START_MS=$(now_ms)
	podman kube play --start=false --network none "$T/pod.yaml" >"$T/play.log" 2>&1 ||
		{ cat "$T/play.log"; fail "podman kube play failed"; }
	# The kubelet makes an emptyDir world-writable (0777); podman makes a
	# named volume 0755 and gives it to the uid of the first container that
	# mounts it, whichever that is.
	for v in $(podman volume ls -q --filter "name=$POD-"); do
		chmod 0777 "$(podman volume inspect "$v" --format '{{.Mountpoint}}')" || fail "cannot chmod volume $v"
	done
	kubelet_start
}

# inject_job MANIFEST [INJECT-OPTION...]: the manifest through the release
# binary's `rearguard inject` into $T/injected.yaml (what users apply), with
# its notes in $T/inject.err.
inject_job() {
	local manifest=$1
	shift
	"$STATIC/rearguard" inject "$@" "$RG_SRCDIR/$manifest" >"$T/injected.yaml" 2>"$T/inject.err" ||
		{ cat "$T/inject.err"; fail "rearguard inject failed on $manifest"; }
}

# injected PYTHON-EXPRESSION: a value of the injected manifest's pod template
# (t: the template, c: its containers by name), printed.
injected() {
	/usr/bin/python3 - "$T/injected.yaml" "$1" <<'PY'
import sys, yaml
doc = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d)
t = doc["spec"]["jobTemplate"]["spec"]["template"] if doc["kind"] == "CronJob" else \
    doc["spec"]["template"] if doc["kind"] == "Job" else doc
c = {x["name"]: x for x in t["spec"]["containers"]}
env = {e["name"]: e.get("value") for e in c.get("rearguard", {}).get("env", [])}
print(eval(sys.argv[2]))
PY
}

# kubelet KEY [NAME]: a list (one per line) or a hook's command (NUL-separated)
# from what podify.py wrote for the kubelet.
kubelet() {
	/usr/bin/python3 - "$T/kubelet.json" "$@" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))
if len(sys.argv) == 3:
    print("\n".join(k[sys.argv[2]]))
else:
    sys.stdout.write("".join(a + "\0" for a in k[sys.argv[2]].get(sys.argv[3], [])))
PY
}

# kubelet_start: what the kubelet does and podman kube play does not: init
# containers one after another, each to its exit; then the containers in
# order, each one's postStart hook (podman exec) finishing before the next
# starts. A failed hook kills its container, as the kubelet does.
kubelet_start() {
	local c code hook
	for c in $(kubelet init); do
		podman start "$POD-$c" >/dev/null || fail "cannot start init container $c"
		code=$(timeout 60 podman wait "$POD-$c") || fail "init container $c did not finish within 60 s"
		[ "$code" = 0 ] || fail "init container $c exited $code"
	done
	for c in $(kubelet containers); do
		podman start "$POD-$c" >/dev/null || fail "cannot start container $c"
		mapfile -d '' hook < <(kubelet postStart "$c")
		[ "${#hook[@]}" -gt 0 ] || continue
		if ! timeout 300 podman exec "$POD-$c" "${hook[@]}" >"$T/$c.poststart.log" 2>&1; then
			say "postStart of $c failed: $(tail -n 1 "$T/$c.poststart.log")"
			podman kill "$POD-$c" >/dev/null 2>&1 || true
		fi
	done
}

# pod_delete GRACE: what the kubelet does when the pod is deleted: for every
# running container at once, its preStop hook (podman exec) to its end,
# then SIGTERM; whatever still runs GRACE seconds after the start gets
# SIGKILL. DELETE_MS is when it began; a hook's output goes to
# $T/CTR.prestop.log and the time it ended to $T/CTR.prestop.end.
pod_delete() {
	local grace=$1 c end pids=()
	DELETE_MS=$(now_ms)
	end=$((DELETE_MS + grace * 1000))
	for c in $(kubelet containers); do
		[ "$(podman inspect --format '{{.State.Running}}' "$POD-$c" 2>/dev/null)" = true ] || continue
		(
			mapfile -d '' hook < <(kubelet preStop "$c")
			if [ "${#hook[@]}" -gt 0 ]; then
				timeout "$grace" podman exec "$POD-$c" "${hook[@]}" >"$T/$c.prestop.log" 2>&1 ||
					echo "exit $?" >>"$T/$c.prestop.log"
				now_ms >"$T/$c.prestop.end"
			fi
			podman kill --signal TERM "$POD-$c" >/dev/null 2>&1 || true
		) &
		pids+=($!)
	done
	while [ "$(podman pod inspect "$POD" --format '{{.State}}' 2>&1)" != Exited ] && [ "$(now_ms)" -lt "$end" ]; do
		sleep 0.2
	done
	for c in $(kubelet containers); do
		if [ "$(podman inspect --format '{{.State.Running}}' "$POD-$c" 2>/dev/null)" = true ]; then
			say "$c still runs after the grace period of $grace s: SIGKILL"
			podman kill --signal KILL "$POD-$c" >/dev/null 2>&1 || true
		fi
	done
	wait "${pids[@]}" 2>/dev/null || true
}

# volume_file VOLUME FILE: the path of FILE in the pod's emptyDir VOLUME.
volume_file() {
	local dir
	dir=$(podman volume inspect "$POD-$1" --format '{{.Mountpoint}}') || fail "no volume $1"
	printf '%s/%s\n' "$dir" "$2"
}

# wait_file SECONDS PATH: waits until PATH exists.
wait_file() {
	WAIT_EVERY=0.1 wait_for "$1" test -e "$2" || fail "$2 did not appear within $1 s"
}

# pod_wait SECONDS: waits until every container of the pod has exited;
# WALL_MS is the time from play to then.
pod_wait() {
	local end=$(($(now_ms) + $1 * 1000)) state
	while :; do
		state=$(podman pod inspect "$POD" --format '{{.State}}' 2>&1) || fail "pod inspect: $state"
		[ "$state" = Exited ] && break
		[ "$(now_ms)" -lt "$end" ] || fail "the pod did not finish within $1 s (state: $state)"
		sleep 0.2
	done
	WALL_MS=$(($(now_ms) - START_MS))
}

# ctr_code NAME: the exit code of the pod's container NAME.
ctr_code() {
	podman inspect --format '{{.State.ExitCode}}' "$POD-$1"
}

expect_code() {
	local got
	got=$(ctr_code "$1") || fail "no container $1"
	[ "$got" = "$2" ] || fail "container $1 exited $got, want $2"
}

# ctr_logs NAME: what the container wrote (kubectl logs).
ctr_logs() {
	podman logs "$POD-$1" 2>&1
}

# event_ms CONTAINER EVENT: time (ms) of the first EVENT a stand-in logged; empty if none.
event_ms() {
	ctr_logs "$1" | awk -v e="$2" '$1 ~ /^[0-9]+$/ && index($0, e) { print $1; exit }'
}

# marker_ms FILE: modification time (ms) of FILE on the scratch volume (/e2e
# in the pod): apps touch a marker as their last act before exiting.
marker_ms() {
	local dir
	dir=$(podman volume inspect "$POD-e2e" --format '{{.Mountpoint}}') || fail "no scratch volume"
	[ -e "$dir/$1" ] || return 0
	stat -c %.3Y "$dir/$1" | tr -d .
}

# A file's times come from the kernel's coarse clock, which lags the precise
# one by up to a tick: a marker's mtime may be that much before its touch.
# marker_latest_ms NAME: the latest the touch can have been, for a marker
# that is the later of two events (in_order EVENT "$(marker_latest_ms NAME)").
COARSE_MS=$(/usr/bin/python3 -c 'import time; print(max(1, -(-time.clock_getres(5) * 1000 // 1)))' | cut -d. -f1)
marker_latest_ms() {
	local ms
	ms=$(marker_ms "$1")
	[ -z "$ms" ] || echo $((ms + COARSE_MS))
}

# summary_is VALUE KEY...: a value of the agent's summary, taken from its last
# log line (--log-format json), as an operator reads it with kubectl logs.
summary_is() {
	local want=$1 got
	shift
	ctr_logs "${AGENT:-rearguard}" | tail -n 1 >"$T/summary.json"
	got=$(/usr/bin/python3 - "$T/summary.json" "$@" <<'PY'
import json, sys
line = json.load(open(sys.argv[1]))
assert line["msg"] == "finished", "the last log line is not the summary"
v = line["summary"]
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print("null" if v is None else v)
PY
) || fail "no summary value at $* in the agent's last log line"
	[ "$got" = "$want" ] || fail "summary $*: $got, want $want"
}

# in_order EARLIER LATER MAX_MS WHAT: two times (ms) both known, LATER not
# before EARLIER and at most MAX_MS after it ("-": no bound); GAP_MS is the gap.
in_order() {
	[ -n "$1" ] && [ -n "$2" ] || fail "$4: a time is missing (earlier '$1', later '$2')"
	[ "$2" -ge "$1" ] || fail "$4: the later came at $2, before the earlier at $1"
	GAP_MS=$(($2 - $1))
	[ "$3" = - ] || assert_between "$GAP_MS" 0 "$3" "$4 (ms)"
}

# assert_between VALUE LOW HIGH WHAT. A bound tells two behaviours apart
# (a timer that ran, or the next timer that would have), not how fast this
# machine is: HIGH is at least 2 s past the value expected, for a busy
# machine, and short of the next timer.
assert_between() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ] || fail "$4: $1 not in [$2, $3]"
}
