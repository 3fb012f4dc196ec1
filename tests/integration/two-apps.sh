#!/bin/bash
# Two apps that end at different times, without --apps: the sidecar is
# stopped only after the second one exits.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
alias_bin quick
alias_bin slow
pod_start
ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS" --started "$RUN/proxy.up"
wait_for 5 test -e "$RUN/proxy.up" || fail "sidecar did not start"
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
ctr_start quick 1001 "$BIN/quick" --run 500ms --log "$EVENTS"
ctr_start slow 1003 "$BIN/slow" --run 2500ms --exit 0 --log "$EVENTS"

ctr_wait agent 15
[ "$RC" = 0 ] || fail "agent exited $RC"
quick=$(event_ms quick "exit 0")
slow=$(event_ms slow "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$quick" ] && [ -n "$slow" ] && [ -n "$term" ] || fail "missing events"
[ "$term" -ge "$slow" ] || fail "sidecar stopped at $term, before the second app exited at $slow"
assert_between "$((term - slow))" 0 1000 "ms from the last app's exit to the SIGTERM"
assert_between "$((slow - quick))" 1500 3000 "the apps ended at different times"
[ "$(json_get "$RUN/termination-log" apps 1 exit_code)" = 0 ] || fail "second app's exit code"
[ "$(grep -c 'app container exited' "$T/agent.log")" = 2 ] || fail "both exits logged"
say "quick exit -> slow exit -> SIGTERM: 0, $((slow - quick)), $((term - quick)) ms"
