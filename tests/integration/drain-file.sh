#!/bin/bash
# A drain file written by hand drains at once, while the app still runs.
# The agent writes apps-done (the reason) when the drain starts and done
# (the summary) at the end; a preStop hook's `rearguard wait apps-done`
# returns as soon as apps-done is there.
. "$RG_SRCDIR/tests/integration/lib.sh"

shipper_pod
fake_start app 1001 job --run 60s
# A sidecar's preStop hook, waiting for the agent's decision.
ctr_start prestop 1002 "$BIN/rearguard" wait apps-done --timeout 20s --dir "$EMPTYDIR"
sleep 0.5
ctr_running prestop || fail "wait apps-done returned before the decision"

asked=$(now_ms)
: >"$EMPTYDIR/drain"
expect_exit agent 10 0
expect_exit prestop 2 0
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$term" ] || fail "the sidecar got no SIGTERM"
assert_between "$((term - asked))" 0 3000 "ms from the drain file to the sidecar's SIGTERM"
ctr_running app || fail "the app should still run"
# The file is said first, then decide's drain and the stop it starts.
found=$(grep -n "drain file found" "$T/agent.log" | head -n 1 | cut -d: -f1)
drain=$(grep -n "drain requested: draining the sidecars" "$T/agent.log" | head -n 1 | cut -d: -f1)
stop=$(grep -n "stopping sidecar" "$T/agent.log" | head -n 1 | cut -d: -f1)
[ -n "$found" ] && [ -n "$drain" ] && [ -n "$stop" ] || fail "the drain file, the drain or the stop is not logged"
[ "$found" -lt "$drain" ] && [ "$drain" -lt "$stop" ] ||
	fail "logged out of order: drain file at line $found, drain at $drain, stop at $stop"
summary_is drain-file reason
[ "$(cat "$EMPTYDIR/apps-done")" = drain-file ] || fail "apps-done says '$(cat "$EMPTYDIR/apps-done")'"
cmp -s <(tr -d '\n' <"$EMPTYDIR/done") "$RUN/termination-log" || fail "done is not the summary"
json_get "$EMPTYDIR/done" sidecars 0 outcome >/dev/null || fail "done is not JSON"
exit 0
