#!/bin/bash
# Escalation: a sidecar that ignores its stop signal (INT) and SIGTERM gets
# SIGTERM after --stop-timeout and SIGKILL after --kill-after more; a
# SIGTERM-stopped sidecar that ignores it gets SIGKILL after both, with no
# second SIGTERM. The agent still exits 0: every sidecar is gone.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin stubborn
alias_bin deaf
alias_bin job
pod_start
ctr_start stubborn 1002 "$BIN/stubborn" --on INT:ignore --on TERM:ignore --log "$EVENTS" --started "$RUN/s.up"
ctr_start deaf 1002 "$BIN/deaf" --on TERM:ignore --log "$EVENTS" --started "$RUN/d.up"
wait_for 5 test -e "$RUN/s.up" -a -e "$RUN/d.up" || fail "sidecars did not start"
ctr_start agent 1002 "$BIN/rearguard" -s 'match=deaf' -s 'match=stubborn,stop=signal:INT' --apps 1 \
	--stop-timeout 1s --kill-after 700ms --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"

ctr_wait agent 20
[ "$RC" = 0 ] || fail "agent exited $RC"
ctr_wait stubborn 1
[ "$RC" = 137 ] || fail "stubborn sidecar exited $RC, not killed by SIGKILL"
ctr_wait deaf 1
[ "$RC" = 137 ] || fail "deaf sidecar exited $RC, not killed by SIGKILL"

int=$(event_ms stubborn "got SIGINT")
term=$(event_ms stubborn "got SIGTERM")
[ -n "$int" ] && [ -n "$term" ] || fail "stubborn: missing SIGINT ($int) or SIGTERM ($term)"
assert_between "$((term - int))" 950 1500 "ms from the stop signal to SIGTERM (--stop-timeout 1s)"
deaf_term=$(event_ms deaf "got SIGTERM")
[ -n "$deaf_term" ] || fail "deaf: no SIGTERM"
[ "$deaf_term" -ge "$term" ] || fail "the last --sidecar must be stopped first"
[ "$(grep -c 'deaf .* got SIGTERM' "$EVENTS")" = 1 ] || fail "deaf got a second SIGTERM"
[ "$(json_get "$RUN/termination-log" sidecars 0 outcome)" = killed ] || fail "deaf outcome"
[ "$(json_get "$RUN/termination-log" sidecars 1 outcome)" = killed ] || fail "stubborn outcome"
lat=$(json_get "$RUN/termination-log" sidecars 1 stop_latency_ms)
lat=${lat%.*}
assert_between "$lat" 1650 2600 "stubborn: stop request to gone (1s + 700ms)"
lat=$(json_get "$RUN/termination-log" sidecars 0 stop_latency_ms)
lat=${lat%.*}
assert_between "$lat" 1650 2600 "deaf: SIGTERM to gone (1s + 700ms)"
grep -q 'sent SIGKILL' "$T/agent.log" || fail "SIGKILL not logged"
