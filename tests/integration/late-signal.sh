#!/bin/bash
# A signal that comes once the exit status is decided (a pod deletion racing
# the end) must not replace it with 128 + N. The teardown is made long here
# on purpose: the log output is a full, one-page pipe nobody reads, so the
# last lines wait out their second in it. SIGTERMs come every 2 ms until the
# process is gone. rearguard run --drain must exit with its command's code,
# and the companion agent with its own 0.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fifo=$RUN/log.fifo
stalled_pipe "$fifo"

# The wrapper: the command ignores SIGTERM and exits 5.
fake_start proxy 1002 fluent-bit
ctr_start app 0 sh -c "exec \"$BIN/rearguard\" run --drain --sidecar 'match=fluent-bit' --dir \"$EMPTYDIR\" \
	-- \"$BIN/job\" --run 300ms --exit 5 --on TERM:ignore --log \"$EVENTS\" 2>\"$fifo\""
job_started() { [ -n "$(event_ms job started)" ]; }
wait_for 5 job_started || fail "the command did not start"
hail app
expect_exit app 10 5
expect_exit proxy 5 0

# The companion agent: it has written done, then the signals come. (new_pod empties $RUN.)
new_pod
stalled_pipe "$fifo"
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 sh -c "exec \"$BIN/rearguard\" -s 'match=fluent-bit' --apps 1 --dir \"$EMPTYDIR\" \
	--termination-log \"$RUN/termination-log\" 2>\"$fifo\""
wait_for 10 test -e "$EMPTYDIR/ready" || fail "the agent wrote no ready file"
fake_start app 1001 job --run 200ms
wait_for 10 test -e "$EMPTYDIR/done" || fail "the agent wrote no done file"
hail agent
expect_exit agent 10 0
[ "$(json_get "$EMPTYDIR/done" exit_code)" = 0 ] || fail "done does not say exit 0"
exit 0
