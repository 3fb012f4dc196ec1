#!/bin/bash
# A restart that is over quickly is not missed. Under OnFailure the app
# fails; its restart (a new container) lives only 200 ms and succeeds. The
# agent must see that container come and go, and drain at once, rather
# than wait out --restart-grace for a restart it missed. Three pods, so
# that the restart falls at a different moment of the rescan cadence in
# each.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
for round in 1 2 3; do
	[ "$round" = 1 ] || new_pod
	first_attempt_fails 60s --run 200ms
	# Some time after the failure, as the kubelet's back-off would have it.
	sleep "0.$((RANDOM % 9 + 1))"
	ctr_start app-restarted 1001 "$BIN/job" --run 200ms --exit 0 --name attempt2 --log "$EVENTS"
	expect_exit app-restarted 5 0
	# Found and done within a few rescans, not after --restart-grace (60s).
	expect_exit agent 10 0
	grep -q "app restarted" "$T/agent.log" || fail "round $round: the restart was not seen"
	summary_is restarted apps 0 state
	summary_is 0 apps 1 exit_code
	summary_is apps-done reason
	in_order "$(event_ms attempt2 "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" \
		"round $round: the restart's exit -> the sidecar's SIGTERM"
done
exit 0
