#!/bin/bash
# Pre-flight: the traps the agent can see before anything goes wrong are
# logged once each, with the sidecar's name and the fix, before the app
# exits. A Cloud SQL proxy without --quitquitquit and --exit-zero-on-sigterm
# (seen when it appears after the agent), and one lacking only the latter
# (seen at start-up); the proxy with both flags gets no warning. An Istio
# sidecar whose status port 15020 is off (the stand-in's --status-port 0, as
# with status.sidecar.istio.io/port: "0"); with 15020 there, no warning. A
# signal stop the agent may not send (another uid, no CAP_KILL), said at
# start-up; the agent then cannot stop the sidecar, exits 1, and the summary
# says its own exit code will fail the pod.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job fluent-bit

# agent_start SPEC [OPTION...]: the agent with one sidecar, short stop timeouts.
agent_start() {
	local spec=$1
	shift
	ctr_start agent 1002 "$BIN/rearguard" -s "$spec" --apps 1 --stop-timeout 1s --kill-after 500ms \
		--dir "$EMPTYDIR" --termination-log "$RUN/termination-log" "$@"
	agent_scanned
}
# warned SIDECAR WORDS...: how many warnings about SIDECAR hold every one of WORDS, leaving out
# those about its exit code (which name the same fixes).
warned() {
	local sidecar=$1 lines
	shift
	lines=$(grep -E '^[^ ]+ warn ' "$T/agent.log" | grep -F "sidecar=$sidecar" | grep -v 'marked Failed' || true)
	for w in "$@"; do lines=$(printf '%s\n' "$lines" | grep -F -- "$w" || true); done
	printf '%s' "$lines" | grep -c . || true
}
warned_some() { [ "$(warned "$@")" -ge 1 ]; }
# before_app SIDECAR WORDS...: the warning is logged while the app has not even started.
before_app() {
	wait_for 5 warned_some "$@" || fail "no warning about $1 with '${*:2}' before the app: $(grep warn "$T/agent.log")"
}
# once SIDECAR WORDS...: by the end, that warning was logged once, not more.
once() {
	[ "$(warned "$@")" = 1 ] || fail "the warning about $1 with '${*:2}' was logged $(warned "$@") times: $(grep warn "$T/agent.log")"
}
app_run() {
	ctr_start app 1001 "$BIN/job" --run 200ms --log "$EVENTS"
}

say "cloudsql without --quitquitquit and --exit-zero-on-sigterm, appearing after the agent"
pod_start
agent_start cloudsql
standin_start proxy 1002 cloud-sql-proxy --health-check --port=5432 proj:region:db
wait_for 5 test -e "$EMPTYDIR/ready" || fail "cloudsql: no ready file"
before_app cloudsql --quitquitquit
before_app cloudsql --exit-zero-on-sigterm
app_run
expect_exit agent 15 0
expect_exit proxy 1 143
once cloudsql --quitquitquit
once cloudsql --exit-zero-on-sigterm
# The exit code's warning names the proxy's own fix.
[ "$(grep -E '^[^ ]+ warn .*sidecar=cloudsql' "$T/agent.log" | grep 'exit_code=143' | grep 'the pod will be marked Failed' |
	grep -c -- --exit-zero-on-sigterm)" = 1 ] || fail "no exit-code warning naming --exit-zero-on-sigterm: $(grep warn "$T/agent.log")"
summary_is 143 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log" sidecar:cloudsql:143

say "cloudsql without --exit-zero-on-sigterm, there before the agent"
new_pod
standin_start proxy 1002 cloud-sql-proxy --health-check --quitquitquit proj:region:db
agent_start cloudsql
before_app cloudsql --exit-zero-on-sigterm
app_run
expect_exit agent 15 0
expect_exit proxy 1 0
once cloudsql --exit-zero-on-sigterm
[ "$(warned cloudsql)" = 1 ] || fail "want the one warning about --exit-zero-on-sigterm: $(grep warn "$T/agent.log")"
summary_is 0 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log"

say "cloudsql with both flags"
new_pod
standin_start proxy 1002 cloud-sql-proxy --health-check --quitquitquit --exit-zero-on-sigterm proj:region:db
agent_start cloudsql
wait_for 5 test -e "$EMPTYDIR/ready" || fail "cloudsql: no ready file"
app_run
expect_exit agent 15 0
expect_exit proxy 1 0
[ "$(warned cloudsql)" = 0 ] || fail "warnings for a proxy with both flags: $(grep warn "$T/agent.log")"

say "istio without its status port"
new_pod
agent_start istio
standin_start proxy 1002 pilot-agent proxy sidecar --status-port 0 --term-drain 100ms
wait_for 10 test -e "$EMPTYDIR/ready" || fail "istio: no ready file (Envoy's 15021)"
before_app istio "status port 15020"
app_run
expect_exit agent 15 0
expect_exit proxy 5 0
once istio "status port 15020"

say "istio with its status port"
new_pod
agent_start istio
standin_start proxy 1002 pilot-agent proxy sidecar
wait_for 10 test -e "$EMPTYDIR/ready" || fail "istio: no ready file"
# Time for a check that would have found 15020 closed.
sleep 0.5
app_run
expect_exit agent 15 0
expect_exit proxy 5 0
[ "$(warned istio 15020)" = 0 ] || fail "a 15020 warning although pilot-agent serves it"
[ "$(warned istio)" = 0 ] || fail "warnings about a sound istio sidecar: $(grep warn "$T/agent.log")"

say "a signal the agent may not send"
new_pod
fake_start shipper 1337 fluent-bit
agent_start 'name=shipper,match=fluent-bit'
before_app shipper "not permitted" "KILL capability"
app_run
expect_exit agent 15 1
once shipper "not permitted" "KILL capability"
ctr_running shipper || fail "the sidecar should still run: nobody could stop it"
summary_is 1 exit_code
fails_pod_is "$RUN/termination-log" agent:rearguard:1
exit 0
