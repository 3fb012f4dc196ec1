#!/bin/bash
# The wrapper model: no agent, no shared PID namespace. rearguard run --drain
# waits for the sidecar's ready URL itself, runs the app, then stops the
# sidecar through its stop URL and confirms it is gone when the ready URL
# refuses connections; it exits with the app's code. When the sidecar never
# turns ready, the app is not started (124) and the sidecar is still stopped.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
# A container of its own PID namespace in the pod's network: what it sees without shareProcessNamespace.
wrapper() {
	local rc=0
	blind_run 30 "$BIN/rearguard" run --drain --sidecar istio --dir "$EMPTYDIR" "$@" >"$T/wrapper.log" 2>&1 || rc=$?
	echo "$rc"
}

pod_start
standin_start proxy 1337 pilot-agent --ready-after 700ms
rc=$(wrapper -- "$BIN/job" --run 300ms --exit 3 --log "$EVENTS")
[ "$rc" = 3 ] || { cat "$T/wrapper.log"; fail "run --drain exited $rc, want the app's 3"; }
ready=$(event_ms pilot-agent "turned ready")
started=$(event_ms job started)
app_exit=$(event_ms job "exit 3")
stop=$(event_ms pilot-agent "stop request received")
[ -n "$ready" ] && [ -n "$started" ] && [ -n "$app_exit" ] && [ -n "$stop" ] || fail "missing events"
[ "$started" -ge "$ready" ] || fail "the app started at $started, before the proxy was ready at $ready"
[ "$stop" -ge "$app_exit" ] || fail "the stop request came before the app exited"
assert_between "$((stop - app_exit))" 0 3000 "ms from the app's exit to the stop request"
expect_exit proxy 10 0
[ "$(cat "$EMPTYDIR/apps/job")" = 3 ] || fail "apps/job does not say 3"
grep -q "no shared PID namespace" "$T/wrapper.log" || fail "the blind drain is not explained"
grep -q "every sidecar is ready: starting the command" "$T/wrapper.log" || fail "the readiness wait is not logged"

say "a sidecar that never turns ready"
new_pod
rm -rf "${EMPTYDIR:?}"/*
standin_start proxy 1337 pilot-agent --ready-after 600s
rc=$(wrapper --timeout 1s -- "$BIN/job" --run 100ms --log "$EVENTS")
[ "$rc" = 124 ] || { cat "$T/wrapper.log"; fail "run --drain exited $rc, want 124"; }
[ -z "$(event_ms job started)" ] || fail "the app was started without a ready sidecar"
[ -n "$(event_ms pilot-agent "stop request received")" ] || fail "the sidecar was not stopped"
expect_exit proxy 10 0
grep -q "sidecar not ready within 1s" "$T/wrapper.log" || fail "the timeout is not explained"

say "bad usage"
rc=0
"$BIN/rearguard" run --drain -- true 2>"$T/usage.err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--drain needs the sidecars" "$T/usage.err" || fail "--drain without sidecars: $rc"
rc=0
"$BIN/rearguard" run --sidecar istio -- true 2>"$T/usage.err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--sidecar is for --drain" "$T/usage.err" || fail "--sidecar without --drain: $rc"

say "SIGTERM to run during its drain (run not PID 1: a shared PID namespace) does not end the drain"
new_pod
rm -rf "${EMPTYDIR:?}"/*
standin_start proxy 1337 pilot-agent --stop-hang --term-drain 100ms
ctr_start app 0 "$BIN/rearguard" run --drain --sidecar istio --stop-timeout 2s --kill-after 2s --dir "$EMPTYDIR" \
	-- "$BIN/job" --run 100ms --exit 5 --log "$EVENTS"
wait_for 10 grep -q "stop request" "$EVENTS" || fail "no stop request"
kill -TERM "$(ctr_pid app)"
expect_exit app 15 5
[ -n "$(event_ms pilot-agent "got SIGTERM")" ] || fail "the drain did not go on to SIGTERM after --stop-timeout"
expect_exit proxy 5 0
