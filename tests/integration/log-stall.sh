#!/bin/bash
# The agent's log output stalls (a runtime's log pipe nobody reads, one
# page big): the agent must not stall with it. It stops the sidecar as soon
# as the app exits, drops the log lines that do not fit, and counts them in
# its summary.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fifo=$RUN/log.fifo
stalled_pipe "$fifo"
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 sh -c "exec \"$BIN/rearguard\" -v -s 'match=fluent-bit' --apps 1 --dir \"$EMPTYDIR\" \
	--termination-log \"$RUN/termination-log\" 2>\"$fifo\""
# The log says nothing here: the ready file says the agent scanned the pod.
wait_for 10 test -e "$EMPTYDIR/ready" || fail "the agent wrote no ready file"
fake_start app 1001 job --run 300ms
ctr_wait agent 10
[ "$RC" = 0 ] || fail "agent exited $RC, want 0 (a stalled log must not stall it)"
app_exit=$(event_ms job "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events"
assert_between "$((term - app_exit))" 0 3000 "ms from the app's exit to the sidecar's SIGTERM, the log stalled"
# The lines waited in the agent's bounded buffer (the count of those dropped is unit-tested).
json_get "$RUN/termination-log" log_lines_dropped >/dev/null || fail "the summary has no log_lines_dropped"
summary_is stopped sidecars 0 outcome
exit 0
