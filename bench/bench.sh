#!/bin/bash
# rearguard's benchmark. Every figure comes from a run on this machine:
# real pods made of namespaces (tests/integration/lib.sh), the real binary,
# and, in the same run, the workarounds people use today.
#
#   bench/bench.sh [--tiny] [--trials N] [--only SECTION[,SECTION]] [--out FILE] [--agent PATH]
#                                         (normally through tools/bench)
#
# Sections: reaction, idle (with memory), scan, startup, ready, and trace
# (not run by default: a kernel trace of each hop of a reaction; needs
# tracefs). --agent measures another rearguard binary (an older build, say)
# in the sections that start one.
#
# Raw samples go to $T/raw.jsonl, one JSON object per line; bench/report.py
# turns them into the table and the results file. Clock: CLOCK_MONOTONIC in
# microseconds, shared by every process of the machine (RG_EVENT_CLOCK=mono
# for the stand-ins, REARGUARD_LOG_MONO=1 for the agent, ENTER_EXEC_LOG and
# ENTER_REAP_LOG for the runtime's exec and reap).
set -euo pipefail

tiny=0
trials=200
out=
agent=
only=reaction,idle,scan,startup,ready
usage="usage: bench/bench.sh [--tiny] [--trials N] [--only reaction,idle,scan,startup,ready,trace] [--out FILE] [--agent PATH]"
while [ $# -gt 0 ]; do
	case $1 in
	--tiny) tiny=1 trials=3 ;;
	--trials) trials=${2:?$usage}; shift ;;
	--only) only=${2:?$usage}; shift ;;
	--out) out=${2:?$usage}; shift ;;
	--agent) agent=${2:?$usage}; shift ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
	shift
done
case $trials in '' | *[!0-9]* | 0) echo "bench: --trials needs a positive number" >&2; exit 2 ;; esac
for section in ${only//,/ }; do
	case $section in reaction | idle | scan | startup | ready | trace) ;; *) echo "bench: unknown section $section; $usage" >&2; exit 2 ;; esac
done
if [ -n "$agent" ] && ! [ -x "$agent" ]; then
	echo "bench: --agent $agent is not an executable" >&2
	exit 2
fi
wanted() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
: "${RG_BUILDDIR:?}" "${RG_SRCDIR:?}"
out=${out:-$RG_SRCDIR/bench/results.json}
export RG_SKIP_STATUS=${RG_SKIP_STATUS:-77}
# shellcheck source=../tests/integration/lib.sh
. "$RG_SRCDIR/tests/integration/lib.sh"
cp "$RG_BUILDDIR/bench/scan-bench" "$BIN/"
export RG_EVENT_CLOCK=mono REARGUARD_LOG_MONO=1
# The release binary, when the static build has run (make static; the e2e
# tests and tools/bench do) and is not older than the dynamic one: a stale
# static binary would measure code that is not this tree's.
STATIC=
if [ -x "$RG_BUILDDIR/static/rearguard" ] && ! [ "$RG_BUILDDIR/static/rearguard" -ot "$RG_BUILDDIR/rearguard" ]; then
	cp "$RG_BUILDDIR/static/rearguard" "$BIN/rearguard-static"
	STATIC=$BIN/rearguard-static
fi
# Another build of the agent, measured in place of this tree's.
[ -z "$agent" ] || cp "$agent" "$BIN/rearguard"
RAW=$T/raw.jsonl
: >"$RAW"
alias_bin job forker

