#!/bin/bash
# Linkerd without its shutdown endpoint (the default since 2.16): /shutdown
# answers 404 "shutdown endpoint is not enabled". The agent names the
# annotation that enables it and falls back to SIGTERM at once (it runs as
# the proxy's uid), not after --stop-timeout; the proxy exits 0, so does the
# agent.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
pod_start
standin_start proxy 2102 linkerd2-proxy
ctr_start agent 2102 "$BIN/rearguard" --sidecar linkerd --apps 1 --stop-timeout 20s --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
wait_for 5 test -e "$EMPTYDIR/ready" || fail "no ready file"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 200ms --log "$EVENTS"

expect_exit agent 8 0
expect_exit proxy 2 0
grep -q 'config.linkerd.io/proxy-admin-shutdown: enabled' "$T/agent.log" || fail "the fix is not named"
grep -q 'stop endpoint answered 404: falling back to SIGTERM' "$T/agent.log" || fail "the fallback is not logged"
grep -q 'body="shutdown endpoint is not enabled"' "$T/agent.log" || fail "the proxy's answer is not logged"
stop=$(event_ms linkerd2-proxy "request POST /shutdown")
term=$(event_ms linkerd2-proxy "got SIGTERM")
[ -n "$stop" ] && [ -n "$term" ] || fail "missing events: /shutdown '$stop', SIGTERM '$term'"
assert_between "$((term - stop))" 0 5000 "ms from the 404 to SIGTERM (at once, not after --stop-timeout)"
summary_is terminated sidecars 0 outcome
summary_is "[404]" sidecars 0 statuses
exit 0
