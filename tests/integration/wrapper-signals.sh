#!/bin/bash
# rearguard run --drain under a hail of SIGTERMs (a pod deletion racing the
# app's end, the wrapper not PID 1): before the command exits they are
# forwarded to it (it ignores them here), after it they are logged and the
# drain goes on. At no moment in between may one end the wrapper: it exits
# with the command's code, and the sidecar is stopped.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
for round in 1 2 3 4 5; do
	[ "$round" = 1 ] || new_pod
	# The sidecar takes its time to go: the drain lasts, and so do the signals.
	fake_start proxy 1002 fluent-bit --on TERM:delay:300ms:0
	ctr_start app 0 "$BIN/rearguard" run --drain --sidecar 'match=fluent-bit' --stop-timeout 2s --kill-after 1s \
		--dir "$EMPTYDIR" -- "$BIN/job" --run "$((200 + RANDOM % 200))ms" --exit 5 --on TERM:ignore --log "$EVENTS"
	# Once the command has set up its handlers (it logs "started" after that), every 2 ms until
	# the wrapper is gone.
	job_started() { [ -n "$(event_ms job started)" ]; }
	wait_for 5 job_started || fail "round $round: the command did not start"
	hail app
	expect_exit app 10 5
	expect_exit proxy 5 0
	[ -n "$(event_ms fluent-bit "got SIGTERM")" ] || fail "round $round: the sidecar was not stopped"
done
grep -q "signal received while stopping the sidecars: the drain goes on" "$T/app.log" ||
	fail "the signals during the drain are not logged"
exit 0
