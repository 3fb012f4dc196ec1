#!/bin/bash
# Apps gated on the ready file under descriptor pressure: three apps run under rearguard run,
# which waits for ready, and are there before the agent starts, with its sidecar; the agent
# runs under an RLIMIT_NOFILE that leaves it, once its sidecar is watched, one descriptor (first
# pod) or none (second pod): the pidfds of the sidecar and the apps take what there is, and the
# rest are polled. The ready file must still be written (the apps wait for it, and give no
# descriptor back until they ran), the apps' reports read (a polled app's exit code is known
# from its report alone), and the sidecar stopped only after the last app exited. An agent whose
# writes needed a free descriptor retried "Too many open files" every second, for ever: the
# apps never started. Nothing here depends on timing: every wait ends on what it waits for.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
command -v prlimit >/dev/null || skip "prlimit not installed"
agent_args=(-s 'match=fluent-bit' --apps 3 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log")

# What the idle agent holds with its sidecar watched (the sidecar's pidfd is its last descriptor):
# NOFILE_LIMIT leaves it one more, two below that none at all, not even for the sidecar's pidfd.
pod_start
idle_nofile_limit "${agent_args[@]}"

for limit in "$NOFILE_LIMIT" "$((NOFILE_LIMIT - 2))"; do
	new_pod
	fake_start proxy 1002 fluent-bit
	for n in 1 2 3; do
		ctr_start "app$n" 1001 "$BIN/rearguard" run --dir "$EMPTYDIR" --name "app$n" -- \
			"$BIN/job" --run "${n}00ms" --name "app$n" --log "$EVENTS"
		wait_for 10 grep -q "waiting for ready" "$T/app$n.log" || fail "app$n does not wait for ready"
	done
	ctr_start agent 1002 prlimit --nofile="$limit":"$limit" -- "$BIN/rearguard" "${agent_args[@]}"
	wait_for 20 test -e "$EMPTYDIR/ready" ||
		fail "RLIMIT_NOFILE $limit: no ready file ($(agent_lines 'cannot write the file') failed writes)"
	for n in 1 2 3; do
		expect_exit "app$n" 20 0
		in_order "$(event_ms "app$n" started)" "$(event_ms "app$n" "exit 0")" "RLIMIT_NOFILE $limit: app$n's start -> its exit"
	done
	expect_exit agent 20 0
	sigterm=$(event_ms fluent-bit "got SIGTERM")
	for n in 1 2 3; do
		in_order "$(event_ms "app$n" "exit 0")" "$sigterm" "RLIMIT_NOFILE $limit: app$n's exit -> the sidecar's SIGTERM"
	done
	# Every report read: a polled app's exit code is its report's, and none fails the pod.
	for i in 0 1 2; do
		summary_is 0 apps "$i" exit_code
	done
	fails_pod_is "$RUN/termination-log"
	test -s "$EMPTYDIR/apps-done" || fail "RLIMIT_NOFILE $limit: no apps-done file"
	test -s "$EMPTYDIR/done" || fail "RLIMIT_NOFILE $limit: no done file"
	# The scenario held: the apps were short of descriptors.
	polled=$(json_get "$RUN/termination-log" polled_processes)
	[ "$polled" -ge 2 ] || fail "RLIMIT_NOFILE $limit: $polled processes polled, want 2 or more"
	say "RLIMIT_NOFILE $limit: ready written, $polled processes polled"
done
exit 0
