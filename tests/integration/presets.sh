#!/bin/bash
# Every preset end to end, each in a pod of its own with a stand-in for its
# proxy (own uid, the real process name, started after the agent): the
# ready file appears only once the proxy turned ready (or, without a ready
# URL, once its process is seen); the stop request arrives after the app
# exit; the proxy exits 0, by its own stop endpoint; the agent exits 0. The Istio pod runs the agent
# with http_proxy pointing nowhere: loopback calls must not go through it.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job

# preset PRESET UID PROXY READY_PROCESS STATUSES [STAND-IN ARG...]: one pod, checked end to end.
# READY_PROCESS is the stand-in process that serves readiness ("-": the preset has no ready URL);
# STATUSES are the answers to the drain and stop requests, as the summary lists them.
preset() {
	local preset=$1 uid=$2 proxy=$3 ready_by=$4 statuses=$5 app_exit stop
	shift 5
	say "preset $preset"
	if [ -n "$PAUSE" ]; then new_pod; else pod_start; fi
	rm -f "$EMPTYDIR/ready"
	# The agent first: it polls a proxy that is not there yet, then not ready, then ready.
	ctr_start agent 1002 env http_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
		ALL_PROXY=http://127.0.0.1:9 "$BIN/rearguard" --sidecar "$preset" --apps 1 \
		--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
	agent_scanned
	standin_start proxy "$uid" "$proxy" --ready-after 700ms "$@"
	if [ "$ready_by" = - ]; then
		wait_for 5 test -e "$EMPTYDIR/ready" || fail "$preset: no ready file"
		# The log line is written when the agent's log is flushed, which may come after the file.
		wait_for 5 grep -q "sidecar ready (no ready URL: its process is running) sidecar=$preset" "$T/agent.log" ||
			fail "$preset: not ready by its process"
	else
		ready_file_after "$ready_by" 5
		[ "$(events_count "$ready_by" "request GET")" -ge 1 ] || fail "$preset: the ready URL was not polled"
	fi
	grep -qx "$preset" "$EMPTYDIR/ready" || fail "$preset: the ready file does not name it"
	ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"

	expect_exit agent 15 0
	expect_exit proxy 5 0
	app_exit=$(event_ms job "exit 0")
	stop=$(event_ms "$proxy" "stop request received")
	[ -n "$app_exit" ] && [ -n "$stop" ] || fail "$preset: app exit '$app_exit', stop request '$stop'"
	assert_between "$((stop - app_exit))" 0 3000 "$preset: ms from the app's exit to the stop request"
	say "$preset: app exit -> stop request received: $((stop - app_exit)) ms"
	[ "$(events_count "$proxy" "got SIGTERM")" = 0 ] || fail "$preset: the proxy needed a signal"
	summary_is stopped sidecars 0 outcome
	summary_is "$statuses" sidecars 0 statuses
	if [ "$ready_by" != - ]; then
		[ "$(json_get "$RUN/termination-log" sidecars 0 ready_after_ms)" != null ] ||
			fail "$preset: no ready time in the summary"
	fi
}

preset istio 1337 pilot-agent envoy "[200]"
grep -q 'sidecar ready sidecar=istio' "$T/agent.log" || fail "istio: readiness not logged"
[ "$(events_count envoy "request GET /healthz/ready")" -ge 1 ] || fail "istio: readiness was not polled on 15021"
[ -n "$(event_ms pilot-agent "killed envoy")" ] || fail "istio: Envoy did not stop with pilot-agent"

preset envoy 1101 envoy envoy "[200, 200]"
drain=$(event_ms envoy "request POST /healthcheck/fail")
stop=$(event_ms envoy "stop request received")
[ -n "$drain" ] && [ "$drain" -le "$stop" ] || fail "envoy: /healthcheck/fail ($drain) not before the stop ($stop)"

LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true preset linkerd 2102 linkerd2-proxy linkerd2-proxy "[200]"
preset cloudsql 65532 cloud-sql-proxy cloud-sql-proxy "[200]" --quitquitquit --health-check
preset dapr 1000 daprd daprd "[204]"
preset vault 100 vault - "[200]" agent --enable-quit
preset consul 5995 consul-dataplane - "[200]" --term-drain 300ms
exit 0
