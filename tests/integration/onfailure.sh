#!/bin/bash
# restartPolicy OnFailure. First pod: the app fails (exit 3), the kubelet
# starts a new container for it, which succeeds: the sidecar is stopped only
# after that success. Second pod: the failed app never comes back: the
# sidecar is stopped after --restart-grace.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
alias_bin job
pod_start
ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS" --started "$RUN/proxy.up"
wait_for 5 test -e "$RUN/proxy.up" || fail "sidecar did not start"
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --restart-policy OnFailure \
	--restart-grace 30s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 300ms --exit 3 --name attempt1 --log "$EVENTS"
ctr_wait app 5
[ "$RC" = 3 ] || fail "first attempt exited $RC"
sleep 1
ctr_running proxy || fail "the sidecar was stopped after a failure under OnFailure"
# The kubelet's restart: a new container (new cgroup) with the same entrypoint.
ctr_start app-restarted 1001 "$BIN/job" --run 800ms --exit 0 --name attempt2 --log "$EVENTS"
ctr_wait agent 15
[ "$RC" = 0 ] || fail "agent exited $RC"
ok_exit=$(event_ms attempt2 "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$ok_exit" ] && [ -n "$term" ] || fail "missing events"
[ "$term" -ge "$ok_exit" ] || fail "sidecar stopped before the successful attempt ended"
grep -q "keeping the sidecars for its restart" "$T/agent.log" || fail "the wait is not explained"
grep -q "app restarted" "$T/agent.log" || fail "the restart is not logged"
[ "$(json_get "$RUN/termination-log" apps 0 state)" = restarted ] || fail "first attempt not marked restarted"
[ "$(json_get "$RUN/termination-log" apps 0 exit_code)" = 3 ] || fail "first attempt's exit code"
[ "$(json_get "$RUN/termination-log" apps 1 exit_code)" = 0 ] || fail "second attempt's exit code"

# Second pod: no restart comes.
kill -9 "$PAUSE"
: >"$EVENTS"
rm -f "$RUN"/*
pod_start
ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS" --started "$RUN/proxy.up"
wait_for 5 test -e "$RUN/proxy.up" || fail "sidecar did not start"
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --restart-policy OnFailure \
	--restart-grace 1s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 200ms --exit 4 --log "$EVENTS"
ctr_wait agent 10
[ "$RC" = 0 ] || fail "agent exited $RC (second pod)"
fail_exit=$(event_ms job "exit 4")
term=$(event_ms fluent-bit "got SIGTERM")
assert_between "$((term - fail_exit))" 950 2200 "ms from the failure to the drain (--restart-grace 1s)"
grep -q "did not come back within --restart-grace" "$T/agent.log" || fail "the give-up is not explained"
