#!/bin/bash
# rearguard's benchmark. Every figure comes from a run on this machine:
# real pods made of namespaces (tests/integration/lib.sh), the real binary,
# and, in the same run, the workarounds people use today.
#
#   bench/bench.sh [--tiny] [--trials N] [--out FILE]    (normally through tools/bench)
#
# Raw samples go to $T/raw.jsonl, one JSON object per line; bench/report.py
# turns them into the table and the results file. Clock: CLOCK_MONOTONIC in
# microseconds, shared by every process of the machine (FAKE_CLOCK=mono for
# the stand-ins, REARGUARD_LOG_MONO=1 for the agent, ENTER_EXEC_LOG for exec).
set -euo pipefail

tiny=0
trials=200
out=
while [ $# -gt 0 ]; do
	case $1 in
	--tiny) tiny=1 trials=3 ;;
	--trials) trials=$2; shift ;;
	--out) out=$2; shift ;;
	*) echo "usage: bench/bench.sh [--tiny] [--trials N] [--out FILE]" >&2; exit 2 ;;
	esac
	shift
done
: "${RG_BUILDDIR:?}" "${RG_SRCDIR:?}"
out=${out:-$RG_SRCDIR/bench/results.json}
export RG_SKIP_STATUS=${RG_SKIP_STATUS:-77}
# shellcheck source=../tests/integration/lib.sh
. "$RG_SRCDIR/tests/integration/lib.sh"
cp "$RG_BUILDDIR/bench/scan-bench" "$BIN/"
export FAKE_CLOCK=mono REARGUARD_LOG_MONO=1
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
# rearguard: the agent in its own container. shell-sleep1 / shell-sleep0.1: the
# usual companion container, a loop of pgrep and sleep, then the stop.
#
# Two references for "app exit": the app's last instruction (it logs the clock
# and calls exit), and the moment its parent, the runtime, reaps it
# (ENTER_REAP_LOG). The first includes the kernel's teardown of the process,
# which the "kernel-floor" row measures alone (bench/exit-floor).
reaction_trial() {
	local variant=$1 exit_us reap_us stop_us
	fresh_pod
	fake_start proxy 1002 fluent-bit
	rm -f "$T/reap.us"
	case $variant in
	rearguard)
		ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR"
		agent_scanned
		ENTER_REAP_LOG=$T/reap.us fake_start app 1001 job --run 100ms
		;;
	shell-sleep*)
		ENTER_REAP_LOG=$T/reap.us fake_start app 1001 job --run 300ms
		ctr_start agent 1002 sh -c "while pgrep -x job >/dev/null; do sleep ${variant#shell-sleep}; done;
			kill -TERM \$(pgrep -x fluent-bit)"
		;;
	esac
	ctr_wait proxy 20
	[ "$RC" = 0 ] || fail "$variant: sidecar exited $RC"
	wait_for 5 test -s "$T/reap.us" || fail "$variant: no reap time"
	exit_us=$(mono_event job "exit 0")
	reap_us=$(cat "$T/reap.us")
	stop_us=$(mono_event fluent-bit "got SIGTERM")
	[ -n "$exit_us" ] && [ -n "$stop_us" ] || fail "$variant: missing events"
	sample reaction "$variant" us $((stop_us - exit_us)) from_reap_us $((stop_us - reap_us))
}

cp "$RG_BUILDDIR/bench/exit-floor" "$BIN/"
say "reaction: kernel floor, $trials samples"
for us in $("$BIN/exit-floor" "$trials"); do sample reaction kernel-floor us "$us" from_reap_us 0; done
for variant in rearguard shell-sleep1 shell-sleep0.1; do
	n=$trials
	# A one-second loop takes a second per trial: fewer trials give the same picture.
	[ "$variant" = shell-sleep1 ] && [ "$n" -gt 50 ] && n=50
	say "reaction: $variant, $n trials"
	for _ in $(seq "$n"); do reaction_trial "$variant"; done
done

# ---- 2. idle cost while the app runs, over a window -----------------------------
window=10
[ "$tiny" = 1 ] && window=1
idle_run() {
	local variant=$1 pid
	fresh_pod
	fake_start proxy 1002 fluent-bit
	fake_start app 1001 job --run $((window + 5))s
	case $variant in
	rearguard-apps1) ctr_start agent 0 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR" ;;
	rearguard) ctr_start agent 0 "$BIN/rearguard" -s 'match=fluent-bit' --dir "$EMPTYDIR" ;;
	shell-sleep1)
		ctr_start agent 0 sh -c 'while pgrep -x job >/dev/null; do sleep 1; done; kill -TERM $(pgrep -x fluent-bit)'
		;;
	esac
	sleep 1.5
	pid=$(ctr_pid agent)
	# perf counts the process and, with --inherit (the default), every child it starts meanwhile.
	perf stat -x, -e task-clock,context-switches -p "$pid" -o "$T/perf.out" -- sleep "$window" 2>/dev/null
	awk -F, -v v="$variant" -v w="$window" '
		$3 == "task-clock" { cpu = $1 }
		$3 == "context-switches" { cs = $1 }
		END { printf "{\"section\":\"idle\",\"variant\":\"%s\",\"window_s\":%d,\"cpu_ms\":%.3f,\"switches\":%d}\n", v, w, cpu, cs }
	' "$T/perf.out" >>"$RAW"
	if [ "$variant" != shell-sleep1 ]; then
		sample memory "dynamic-$variant" hwm_kb "$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")" \
			rss_kb "$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")" \
			private_kb "$(awk '/^Private_(Clean|Dirty)/ {s += $2} END {print s}' "/proc/$pid/smaps_rollup")"
	fi
}
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
	for variant in rearguard-apps1 rearguard shell-sleep1; do
		say "idle: $variant, ${window}s"
		idle_run "$variant"
	done
else
	say "idle: perf is not available, section skipped"
fi

# ---- 3. scan scaling: one full scan, rescans, and the reaction, at each size -----
sizes="1000 10000 30000"
[ "$tiny" = 1 ] && sizes=200
for n in $sizes; do
	say "scan: $n processes in the app container"
	fresh_pod
	fake_start proxy 1002 fluent-bit
	ctr_start app 1001 "$BIN/forker" --children "$n" --run 600s --log "$EVENTS" --started "$RUN/app.up"
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
	sample scan-reaction "$n" us $((stop_us - exit_us)) \
		agent_first_scan_us "$(grep -m1 'pod scanned' "$T/agent.log" | grep -o 'scan=[0-9.]*' | cut -d= -f2 | awk '{printf "%d", $1 * 1000}')"
done

# ---- 4. start-up: exec -> first scan done ----------------------------------------
runs=20
[ "$tiny" = 1 ] && runs=3
say "start-up: $runs runs"
fresh_pod
fake_start proxy 1002 fluent-bit
for _ in $(seq "$runs"); do
	rm -f "$T/exec.us"
	ENTER_EXEC_LOG=$T/exec.us ctr_start agent 0 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR"
	wait_for 10 grep -q "pod scanned" "$T/agent.log" || fail "agent did not scan"
	sample startup first-scan us $(($(agent_mono "pod scanned") - $(cat "$T/exec.us")))
	kill -KILL "$(ctr_pid agent)"
	ctr_wait agent 10
done

/usr/bin/python3 "$RG_SRCDIR/bench/report.py" "$RAW" "$out"
