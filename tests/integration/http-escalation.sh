#!/bin/bash
# Stop requests that do not stop the sidecar. Whatever the answer, only the
# processes' exit counts; each case escalates to SIGTERM at --stop-timeout
# (1s here), and SIGKILL --kill-after later.
#   - a stop endpoint that never answers is abandoned on time;
#   - "200, and still running" (linkerd2#6993) is not trusted;
#   - 500s are retried with backoff until --stop-timeout.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job

# run_pod SPEC PROXY STAND-IN-ARGS...: a pod with that proxy; the agent drains after a short app.
run_pod() {
	local spec=$1 proxy=$2
	shift 2
	if [ -n "$PAUSE" ]; then new_pod; else pod_start; fi
	standin_start proxy 1337 "$proxy" "$@"
	ctr_start agent 1337 "$BIN/rearguard" --sidecar "$spec" --apps 1 --stop-timeout 1s --kill-after 700ms \
		--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
	agent_scanned
	ctr_start app 1001 "$BIN/job" --run 200ms
}

# since PROXY EVENT: ms from the proxy's stop request to EVENT.
since_stop() {
	local stop at
	stop=$(event_ms "$1" "stop request received")
	at=$(event_ms "$1" "$2")
	[ -n "$stop" ] && [ -n "$at" ] || fail "missing events: stop request '$stop', $2 '$at'"
	echo $((at - stop))
}

say "a stop endpoint that hangs"
run_pod dapr daprd --stop-hang
expect_exit agent 10 0
expect_exit proxy 2 0
assert_between "$(since_stop daprd "got SIGTERM")" 950 4000 "hanging stop: ms to SIGTERM (--stop-timeout 1s)"
grep -q 'still running 1s after the stop request: sending SIGTERM' "$T/agent.log" || fail "escalation not logged"
summary_is terminated sidecars 0 outcome
summary_is '["timeout"]' sidecars 0 statuses

say "200, and still running"
LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true run_pod linkerd linkerd2-proxy --stop-ignore --ignore-term
expect_exit agent 10 0
expect_exit proxy 2 137
assert_between "$(since_stop linkerd2-proxy "got SIGTERM")" 950 4000 "200 but running: ms to SIGTERM"
summary_is killed sidecars 0 outcome
summary_is "[200]" sidecars 0 statuses
lat=$(json_get "$RUN/termination-log" sidecars 0 stop_latency_ms)
assert_between "${lat%.*}" 1650 4000 "200 but running: stop request to gone (1s + 700ms)"

say "500s, retried"
run_pod cloudsql cloud-sql-proxy --quitquitquit --stop-status 500
expect_exit agent 10 0
expect_exit proxy 2 143
# 0, 100ms, 300ms, 700ms: four on an idle machine; the schedule itself is unit-tested.
n=$(events_count cloud-sql-proxy "stop request received")
[ "$n" -ge 2 ] || fail "500s: not retried ($n stop request) within --stop-timeout 1s"
summary_is "$n" sidecars 0 requests
summary_is 500 sidecars 0 statuses 0
summary_is 500 sidecars 0 statuses 1
grep -q 'stop request answered 500: trying again in 100ms' "$T/agent.log" || fail "retries not logged"
summary_is terminated sidecars 0 outcome
grep -q "nothing listens on the Cloud SQL Auth Proxy's admin port" "$T/agent.log" &&
	fail "advice about a missing stop endpoint where the proxy answered"
# Without --exit-zero-on-sigterm the SIGTERM ends it with 143: said before, and after.
grep -q 'pre-flight: the Cloud SQL Auth Proxy runs without --exit-zero-on-sigterm' "$T/agent.log" ||
	fail "no pre-flight warning about --exit-zero-on-sigterm"
summary_is 143 sidecars 0 exit_code
summary_is 143 fails_pod 0 exit_code
grep -q 'the sidecar exited 143: under restartPolicy Never the pod will be marked Failed' "$T/agent.log" ||
	fail "the exit code is not explained"
exit 0
