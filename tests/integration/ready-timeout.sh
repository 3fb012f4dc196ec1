#!/bin/bash
# A sidecar that never turns ready: after --ready-timeout the agent logs an
# error naming it and its last answer, never writes the ready file, and
# still does its job when the app exits.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
pod_start
standin_start proxy 1337 pilot-agent --ready-after 1h
ctr_start agent 1002 "$BIN/rearguard" --sidecar istio --apps 1 --ready-timeout 1s --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
wait_for 5 grep -q 'not ready within --ready-timeout 1s' "$T/agent.log" || fail "no error after --ready-timeout"
grep -q 'not_ready="istio (answered 503)"' "$T/agent.log" || fail "the error does not name the sidecar and its answer"
polls=$(events_count envoy "request GET /healthz/ready")
sleep 1
[ "$(events_count envoy "request GET /healthz/ready")" = "$polls" ] || fail "still polling after --ready-timeout"
ctr_start app 1001 "$BIN/job" --run 200ms

expect_exit agent 10 0
expect_exit proxy 2 0
[ ! -e "$EMPTYDIR/ready" ] || fail "a ready file was written"
summary_is null sidecars 0 ready_after_ms
summary_is stopped sidecars 0 outcome
exit 0