sample() { # sample SECTION VARIANT KEY VALUE [KEY VALUE]...
	local section=$1 variant=$2 json
	shift 2
	json="{\"section\":\"$section\",\"variant\":\"$variant\""
	while [ $# -gt 0 ]; do json="$json,\"$1\":$2"; shift 2; done
	echo "$json}" >>"$RAW"
}

# mono_event NAME EVENT: monotonic microseconds of the first EVENT of fake process NAME.
mono_event() {
	awk -v n="$1" -v e="$2" '$2 == n && index($0, e) { print $1; exit }' "$EVENTS"
}

# agent_mono MSG: monotonic microseconds of the agent's first log line with MSG.
agent_mono() {
	grep -m1 "$1" "$T/agent.log" | grep -o 'mono_us=[0-9]*' | cut -d= -f2
}

fresh_pod() {
	if [ -n "$PAUSE" ]; then new_pod; else pod_start; fi
}

# ---- 1. reaction time: app exit -> stop request at the sidecar -------------------
#
# The sidecar is a stand-in Istio proxy (pilot-agent on 15020), except for
# rearguard-signal (a log shipper stopped by SIGTERM). rearguard: the agent in
# its own container. shell-sleep1 / shell-sleep0.1: the usual companion
# container, a loop of pgrep and sleep, then curl -X POST .../quitquitquit.
# The app runs a random 300 to 1300 ms, so polling loops are caught at every
# phase of their sleep.
#
# Two references for "app exit": the app's last instruction (it logs the clock
# and calls exit), and the moment its parent, the runtime, reaps it
# (ENTER_REAP_LOG). The first includes the kernel's teardown of the process,
# which the "kernel-floor" row measures alone (bench/exit-floor).
reaction_trial() {
	local variant=$1 exit_us reap_us stop_us proxy event run=$((300 + RANDOM % 1000))ms
	fresh_pod
	rm -f "$T/reap.us"
	if [ "$variant" = rearguard-signal ]; then
		fake_start proxy 1337 fluent-bit
		proxy=fluent-bit event="got SIGTERM"
	else
		standin_start proxy 1337 pilot-agent
		proxy=pilot-agent event="stop request received"
	fi
	case $variant in
	rearguard)
		ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --apps 1 --dir "$EMPTYDIR"
		wait_for 10 test -e "$EMPTYDIR/ready" || fail "$variant: no ready file"
		ENTER_REAP_LOG=$T/reap.us fake_start app 1001 job --run "$run"
		;;
	rearguard-signal)
		ctr_start agent 1337 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR"
		agent_scanned
		ENTER_REAP_LOG=$T/reap.us fake_start app 1001 job --run "$run"
		;;
	run-drain)
		# The wrapper model: rearguard run is the container's process and job its
		# child, which run reaps itself; the runtime reaps run only after the drain.
		ctr_start app 1001 "$BIN/rearguard" run --drain --sidecar istio --dir "$EMPTYDIR" -- \
			"$BIN/job" --log "$EVENTS" --run "$run"
		;;
	shell-sleep*)
		ENTER_REAP_LOG=$T/reap.us fake_start app 1001 job --run "$run"
		ctr_start agent 1337 sh -c "while pgrep -x job >/dev/null; do sleep ${variant#shell-sleep}; done;
			curl -s -o /dev/null -X POST http://127.0.0.1:15020/quitquitquit"
		;;
	esac
	ctr_wait proxy 20
	[ "$RC" = 0 ] || fail "$variant: sidecar exited $RC"
	exit_us=$(mono_event job "exit 0")
	stop_us=$(mono_event "$proxy" "$event")
	[ -n "$exit_us" ] && [ -n "$stop_us" ] || fail "$variant: missing events"
	if [ "$variant" = run-drain ]; then
		ctr_wait app 10
		[ "$RC" = 0 ] || fail "$variant: rearguard run exited $RC"
		sample reaction "$variant" us $((stop_us - exit_us)) from_reap_us null
		return
	fi
	wait_for 5 test -s "$T/reap.us" || fail "$variant: no reap time"
	reap_us=$(cat "$T/reap.us")
	sample reaction "$variant" us $((stop_us - exit_us)) from_reap_us $((stop_us - reap_us))
}

