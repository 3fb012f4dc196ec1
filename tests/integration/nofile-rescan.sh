#!/bin/bash
# Short apps one after the other under descriptor pressure: RLIMIT_NOFILE leaves the idle agent
# one descriptor, which the first app's pidfd takes. Three apps start a second apart and live
# 1.5, 2.5 and 3.5 s (--apps 3), so at each rescan a pidfd may hold the last descriptor. A rescan
# must still read /proc: every app is seen (the others are polled), the sidecar is stopped only
# after the last app exited, and the agent ends by itself. An agent that needed a free descriptor
# for each file of /proc it read could not rescan while a pidfd held the last one: an app that
# came meanwhile was seen only as its runtime's init (named runc), or missed, and then waited
# for, its sidecar running, until the startup timeout. The scenario runs 20 times
# (RG_NOFILE_RUNS), since how the apps and the rescans interleave depends on the machine's load;
# every run must hold.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
command -v prlimit >/dev/null || skip "prlimit not installed"
runs=${RG_NOFILE_RUNS:-10}
agent_args=(-s 'match=fluent-bit' --apps 3 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log")

# What the idle agent holds, with its sidecar watched: the limit leaves it one more descriptor.
pod_start
idle_nofile_limit "${agent_args[@]}"

# summary_apps: the names of the apps in the agent's summary, in order. A name is the program's,
# or runc when the app exited before a rescan saw its program run: the container was seen, its
# runtime's init in it. (A polled app's exit code is unknown: the kernel keeps it for a pidfd.)
summary_apps() {
	/usr/bin/python3 - "$RUN/termination-log" <<'PY'
import json, sys
print(" ".join(sorted(a["name"] for a in json.load(open(sys.argv[1]))["apps"])))
PY
}

polled_total=0
for run in $(seq "$runs"); do
	new_pod
	fake_start proxy 1002 fluent-bit
	ctr_start agent 1002 prlimit --nofile="$NOFILE_LIMIT":"$NOFILE_LIMIT" -- "$BIN/rearguard" "${agent_args[@]}"
	agent_scanned
	fake_start app1 1001 app1 --run 1500ms
	sleep 1
	fake_start app2 1001 app2 --run 2500ms
	sleep 1
	fake_start app3 1001 app3 --run 3500ms
	for n in 1 2 3; do
		expect_exit "app$n" 20 0
	done
	# Not a timing: an agent that missed an app waits for it far longer (--startup-timeout, 10 min).
	ctr_wait agent 30
	[ "$RC" = 0 ] || fail "run $run: the agent exited $RC, want 0"
	! grep -q "cannot rescan /proc" "$T/agent.log" || fail "run $run: a rescan could not read /proc"
	apps=$(summary_apps) || fail "run $run: no summary"
	[ "$(echo "$apps" | wc -w)" = 3 ] || fail "run $run: the summary's apps are '$apps', want three"
	for n in 1 2 3; do
		grep -q "role=app name=app$n " "$T/agent.log" || say "run $run: app$n was seen only as its runtime's init"
	done
	in_order "$(event_ms app3 "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" \
		"run $run: the last app's exit -> the sidecar's SIGTERM"
	polled=$(json_get "$RUN/termination-log" polled_processes) || fail "run $run: no polled_processes"
	polled_total=$((polled_total + polled))
	say "run $run: $apps seen, $polled polled"
done
[ "$polled_total" -ge 1 ] || fail "no run polled a process: the apps had descriptors to spare"
exit 0
