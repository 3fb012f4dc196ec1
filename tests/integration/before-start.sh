#!/bin/bash
# Files written before the agent starts are honoured: the directory is
# watched before it is read, so nothing falls between the two. First pod: a
# drain file. Second pod: a report from a container whose root still runs
# (without the report the agent would wait for it). Third pod: a report from
# an app that came and went before the agent: with --apps 1 it counts as that
# app, long before --startup-timeout.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job helper
pod_start
fake_start proxy 1002 fluent-bit
fake_start app 1001 job --run 60s
: >"$EMPTYDIR/drain"
shipper_agent
expect_exit agent 10 0
summary_is drain-file reason
ctr_running app || fail "the app should still run"

new_pod
fake_start proxy 1002 fluent-bit
ctr_start app 1001 /bin/sh -c "mkdir -p \"$EMPTYDIR/apps\"; echo 0 >\"$EMPTYDIR/apps/job\"; exec \"$BIN/helper\" --run 60s"
wait_for 5 test -s "$EMPTYDIR/apps/job" || fail "the app did not report"
shipper_agent
expect_exit agent 10 0
summary_is apps-done reason
summary_is 0 apps 0 exit_code
summary_is helper apps 0 name
ctr_running app || fail "the app's helper should still run"

new_pod
fake_start proxy 1002 fluent-bit
mkdir -m 1777 "$EMPTYDIR/apps"
put_atomic "$EMPTYDIR/apps/job" 0
started=$(now_ms)
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --startup-timeout 30s --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
expect_exit agent 10 0
assert_between "$(($(now_ms) - started))" 0 20000 "ms to finish with a report of an app already gone"
summary_is apps-done reason
summary_is null apps 0 container
summary_is 0 apps 0 exit_code
exit 0