if wanted reaction; then
	cp "$RG_BUILDDIR/bench/exit-floor" "$BIN/"
	say "reaction: kernel floor, $trials samples"
	for us in $("$BIN/exit-floor" "$trials"); do sample reaction kernel-floor us "$us" from_reap_us null; done
	# The HTTP floor: loopback TCP between two processes idle as long as a
	# sidecar's admin port is during the app's run (fewer samples: each idles).
	cp "$RG_BUILDDIR/bench/http-floor" "$BIN/"
	n=$((trials / 4 > 0 ? trials / 4 : 1))
	say "reaction: loopback HTTP floor, $n samples after 800 ms idle"
	fresh_pod
	for us in $(nsenter --target "$PAUSE" --net "$BIN/http-floor" "$n" 800); do
		sample reaction http-floor us "$us" from_reap_us null
	done
	for variant in rearguard rearguard-signal run-drain shell-sleep1 shell-sleep0.1; do
		n=$trials
		# A one-second loop takes a second or two per trial: fewer trials give the same picture.
		[ "$variant" = shell-sleep1 ] && [ "$n" -gt 50 ] && n=50
		say "reaction: $variant, $n trials"
		for _ in $(seq "$n"); do reaction_trial "$variant"; done
	done
fi

# ---- 2. idle cost while the app runs, over a window -----------------------------
window=10
# Tiny: two seconds, so that a one-second loop is always caught running.
[ "$tiny" = 1 ] && window=2
idle_run() {
	local variant=$1 pid
	fresh_pod
	standin_start proxy 1337 pilot-agent
	fake_start app 1001 job --run $((window + 5))s
	case $variant in
	rearguard-apps1) ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --apps 1 --dir "$EMPTYDIR" ;;
	rearguard) ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --dir "$EMPTYDIR" ;;
	static-rearguard-apps1) ctr_start agent 1337 "$STATIC" --sidecar istio --apps 1 --dir "$EMPTYDIR" ;;
	shell-sleep1)
		ctr_start agent 1337 sh -c 'while pgrep -x job >/dev/null; do sleep 1; done;
			curl -s -o /dev/null -X POST http://127.0.0.1:15020/quitquitquit'
		;;
	esac
	# Settled: the agent has polled the proxy ready and written the ready file.
	case $variant in *rearguard*) wait_for 10 test -e "$EMPTYDIR/ready" || fail "$variant: no ready file" ;; esac
	sleep 1
	pid=$(ctr_pid agent)
	# perf counts the process and, with --inherit (the default), every child it starts meanwhile.
	perf stat -x, -e task-clock,context-switches -p "$pid" -o "$T/perf.out" -- sleep "$window" 2>/dev/null
	# "<not counted>": the task never ran in the window (no CPU, no switch);
	# said as such, not as a measured zero. Anything else unreadable fails.
	awk -F, -v v="$variant" -v w="$window" '
		$3 == "task-clock" { cpu = $1; seen++ }
		$3 == "context-switches" { cs = $1; seen++ }
		END {
			if (seen != 2) exit 1
			idle = cpu == "<not counted>" && cs == "<not counted>"
			if (idle) cpu = cs = 0
			else if (cpu !~ /^[0-9.]+$/ || cs !~ /^[0-9]+$/) exit 1
			printf "{\"section\":\"idle\",\"variant\":\"%s\",\"window_s\":%d,\"cpu_ms\":%.3f,\"switches\":%d,\"never_scheduled\":%s}\n", v, w, cpu, cs, idle ? "true" : "false"
		}
	' "$T/perf.out" >>"$RAW" || fail "$variant: perf stat gave no counts: $(tail -n 2 "$T/perf.out")"
	if [ "$variant" != shell-sleep1 ]; then
		sample memory "$(case $variant in static-*) echo "$variant" ;; *) echo "dynamic-$variant" ;; esac)" hwm_kb "$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")" \
			rss_kb "$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")" \
			private_kb "$(awk '/^Private_(Clean|Dirty)/ {s += $2} END {print s}' "/proc/$pid/smaps_rollup")"
	fi
}
if ! wanted idle; then
	:
elif command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
	for variant in rearguard-apps1 rearguard shell-sleep1 ${STATIC:+static-rearguard-apps1}; do
		say "idle: $variant, ${window}s"
		idle_run "$variant"
	done
else
	say "idle: perf is not available, section skipped"
fi

