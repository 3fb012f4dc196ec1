#!/bin/bash
# Pod deletion: SIGTERM to the agent while the app runs keeps the sidecar
# until the app exits; with a short --term-grace, the sidecar is stopped
# when the grace ends even though the app still runs.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 2s --log "$EVENTS" --started "$RUN/app.up"
wait_for 5 test -e "$RUN/app.up" || fail "app did not start"
sleep 0.3
kill -TERM "$(ctr_pid agent)"
wait_for 5 grep -q "termination requested" "$T/agent.log" || fail "SIGTERM not acknowledged"
expect_exit agent 10 0
in_order "$(event_ms job "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" "the app's exit -> the sidecar's SIGTERM"

# With --term-grace 1s and an app that runs on.
new_pod
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --term-grace 1s --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 60s --log "$EVENTS" --started "$RUN/app.up"
wait_for 5 test -e "$RUN/app.up" || fail "app did not start"
sleep 0.3
sent=$(now_ms)
kill -TERM "$(ctr_pid agent)"
expect_exit agent 10 0
term=$(event_ms fluent-bit "got SIGTERM")
assert_between "$((term - sent))" 950 4000 "ms from the agent's SIGTERM to the sidecar's (--term-grace 1s)"
ctr_running app || fail "the app should still run"
summary_is term-grace reason
