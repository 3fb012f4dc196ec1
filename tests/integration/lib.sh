# Sourced by every integration test: a Kubernetes-like pod made of namespaces.
#
#   . "$RG_SRCDIR/tests/integration/lib.sh"
#   pod_start                          # pause as PID 1 of new PID and network namespaces
#   alias_bin fluent-bit               # $BIN/fluent-bit: the fake process under that name
#   ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS"
#   ctr_start agent 1002 "$BIN/rearguard" --sidecar match=fluent-bit ...
#   ctr_wait agent 20; [ "$RC" = 0 ] || fail "agent exited $RC"
#
# Each container is a child of the pod's PID namespace with parent pid 0, in
# its own mount namespace and cgroup (cgroup v2 and the v1 pids hierarchy),
# running as its own uid. $EMPTYDIR is the shared volume. Everything started
# is killed on exit, also on failure (at_exit, tests/common.sh, runs what a
# test set up outside the pod first). Without root or namespaces: exit 77.

: "${RG_BUILDDIR:?RG_BUILDDIR is set by make check}"
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
# shellcheck source=tests/common.sh
. "$RG_SRCDIR/tests/common.sh"

PAUSE=
LAUNCHERS=
CGROUP_DIRS=

# fail_dump: the end of every log of the test's directory.
fail_dump() {
	local f
	[ -n "$T" ] || return 0
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		printf '%s\n' "---- $(basename "$f")"
		tail -n 60 "$f"
	done
}

# kill_ours PID...: SIGKILL to each PID that is still a process of this test. A pid
# recorded earlier may by now name somebody else's process: its command line says whose.
kill_ours() {
	local pid
	for pid in "$@"; do
		case $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") in
		*"$T/"*) kill -9 "$pid" 2>/dev/null || true ;;
		esac
	done
}

