#!/bin/bash
# Istio's trap: a custom spec that stops it through Envoy's admin port
# 15000 instead of pilot-agent's 15020. Envoy quits, pilot-agent stays, so
# the container would never exit. The agent warns at start, sees that the
# sidecar is still running after --stop-timeout in spite of the 200,
# escalates, and reports it as terminated, not stopped.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
pod_start
standin_start proxy 1337 pilot-agent --term-drain 300ms
ctr_start agent 1337 "$BIN/rearguard" --apps 1 --stop-timeout 1s --kill-after 2s --dir "$EMPTYDIR" \
	--sidecar 'match=pilot-agent|envoy,name=mesh,ready=http://127.0.0.1:15021/healthz/ready,stop=http://127.0.0.1:15000/quitquitquit' \
	--termination-log "$RUN/termination-log"
agent_scanned
grep -q "stops Envoy only" "$T/agent.log" || fail "no warning about Envoy's admin port"
wait_for 5 test -e "$EMPTYDIR/ready" || fail "no ready file"
ctr_start app 1001 "$BIN/job" --run 200ms --log "$EVENTS"

expect_exit agent 10 0
expect_exit proxy 2 0
quit=$(event_ms envoy "request POST /quitquitquit")
envoy_gone=$(event_ms pilot-agent "envoy exited")
term=$(event_ms pilot-agent "got SIGTERM")
[ -n "$quit" ] && [ -n "$envoy_gone" ] && [ -n "$term" ] ||
	fail "missing events: quit '$quit', envoy exited '$envoy_gone', pilot-agent SIGTERM '$term'"
assert_between "$((term - quit))" 950 4000 "ms from Envoy's quit to pilot-agent's SIGTERM (--stop-timeout 1s)"
grep -q 'still running 1s after the stop request: sending SIGTERM' "$T/agent.log" || fail "not detected"
summary_is terminated sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
exit 0
