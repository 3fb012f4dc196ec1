#!/bin/bash
# restartPolicy OnFailure. First pod: the app fails (exit 3), the kubelet
# starts a new container for it, which succeeds: the sidecar is stopped only
# after that success. Second pod: the failed app never comes back: the
# sidecar is stopped after --restart-grace.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
first_attempt_fails 30s --run 300ms
sleep 1
ctr_running proxy || fail "the sidecar was stopped after a failure under OnFailure"
# The kubelet's restart: a new container (new cgroup) with the same entrypoint.
ctr_start app-restarted 1001 "$BIN/job" --run 800ms --exit 0 --name attempt2 --log "$EVENTS"
expect_exit agent 15 0
in_order "$(event_ms attempt2 "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" \
	"the successful attempt's exit -> the sidecar's SIGTERM"
grep -q "keeping the sidecars for its restart" "$T/agent.log" || fail "the wait is not explained"
grep -q "app restarted" "$T/agent.log" || fail "the restart is not logged"
summary_is restarted apps 0 state
summary_is 3 apps 0 exit_code
summary_is 0 apps 1 exit_code

# Second pod: no restart comes.
new_pod
fake_start proxy 1002 fluent-bit
shipper_agent --restart-policy OnFailure --restart-grace 1s
agent_scanned
ctr_start app 1001 "$BIN/job" --run 200ms --exit 4 --log "$EVENTS"
expect_exit agent 10 0
fail_exit=$(event_ms job "exit 4")
term=$(event_ms fluent-bit "got SIGTERM")
assert_between "$((term - fail_exit))" 950 4000 "ms from the failure to the drain (--restart-grace 1s)"
grep -q "did not come back within --restart-grace" "$T/agent.log" || fail "the give-up is not explained"
