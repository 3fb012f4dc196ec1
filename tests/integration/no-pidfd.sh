#!/bin/bash
# Fallbacks, under a seccomp filter as a restrictive runtime profile would
# set it: without pidfd_open the agent polls (and says so once); without
# PIDFD_GET_INFO exit codes are unknown. Both still complete the pod.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job

run_pod() {
	fake_start proxy 1002 fluent-bit
	ctr_start agent 1002 "$BIN/enosys" "$@" -- "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 \
		--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
	agent_scanned
	ctr_start app 1001 "$BIN/job" --run 500ms --exit 5 --log "$EVENTS"
	expect_exit agent 10 0
	app_exit=$(event_ms job "exit 5")
	term=$(event_ms fluent-bit "got SIGTERM")
	[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events under enosys $*"
	assert_between "$((term - app_exit))" 0 3000 "ms from app exit to SIGTERM under enosys $*"
}

pod_start
run_pod --pidfd-open
[ "$(grep -c 'pidfd_open unavailable' "$T/agent.log")" = 1 ] || fail "the fallback is not logged exactly once"
grep -q "polling processes every 100ms" "$T/agent.log" || fail "polling not announced"
summary_is null apps 0 exit_code
summary_is stopped sidecars 0 outcome

new_pod
run_pod --pidfd-info
grep -q "pidfd_open unavailable" "$T/agent.log" && fail "pidfds should still be used"
grep -q "exit codes of other containers are unknown on this kernel" "$T/agent.log" || fail "missing-exit-code note"
summary_is null apps 0 exit_code
exit 0
