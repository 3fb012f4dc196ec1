#!/bin/bash
# The agent runs out of file descriptors (RLIMIT_NOFILE one above what it
# holds when idle): pidfds for the app containers' roots cannot be had; /proc
# is read with the descriptor podscan keeps in reserve. A process that
# cannot be watched is polled, and it is still there: the sidecar is stopped
# only after the last app really exited, and the summary and the log say
# that polling was used. The three apps run at once until the test ends
# them, so that two of them need watching together whatever the load.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
command -v prlimit >/dev/null || skip "prlimit not installed"
agent_args=(-s 'match=fluent-bit' --apps 3 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log")

# What the agent holds when idle, with its sidecar watched: room for one pidfd, then nothing.
pod_start
idle_nofile_limit "${agent_args[@]}"

new_pod
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 prlimit --nofile="$NOFILE_LIMIT":"$NOFILE_LIMIT" -- "$BIN/rearguard" "${agent_args[@]}"
agent_scanned
# The apps run together until told to end (SIGUSR1), one after the other. Once the agent holds
# one pidfd it has no descriptor left but its reserve for /proc: the other apps are seen and
# polled; once the first app has exited, only one of them can have a pidfd, and the other is
# still polled, however slowly the machine let them start.
for n in 1 2 3; do
	fake_start "app$n" 1001 job --run 60s --on USR1:exit:0 --name "app$n"
done
kill -USR1 "$(ctr_pid app1)"
expect_exit app1 10 0
# Counted again at each try: the agent may see the other two only after a slow rescan.
wait_for 20 apps_seen 3 || fail "the agent did not see the three apps"
for n in 2 3; do
	kill -USR1 "$(ctr_pid "app$n")"
	expect_exit "app$n" 10 0
done
expect_exit agent 20 0
in_order "$(event_ms app3 "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" "the last app's exit -> the sidecar's SIGTERM"
grep -q "polling it" "$T/agent.log" || fail "polling is not logged"
polled=$(json_get "$RUN/termination-log" polled_processes)
[ "$polled" -ge 1 ] || fail "the summary does not say that processes were polled ($polled)"
exit 0