# pod_teardown: the pod and its containers killed, their cgroups removed.
pod_teardown() {
	local d
	# Killing a PID namespace's init kills everything in it.
	[ -z "$PAUSE" ] || kill_ours "$PAUSE"
	# The launchers outside the pod exit once their child is gone; make sure.
	kill_ours $LAUNCHERS
	for d in $CGROUP_DIRS; do
		# Killed tasks leave their cgroups a moment later: empty first, then removed.
		wait_for 5 sh -c "! cat $d/*/cgroup.procs 2>/dev/null | grep -q ." 2>/dev/null || true
		rmdir "$d"/* 2>/dev/null || true
		rmdir "$d" 2>/dev/null || say "cgroup $d left behind"
	done
}

[ "$(id -u)" = 0 ] || skip "needs root to build pods out of namespaces"
for tool in unshare nsenter ip; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
done

tmp_dir rg-test
at_exit pod_teardown
# Other uids must reach the binaries and the shared volume.
chmod 755 "$T"
BIN=$T/bin
EMPTYDIR=$T/emptydir
EVENTS=$T/events
RUN=$T/run
mkdir -p "$BIN" "$EMPTYDIR" "$RUN"
# An emptyDir is mode 0777, as the kubelet makes it.
chmod 0777 "$EMPTYDIR"
chmod 1777 "$RUN"
: >"$EVENTS"
chmod 666 "$EVENTS"
cp "$RG_BUILDDIR/rearguard" "$RG_BUILDDIR/tests/helpers/pause" "$RG_BUILDDIR/tests/helpers/fake" \
	"$RG_BUILDDIR/tests/helpers/enosys" "$RG_BUILDDIR/tests/helpers/standin" "$BIN/"
cp "$RG_BUILDDIR/tests/helpers/enter" "$BIN/runc"
chmod 755 "$BIN"/*

unshare --pid --fork --mount-proc true 2>/dev/null || skip "cannot create PID namespaces here"

# cgroup v2 (its own mount, or the unified hierarchy of a hybrid host) and v1 pids.
CG2=
if [ -f /sys/fs/cgroup/cgroup.procs ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	CG2=/sys/fs/cgroup
elif [ -d /sys/fs/cgroup/unified ]; then
	CG2=/sys/fs/cgroup/unified
fi
CG1=
[ -d /sys/fs/cgroup/pids ] && [ "$(stat -fc %T /sys/fs/cgroup/pids)" = cgroupfs ] && CG1=/sys/fs/cgroup/pids
for base in $CG2 $CG1; do
	d=$base/rg-test-$$
	mkdir "$d" 2>/dev/null || skip "cannot create cgroups under $base"
	CGROUP_DIRS="$CGROUP_DIRS $d"
done
[ -n "$CGROUP_DIRS" ] || skip "no cgroup hierarchy to give containers their own cgroups"

# alias_bin NAME...: $BIN/NAME runs the fake process with NAME as its process name.
alias_bin() {
	local name
	for name in "$@"; do ln -sf fake "$BIN/$name"; done
}

# cgroup_args NAME: --cgroup options that put a container into its own cgroups.
cgroup_args() {
	local d
	for d in $CGROUP_DIRS; do
		mkdir -p "$d/$1"
		printf -- '--cgroup %s ' "$d/$1/cgroup.procs"
	done
}

pod_start() {
	unshare --pid --fork --mount-proc --net "$BIN/pause" 2>"$T/pause.err" &
	local outer=$! i
	LAUNCHERS="$LAUNCHERS $outer"
	disown $outer
	for i in $(seq 200); do
		PAUSE=$(cat /proc/$outer/task/$outer/children 2>/dev/null | awk '{print $1}')
		[ -n "$PAUSE" ] && break
		sleep 0.01
	done
	[ -n "$PAUSE" ] || fail "pause did not start"
	# pause gets a cgroup of its own, like under a real runtime.
	for d in $CGROUP_DIRS; do
		mkdir -p "$d/pause"
		echo "$PAUSE" >"$d/pause/cgroup.procs"
	done
	nsenter --target "$PAUSE" --net ip link set lo up
}

# ctr_start NAME UID CMD [ARG...]: a container, in the background; its output goes to $T/NAME.log.
# With CTR_PID=N its main process gets pid N in the pod (if N is free): a pid reused on purpose.
# With KUBELET_NAMES=yes it has the mount the kubelet gives each container (its termination-message
# file, from .../pods/UID/containers/NAME/ID), which names it NAME in the pod; CTR_NAME=NAME names it
# otherwise than NAME (a restart under OnFailure is a new container of the same name).
# With CTR_HOLD=FILE it stays the runtime's init (named runc) until FILE exists, then execs CMD.
ctr_start() {
	local name=$1 uid=$2
	shift 2
	rm -f "$T/$name.pid" "$T/$name.exit"
	local bind=
	if [ "${KUBELET_NAMES:-}" = yes ]; then
		bind=$T/kubelet/pods/0f1e2d3c-uid/containers/${CTR_NAME:-$name}/$name-$RANDOM
		mkdir -p "${bind%/*}"
		: >"$bind"
	fi
	# shellcheck disable=SC2046
	"$BIN/runc" --target "$PAUSE" $(cgroup_args "$name") --uid "$uid" ${CTR_PID:+--pid "$CTR_PID"} ${bind:+--bind "$bind"} ${CTR_HOLD:+--hold "$CTR_HOLD"} --pidfile "$T/$name.pid" \
		--exitfile "$T/$name.exit" -- "$@" >"$T/$name.log" 2>&1 &
	# The exit status comes through the exit file: no job notices when a pod is killed.
	LAUNCHERS="$LAUNCHERS $!"
	disown $!
	wait_for 5 test -s "$T/$name.pid" || fail "container $name did not start"
}

# caddy_start NAME UID: a container running Debian's Caddy as UID, its admin API (where it is
# stopped: POST /stop) on 127.0.0.1:2019, serving "served by caddy" on 127.0.0.1:8081; its state
# in $T/NAME. Returns once the container started, not once Caddy listens.
caddy_start() {
	local d=$T/$1
	mkdir -p "$d"
	cat >"$d/Caddyfile" <<CONF
{
	admin 127.0.0.1:2019
	auto_https off
	storage file_system $d/data
}
http://127.0.0.1:8081 {
	respond "served by caddy"
}
CONF
	chown -R "$2" "$d"
	# Its environment through the launcher's: an env(1) in front would be what the agent first sees.
	HOME=$d XDG_CONFIG_HOME=$d/config XDG_DATA_HOME=$d/data \
		ctr_start "$1" "$2" /usr/bin/caddy run --config "$d/Caddyfile" --adapter caddyfile
}

# nginx_conf DIR UID: an nginx prefix in DIR owned by UID, with everything nginx writes (config
# DIR/nginx.conf, pid file, error log DIR/error.log, temporary paths): a master and two workers
# that serve 127.0.0.1:8080.
nginx_conf() {
	local N=$1
	mkdir -p "$N"
	cat >"$N/nginx.conf" <<CONF
worker_processes 2;
pid $N/nginx.pid;
error_log $N/error.log notice;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $N/body;
	proxy_temp_path $N/proxy;
	fastcgi_temp_path $N/fastcgi;
	uwsgi_temp_path $N/uwsgi;
	scgi_temp_path $N/scgi;
	server {
		listen 127.0.0.1:8080;
		location / { return 200 "served by \$pid\n"; }
	}
}
CONF
	chown -R "$2:$2" "$N"
}

# app_false_first SIDECAR: an app container running `false` that shows its runtime's init first
# (runc create), then runs (runc start) and exits 1 at once; the agent then warns that it waits
# for SIDECAR, named with --sidecar and not started yet.
app_false_first() {
	CTR_HOLD=$RUN/go ctr_start app 1001 /bin/false
	wait_for 10 grep -q "role=pending" "$T/agent.log" || fail "the app's container was never seen pending"
	touch "$RUN/go"
	expect_exit app 5 1
	wait_for 10 grep -q "sidecar $1 has not started yet: waiting for it" "$T/agent.log" ||
		fail "no warning that the agent waits for $1"
}

# fails_pod_app PROG CODE: the first app, PROG, exited CODE and alone fails the pod. It is named
# PROG, or runc when it exited before a rescan saw its program run (its runtime's init's name).
fails_pod_app() {
	local name
	name=$(json_get "$RUN/termination-log" apps 0 name) || fail "no app in the summary"
	[ "$name" = "$1" ] || [ "$name" = runc ] || fail "the app is named '$name', want $1 or runc"
	fails_pod_is "$RUN/termination-log" "app:$name:$2"
}

# agent_scanned [NAME]: waits until the agent (container "agent") has scanned the pod once.
# An app that starts and exits before that scan would never be seen.
agent_scanned() {
	wait_for 10 grep -q "pod scanned" "$T/${1:-agent}.log" || fail "the agent did not scan the pod"
}

# idle_nofile_limit AGENT_ARG...: starts a fluent-bit sidecar and the agent (containers "proxy"
# and "agent", AGENT_ARG its arguments) in the current pod; once the agent idles, NOFILE_LIMIT is
# an RLIMIT_NOFILE that leaves it one descriptor above the lowest it does not hold (the limit is on
# descriptor numbers). While apps are awaited the agent rescans /proc every 100 ms, and a rescan
# holds a file of /proc for a moment at the lowest free number: a look that lands in a rescan
# sees one or two more than the idle agent holds. The fewest of ten looks is what it holds idle.
idle_nofile_limit() {
	local fds free i idle_fds=-1 idle_free=-1 n
	fake_start proxy 1002 fluent-bit
	ctr_start agent 1002 "$BIN/rearguard" "$@"
	agent_scanned
	# The ready file is the last thing its start-up does: what it holds from then on is its own.
	wait_for 10 grep -q "wrote the ready file" "$T/agent.log" || fail "the agent did not write the ready file"
	for i in $(seq 10); do
		fds=$(ls "/proc/$(ctr_pid agent)/fd")
		n=$(echo "$fds" | wc -l)
		free=$(echo "$fds" | sort -n | awk 'BEGIN { f = 0 } $1 == f { f++ } END { print f }')
		[ "$idle_fds" -ge 0 ] && [ "$idle_fds" -le "$n" ] || idle_fds=$n
		[ "$idle_free" -ge 0 ] && [ "$idle_free" -le "$free" ] || idle_free=$free
		sleep 0.05
	done
	NOFILE_LIMIT=$((idle_free + 1))
	say "idle: $idle_fds fds, the lowest free $idle_free; RLIMIT_NOFILE $NOFILE_LIMIT"
}

# shipper_agent [ARG...]: the agent most tests run, with ARGs added: the fake log shipper
# fluent-bit its one sidecar, stopped with SIGTERM, one app, --dir $EMPTYDIR; as container
# AGENT_NAME (default agent), uid AGENT_UID (default 1002). Its summary goes to
# $RUN/termination-log, or to termination-logN for a container agentN (an agent started again).
shipper_agent() {
	local name=${AGENT_NAME:-agent}
	ctr_start "$name" "${AGENT_UID:-1002}" "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log${name#agent}" "$@"
}

# shipper_pod [SHIPPER_ARG...]: a new pod with the fake log shipper (container proxy, uid 1002,
# run with SHIPPER_ARGs) and shipper_agent, once it has scanned the pod; the fake app is $BIN/job.
shipper_pod() {
	alias_bin fluent-bit job
	pod_start
	fake_start proxy 1002 fluent-bit "$@"
	shipper_agent
	agent_scanned
}

# first_attempt_fails GRACE JOB_ARG...: under OnFailure, the fake log shipper (container proxy)
# and shipper_agent with --restart-grace GRACE, then the app's first attempt (container app,
# the job stand-in named attempt1 with JOB_ARGs) exiting 3; returns once the agent said it
# keeps the sidecars for the app's restart.
first_attempt_fails() {
	local grace=$1
	shift
	fake_start proxy 1002 fluent-bit
	shipper_agent --restart-policy OnFailure --restart-grace "$grace"
	agent_scanned
	ctr_start app 1001 "$BIN/job" "$@" --exit 3 --name attempt1 --log "$EVENTS"
	expect_exit app 5 3
	wait_for 5 grep -q "keeping the sidecars for its restart" "$T/agent.log" || fail "no restart awaited"
}

# ctr_exec NAME UID CMD...: a process entering container NAME later (kubectl exec).
ctr_exec() {
	local name=$1 uid=$2 args= d
	shift 2
	for d in $CGROUP_DIRS; do args="$args --cgroup $d/$name/cgroup.procs"; done
	# shellcheck disable=SC2086
	"$BIN/runc" --target "$PAUSE" $args --move-after yes --uid "$uid" --pidfile "$T/$name-exec.pid" -- "$@" \
		>"$T/$name-exec.log" 2>&1 &
	LAUNCHERS="$LAUNCHERS $!"
	disown $!
	wait_for 5 test -s "$T/$name-exec.pid" || fail "exec into $name did not start"
}

# ctr_hook NAME CTR UID CMD...: a lifecycle hook (the kubelet's exec) running CMD in container CTR as
# UID, entering it as ctr_exec does; its output in $T/NAME.log, its pid and exit status in NAME's
# files, as a container's (ctr_wait NAME, ctr_running NAME).
ctr_hook() {
	local name=$1 ctr=$2 uid=$3 args= d
	shift 3
	rm -f "$T/$name.pid" "$T/$name.exit"
	for d in $CGROUP_DIRS; do args="$args --cgroup $d/$ctr/cgroup.procs"; done
	# shellcheck disable=SC2086
	"$BIN/runc" --target "$PAUSE" $args --move-after yes --uid "$uid" --pidfile "$T/$name.pid" \
		--exitfile "$T/$name.exit" -- "$@" >"$T/$name.log" 2>&1 &
	LAUNCHERS="$LAUNCHERS $!"
	disown $!
	wait_for 5 test -s "$T/$name.pid" || fail "hook $name did not start"
}

# exit_ms NAME: when container (or hook) NAME's exit was recorded (its exit file's time, ms).
exit_ms() {
	stat -c %.3Y "$T/$1.exit" | tr -d .
}

# fake_start NAME UID PROGRAM [ARG...]: a container running the fake process as PROGRAM
# (made with alias_bin), logging to $EVENTS; returns once it runs.
fake_start() {
	local name=$1 uid=$2 prog=$3
	shift 3
	[ -e "$BIN/$prog" ] || alias_bin "$prog"
	rm -f "$RUN/$name.up"
	ctr_start "$name" "$uid" "$BIN/$prog" "$@" --log "$EVENTS" --started "$RUN/$name.up"
	wait_for 5 test -e "$RUN/$name.up" || fail "$name did not start"
}

# standin_start NAME UID PROXY [ARG...]: a container running the stand-in proxy PROXY
# (pilot-agent, envoy, linkerd2-proxy, cloud-sql-proxy, daprd, vault, consul-dataplane; see
# tests/helpers/standin.c), logging to $EVENTS; returns once it listens.
standin_start() {
	local name=$1 uid=$2 prog=$3
	shift 3
	ln -sf standin "$BIN/$prog"
	rm -f "$RUN/$name.up"
	# The program's own arguments first, as its real command line has them (proxy sidecar ...).
	ctr_start "$name" "$uid" "$BIN/$prog" "$@" --log "$EVENTS" --started "$RUN/$name.up"
	wait_for 5 test -e "$RUN/$name.up" || fail "$name did not start"
}

# ready_file_after PROCESS SECONDS: the ready file appears, and not before stand-in PROCESS turned
# ready. (A stand-in logs that before its first 2xx, so once the file is there, so is the event.)
ready_file_after() {
	local ready written
	wait_for "$2" test -e "$EMPTYDIR/ready" || fail "no ready file within $2s"
	ready=$(event_ms "$1" "turned ready")
	[ -n "$ready" ] || fail "the ready file appeared before $1 was ready"
	# The file's mtime is the kernel's coarse clock, up to a tick behind: 10 ms of slack.
	written=$(stat -c %.3Y "$EMPTYDIR/ready" | tr -d .)
	[ "$((written + 10))" -ge "$ready" ] || fail "the ready file was written at $written, before $1 was ready at $ready"
}

# events_count NAME EVENT: how many EVENT lines fake or stand-in process NAME logged.
events_count() {
	awk -v n="$1" -v e="$2" '$2 == n && index($0, e) { c++ } END { print c + 0 }' "$EVENTS"
}

# expect_exit NAME SECONDS CODE: the container exits with CODE within SECONDS.
expect_exit() {
	ctr_wait "$1" "$2"
	[ "$RC" = "$3" ] || fail "$1 exited $RC, want $3"
}

# summary_is VALUE KEY...: a value of the agent's summary in $RUN/termination-log.
summary_is() {
	local want=$1 got
	shift
	got=$(json_get "$RUN/termination-log" "$@") || fail "no summary value at $*"
	[ "$got" = "$want" ] || fail "summary $*: $got, want $want"
}

# summary_len KEY N [FILE]: the list KEY of the summary in FILE ($RUN/termination-log if none) has
# N entries.
summary_len() {
	local file=${3:-$RUN/termination-log} got
	got=$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))[sys.argv[2]]))' \
		"$file" "$1") || fail "no list $1 in the summary in $file"
	[ "$got" = "$2" ] || fail "summary $1 in $file: $got entries, want $2"
}

# new_pod: kills the current pod and starts an empty one, with an empty emptyDir (for a second
# scenario in a test).
new_pod() {
	local pid
	kill_ours "$PAUSE"
	# The old pod's launchers write their exit files as they go: gone before
	# the next container of the same name starts, or it would read theirs.
	for pid in $LAUNCHERS; do
		wait_for 5 not_running "$pid" || fail "launcher $pid outlived its pod"
	done
	LAUNCHERS=
	: >"$EVENTS"
	rm -f "$RUN"/*
	rm -rf "$EMPTYDIR"
	mkdir -m 0777 "$EMPTYDIR"
	pod_start
}

# not_running PID: no process PID of this test's any more (a reused pid is not ours).
not_running() {
	case $(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") in
	*"$T/"*) return 1 ;;
	esac
}

# blind_run SECONDS CMD...: CMD in a PID namespace of its own (as PID 1) and the
# pod's network: what a container sees without shareProcessNamespace. Killed,
# with its namespace, after SECONDS (unshare's parent holds back SIGTERM, so
# the timeout is SIGKILL, and --kill-child takes CMD down with it).
blind_run() {
	local secs=$1
	shift
	timeout -s KILL "$secs" nsenter --target "$PAUSE" --net -- unshare --pid --fork --kill-child --mount-proc "$@"
}

# ctr_pid NAME: the host's pid of the container's main process.
ctr_pid() {
	cat "$T/$1.pid"
}

# ctr_wait NAME SECONDS: waits for the container to exit; RC is its exit status (or "timeout").
ctr_wait() {
	RC=timeout
	if wait_for "$2" test -s "$T/$1.exit"; then
		RC=$(cat "$T/$1.exit")
	fi
}

# ctr_running NAME: whether the container's main process still runs.
ctr_running() {
	[ ! -e "$T/$1.exit" ] && kill -0 "$(ctr_pid "$1")" 2>/dev/null
}

# event_ms NAME EVENT: time (ms) of the first EVENT logged by fake process NAME; empty if none.
event_ms() {
	awk -v n="$1" -v e="$2" '$2 == n && index($0, e) { print $1; exit }' "$EVENTS"
}

# in_order EARLIER LATER WHAT: two times (ms, event_ms) both known, LATER not before EARLIER. WHAT
# names them ("the app's exit -> the sidecar's SIGTERM").
in_order() {
	[ -n "$1" ] && [ -n "$2" ] || fail "$3: a time is missing (earlier '$1', later '$2')"
	[ "$2" -ge "$1" ] || fail "$3: the later came at $2, before the earlier at $1"
}

# json_get FILE KEY...: a value out of the agent's summary, with python's json (lists and
# objects as JSON: [200, "timeout"]).
json_get() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print("null" if v is None else json.dumps(v) if isinstance(v, (list, dict)) else v)
PY
}

# assert_between VALUE LOW HIGH WHAT. A bound tells two behaviours apart
# (a timer that ran, or the next timer that would have), not how fast this
# machine is: HIGH is at least 2 s past the value expected, for a busy
# machine, and short of the next timer.
assert_between() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ] || fail "$4: $1 not in [$2, $3]"
}

# put_atomic FILE TEXT: writes TEXT and a newline to FILE the way rearguard does: a temporary
# name in the same directory (hidden: rearguard ignores names starting with '.'), then rename.
put_atomic() {
	local tmp
	tmp=$(dirname "$1")/.put.$$
	printf '%s\n' "$2" >"$tmp"
	mv -f "$tmp" "$1"
}

# need_program PATH PACKAGE: skips unless Debian's real program PATH is installed.
need_program() {
	[ -x "$1" ] || skip "$1 not installed (tools/deps installs $2)"
}

# ctr_left NAME: the processes (host pids) still in container NAME's cgroups.
ctr_left() {
	local d
	for d in $CGROUP_DIRS; do cat "$d/$1/cgroup.procs" 2>/dev/null || true; done | sort -un
}

# no_process_left NAME: every process of container NAME is gone (within 5 s: a killed
# process leaves its cgroup once reaped).
no_process_left() {
	wait_for 5 test -z "$(ctr_left "$1")" ||
		fail "processes of $1 are left: $(ctr_left "$1" | tr '\n' ' ')"
}

# ctr_start_noting NAME UID CMD [ARG...]: ctr_start, but the container first notes the last pid
# handed out in the pod in $RUN/NAME.last-pid (its cat's: a sysctl file is read whole or not
# at all), then execs CMD.
ctr_start_noting() {
	local name=$1 uid=$2
	shift 2
	ctr_start "$name" "$uid" /bin/sh -c "$NOTE_LAST_PID"' && exec "$@"' "$RUN/$name.last-pid" "$@"
	wait_for 5 test -s "$RUN/$name.last-pid" || fail "$name did not note the last pid"
}
# The shell code that writes the last pid handed out in the pod into the file "$0".
NOTE_LAST_PID='n=$(cat /proc/sys/kernel/ns_last_pid) && echo "$n" >"$0"'

# stalled_pipe FIFO: a runtime's log pipe that nobody reads, made at FIFO: both ends held open
# here (fd 3) and never read, the pipe shrunk to one page (F_SETPIPE_SZ) and full already, so that
# whatever is written to it waits. Skips where a pipe cannot be shrunk.
stalled_pipe() {
	mkfifo -m 0666 "$1"
	exec 3<>"$1"
	/usr/bin/python3 -c 'import fcntl, os
fcntl.fcntl(3, 1031, 4096)
os.set_blocking(3, False)
try:
    while True:
        os.write(3, b"x" * 512)
except BlockingIOError:
    pass' || skip "cannot shrink a pipe here"
}

# hail NAME: SIGTERM to container NAME's process every 2 ms until it has exited, as a pod
# deletion racing the container's end would; fails after 10 s of it.
hail() {
	local pid end=$((SECONDS + 10))
	pid=$(ctr_pid "$1")
	while kill -TERM "$pid" 2>/dev/null && [ ! -e "$T/$1.exit" ]; do
		[ "$SECONDS" -lt "$end" ] || fail "$1 still runs after 10 s of SIGTERMs"
		sleep 0.002
	done
}

# agent_one UID SPEC: the agent as UID for one app and the one sidecar SPEC (its stop within
# 10 s, its summary in $RUN/termination-log), once it has scanned the pod.
agent_one() {
	ctr_start agent "$1" "$BIN/rearguard" -s "$2" --apps 1 --stop-timeout 10s --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log"
	agent_scanned
}

# app_done RUN SIDECAR: one app (the job stand-in, uid 1001, noting the last pid) that runs for
# RUN, then the agent's exit with 0 within 20 s and SIDECAR's within 5 s of it. BEFORE: the
# app's note of the last pid; AFTER: the pod's last pid once both are gone (no_respawn).
app_done() {
	ctr_start_noting app 1001 "$BIN/job" --run "$1" --log "$EVENTS"
	BEFORE=$(cat "$RUN/app.last-pid")
	expect_exit agent 20 0
	expect_exit "$2" 5 0
	AFTER=$(pod_last_pid)
}

# pod_last_pid: the last pid handed out in the pod's PID namespace. Reading it takes one pid
# (the reader's own): one more than a container's note (ctr_start_noting) means no process or
# thread was created in the pod in between, so nothing was respawned (no_respawn). The reader is
# a process of the pod, which an agent would take for an app: read it once the agent is gone.
pod_last_pid() {
	nsenter --target "$PAUSE" --pid --mount cat /proc/sys/kernel/ns_last_pid
}

# no_respawn BEFORE AFTER: no process or thread was created in the pod between a container's note
# of the last pid (BEFORE, ctr_start_noting) and pod_last_pid (AFTER), but the reader's own pid
# and the one LeakSanitizer's exit check takes in a sanitizer build of the agent.
no_respawn() {
	local own=1
	if ldd "$BIN/rearguard" 2>/dev/null | grep -q 'lib[al]san' && [[ ${ASAN_OPTIONS-} != *detect_leaks=0* ]]; then
		own=2
	fi
	[ "$(($2 - $1))" = "$own" ] ||
		fail "pids $(($1 + 1))..$(($2 - own)) were handed out in the pod during the stop: something was respawned"
}

# agent_lines PATTERN [LOG]: how many lines of the agent's log (container "agent") match PATTERN
# (grep -E).
agent_lines() {
	grep -cE -- "$1" "$T/${2:-agent}.log" || true
}

# apps_seen N: the agent's log (container "agent") names at least N apps. Counted again at each
# call, so that wait_for 20 apps_seen 3 also waits for a slow rescan.
apps_seen() {
	[ "$(agent_lines 'role=app')" -ge "$1" ]
}

# termlog_check FILE: FILE holds one JSON object of at most 4096 bytes (what the kubelet keeps
# of a termination message).
termlog_check() {
	local size
	[ -s "$1" ] || fail "no termination log $1"
	size=$(stat -c %s "$1")
	[ "$size" -le 4096 ] || fail "$1 holds $size bytes, more than the kubelet keeps (4096)"
	/usr/bin/python3 -c 'import json, sys; assert isinstance(json.load(open(sys.argv[1])), dict)' "$1" ||
		fail "$1 is not one JSON object"
}

# fails_pod_is FILE [ROLE:NAME:CODE]...: the summary in FILE says that exactly these containers
# will make the pod Failed (its fails_pod list; none given: an empty list).
fails_pod_is() {
	local file=$1 got want
	shift
	got=$(/usr/bin/python3 - "$file" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["fails_pod"]
print(" ".join(sorted("%s:%s:%s" % (e["role"], e["name"], e["exit_code"]) for e in v)))
PY
) || fail "no fails_pod list in $file"
	want=$(printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' ' ')
	want=${want# }
	want=${want% }
	[ "$got" = "$want" ] || fail "fails_pod in $file: '$got', want '$want'"
}