# ---- 3. scan scaling: one full scan, rescans, and the reaction, at each size -----
sizes="1000 10000 30000"
[ "$tiny" = 1 ] && sizes=200
wanted scan || sizes=
for n in $sizes; do
	say "scan: $n processes in the app container"
	fresh_pod
	fake_start proxy 1002 fluent-bit
	rm -f "$T/reap.us"
	ENTER_REAP_LOG=$T/reap.us ctr_start app 1001 "$BIN/forker" --children "$n" --run 600s --log "$EVENTS" \
		--started "$RUN/app.up"
	wait_for 300 test -e "$RUN/app.up" || fail "forker did not start $n children"
	nsenter --target "$PAUSE" --pid --mount "$BIN/scan-bench" --rescans 20 >"$T/scan.json"
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.update(section="scan", variant=sys.argv[2]); print(json.dumps(d))' \
		"$T/scan.json" "$n" >>"$RAW"
	ctr_start agent 0 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR"
	wait_for 60 grep -q "pod scanned" "$T/agent.log" || fail "agent did not scan $n processes"
	kill -TERM "$(ctr_pid app)"
	ctr_wait proxy 60
	exit_us=$(mono_event forker "exit 0")
	stop_us=$(mono_event fluent-bit "got SIGTERM")
	[ -n "$exit_us" ] && [ -n "$stop_us" ] || fail "scan $n: missing events"
	wait_for 10 test -s "$T/reap.us" || fail "scan $n: no reap time"
	sample scan-reaction "$n" us $((stop_us - exit_us)) from_reap_us $((stop_us - $(cat "$T/reap.us"))) \
		agent_first_scan_us "$(grep -m1 'pod scanned' "$T/agent.log" | grep -o 'scan=[0-9.]*' | cut -d= -f2 | awk '{printf "%d", $1 * 1000}')"
done

# ---- 4. start-up: exec -> first scan done, and -> ready written --------------
# The sidecar (a stand-in Istio proxy) is ready before the agent starts.
startup_runs() {
	local variant=$1 binary=$2 exec_us
	say "start-up: $variant, $runs runs"
	for _ in $(seq "$runs"); do
		rm -f "$RUN/exec.us" "$EMPTYDIR/ready"
		ENTER_EXEC_LOG=$RUN/exec.us ctr_start agent 1337 "$binary" --sidecar istio --apps 1 --dir "$EMPTYDIR"
		wait_for 10 grep -q "wrote the ready file" "$T/agent.log" || fail "agent did not write the ready file"
		exec_us=$(cat "$RUN/exec.us")
		sample startup "$variant" first_scan_us $(($(agent_mono "pod scanned") - exec_us)) \
			ready_us $(($(agent_mono "wrote the ready file") - exec_us))
		kill -KILL "$(ctr_pid agent)"
		ctr_wait agent 10
	done
}
runs=20
[ "$tiny" = 1 ] && runs=3
if wanted startup; then
	fresh_pod
	standin_start proxy 1337 pilot-agent
	startup_runs dynamic "$BIN/rearguard"
	[ -z "$STATIC" ] || startup_runs static "$STATIC"
fi

# ---- 5. readiness: the proxy turns ready -> the ready file is written ----------
# The stand-in turns ready at a random moment 300 to 1300 ms after it started
# (a proxy fetching its configuration); the agent polls it.
ready_trial() {
	local after=$((300 + RANDOM % 1000))ms ready_us written_us
	fresh_pod
	standin_start proxy 1337 pilot-agent --ready-after "$after"
	ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --apps 1 --dir "$EMPTYDIR"
	wait_for 10 grep -q "wrote the ready file" "$T/agent.log" || fail "ready: no ready file"
	ready_us=$(mono_event pilot-agent "turned ready")
	written_us=$(agent_mono "wrote the ready file")
	[ -n "$ready_us" ] && [ -n "$written_us" ] || fail "ready: missing events"
	sample ready rearguard us $((written_us - ready_us))
	kill -KILL "$(ctr_pid agent)"
	ctr_wait agent 10
}
if wanted ready; then
	n=$((trials / 4 > 0 ? trials / 4 : 1))
	say "ready: proxy ready -> ready file, $n trials"
	for _ in $(seq "$n"); do ready_trial; done
fi

