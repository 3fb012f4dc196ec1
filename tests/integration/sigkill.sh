#!/bin/bash
# Escalation: a sidecar that ignores its stop signal (INT) and SIGTERM gets
# SIGTERM after --stop-timeout and SIGKILL after --kill-after more; a
# SIGTERM-stopped sidecar that ignores it gets SIGKILL after both, with no
# second SIGTERM. The agent still exits 0: every sidecar is gone.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
pod_start
fake_start stubborn 1002 stubborn --on INT:ignore --on TERM:ignore
fake_start deaf 1002 deaf --on TERM:ignore
ctr_start agent 1002 "$BIN/rearguard" -s 'match=deaf' -s 'match=stubborn,stop=signal:INT' --apps 1 \
	--stop-timeout 1s --kill-after 700ms --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"

expect_exit agent 20 0
expect_exit stubborn 1 137
expect_exit deaf 1 137

int=$(event_ms stubborn "got SIGINT")
term=$(event_ms stubborn "got SIGTERM")
[ -n "$int" ] && [ -n "$term" ] || fail "stubborn: missing SIGINT ($int) or SIGTERM ($term)"
assert_between "$((term - int))" 950 4000 "ms from the stop signal to SIGTERM (--stop-timeout 1s)"
# The last --sidecar is stopped first.
in_order "$term" "$(event_ms deaf "got SIGTERM")" "stubborn's SIGTERM -> deaf's SIGTERM"
[ "$(grep -c 'deaf .* got SIGTERM' "$EVENTS")" = 1 ] || fail "deaf got a second SIGTERM"
summary_is killed sidecars 0 outcome
summary_is killed sidecars 1 outcome
lat=$(json_get "$RUN/termination-log" sidecars 1 stop_latency_ms)
lat=${lat%.*}
assert_between "$lat" 1650 4000 "stubborn: stop request to gone (1s + 700ms)"
lat=$(json_get "$RUN/termination-log" sidecars 0 stop_latency_ms)
lat=${lat%.*}
assert_between "$lat" 1650 4000 "deaf: SIGTERM to gone (1s + 700ms)"
grep -q 'sent SIGKILL' "$T/agent.log" || fail "SIGKILL not logged"
