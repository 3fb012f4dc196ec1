#!/bin/bash
# SIGHUP to the agent: a look at the pod for whoever debugs it (a rescan, and
# a line for each container), and the decisions go on from what it found: a
# drain file written meanwhile is acted upon, the agent itself goes on.
. "$RG_SRCDIR/tests/integration/lib.sh"

shipper_pod
fake_start app 1001 job --run 60s
# Seen as it appears, or first pending (still the runtime's init) and then as an app.
wait_for 5 grep -qE "container (appeared|role changed).*role=app" "$T/agent.log" || fail "the app was not seen"
kill -HUP "$(ctr_pid agent)"
wait_for 5 grep -q "SIGHUP: rescanning the pod" "$T/agent.log" || fail "SIGHUP is not logged"
for role in pause sidecar self app; do
	[ "$(grep -A6 "SIGHUP: rescanning the pod" "$T/agent.log" | grep -c "role=$role")" -ge 1 ] ||
		fail "the listing after SIGHUP has no $role container"
done
ctr_running agent || fail "SIGHUP ended the agent"
kill -HUP "$(ctr_pid agent)"
put_atomic "$EMPTYDIR/drain" ""
expect_exit agent 10 0
summary_is drain-file reason
ctr_running app || fail "the app should still run"
exit 0