# ---- 6. trace: where a reaction's time goes, hop by hop ------------------------
# A tracefs instance of our own records, for one trial at a time, the app's
# exit_group, the agent's and the proxy's scheduling, the agent's system
# calls and the proxy's reads (clock: mono, the benchmark's clock);
# bench/trace.py turns each record into the four hops.
TRACEFS=/sys/kernel/tracing
trace_setup() {
	[ -d "$TRACEFS/instances" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null || true
	[ -d "$TRACEFS/instances" ] || fail "trace: no tracefs at $TRACEFS"
	TRACE=$TRACEFS/instances/rg-bench-$$
	mkdir "$TRACE" || fail "trace: cannot make a tracefs instance"
	echo mono >"$TRACE/trace_clock"
	echo 8192 >"$TRACE/buffer_size_kb"
}
trace_teardown() {
	[ -n "${TRACE:-}" ] && [ -d "$TRACE" ] || return 0
	echo 0 >"$TRACE/tracing_on"
	rmdir "$TRACE" 2>/dev/null || true
}
# trace_event EVENT FILTER
trace_event() {
	echo "$2" >"$TRACE/events/$1/filter"
	echo 1 >"$TRACE/events/$1/enable"
}
trace_trial() {
	local variant=$1 app agent proxy run=$((300 + RANDOM % 1000))ms e
	fresh_pod
	standin_start proxy 1337 pilot-agent
	proxy=$(ctr_pid proxy)
	case $variant in
	rearguard)
		ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --apps 1 --dir "$EMPTYDIR"
		wait_for 10 test -e "$EMPTYDIR/ready" || fail "trace: no ready file"
		agent=$(ctr_pid agent)
		;;
	run-drain)
		ctr_start app 1001 "$BIN/rearguard" run --drain --sidecar istio --dir "$EMPTYDIR" -- \
			"$BIN/job" --log "$EVENTS" --run "$run"
		agent=$(ctr_pid app)
		;;
	esac
	for e in $(ls "$TRACE/events/syscalls" | grep -E '^sys_(enter|exit)_' ); do
		[ -f "$TRACE/events/syscalls/$e/enable" ] && echo 0 >"$TRACE/events/syscalls/$e/enable"
	done
	: >"$TRACE/trace"
	trace_event syscalls/sys_enter_exit_group "common_pid != $agent && common_pid != $proxy"
	trace_event sched/sched_switch "prev_pid == $agent || next_pid == $agent || prev_pid == $proxy || next_pid == $proxy"
	trace_event sched/sched_waking "pid == $agent || pid == $proxy"
	trace_event raw_syscalls/sys_enter "common_pid == $agent"
	trace_event syscalls/sys_enter_sendto "common_pid == $agent"
	trace_event syscalls/sys_exit_read "common_pid == $proxy"
	trace_event syscalls/sys_exit_recvfrom "common_pid == $proxy"
	echo 1 >"$TRACE/tracing_on"
	[ "$variant" = run-drain ] || fake_start app 1001 job --run "$run"
	ctr_wait proxy 20
	echo 0 >"$TRACE/tracing_on"
	[ "$RC" = 0 ] || fail "trace $variant: sidecar exited $RC"
	cat "$TRACE/trace" >"$T/trace.txt"
	cp "$T/trace.txt" /tmp/last-trace.txt 2>/dev/null || true
	if [ "$variant" = run-drain ]; then app=comm=job; else app=$(ctr_pid app); fi
	say "pids app=$app agent=$agent proxy=$proxy"
	/usr/bin/python3 "$RG_SRCDIR/bench/trace.py" "$T/trace.txt" "$app" "$agent" "$proxy" "$variant" >>"$RAW" ||
		fail "trace $variant: $(tail -n 1 "$T/trace.txt")"
	[ "$variant" = run-drain ] && ctr_wait app 10
	return 0
}
if wanted trace; then
	at_exit trace_teardown
	trace_setup
	for variant in rearguard run-drain; do
		say "trace: $variant, $trials trials"
		for _ in $(seq "$trials"); do trace_trial "$variant"; done
	done
	trace_teardown
fi

/usr/bin/python3 "$RG_SRCDIR/bench/report.py" "$RAW" "$out"
