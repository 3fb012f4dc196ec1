#!/bin/bash
# Exit-code reports in apps/NAME. First pod: the app container is a shell
# whose job writes apps/job and whose helper keeps the shell (the container's
# root) running: the report alone makes the app done. The volume is owned by
# the agent's uid and read-only for others (0755): the app still reports,
# through the apps/ the agent made (1777). Second pod: the report says 3
# while the container's main process exits 0: once known, the kernel's code
# counts and the log says they differ.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job helper
pod_start
chown 1002:1002 "$EMPTYDIR"
chmod 0755 "$EMPTYDIR"
fake_start proxy 1002 fluent-bit
shipper_agent
agent_scanned
[ "$(stat -c %a "$EMPTYDIR/apps")" = 1777 ] || fail "apps/ is mode $(stat -c %a "$EMPTYDIR/apps"), want 1777"
ctr_start app 1001 /bin/sh -c "\"$BIN/helper\" --run 60s --log \"$EVENTS\" &
	\"$BIN/job\" --run 500ms --exit 0 --log \"$EVENTS\"
	echo \$? >\"$EMPTYDIR/apps/job\"
	wait"

expect_exit agent 10 0
app_exit=$(event_ms job "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events: job exit '$app_exit', SIGTERM '$term'"
assert_between "$((term - app_exit))" 0 3000 "ms from the report to the sidecar's SIGTERM"
ctr_running app || fail "the app container (its helper) should still run"
[ -z "$(event_ms helper exit)" ] || fail "the helper should still run"
grep -q "app reported that it finished.*report=job exit_code=0 running=yes" "$T/agent.log" ||
	fail "the report while the root still runs is not logged"
summary_is sh apps 0 name
summary_is job apps 0 report name
summary_is 0 apps 0 report exit_code
summary_is 0 apps 0 exit_code
[ "$(stat -c %a "$EMPTYDIR/done")" = 644 ] || fail "done is not readable by all"

# The report and the container's exit code differ. The sidecar takes a second to stop, so
# that the kernel's code (the shell's, right after the report) arrives before the end.
new_pod
fake_start proxy 1002 fluent-bit --on TERM:delay:1s:0
shipper_agent
agent_scanned
ctr_start app 1001 /bin/sh -c "\"$BIN/job\" --run 300ms --exit 0 --log \"$EVENTS\"; echo 3 >\"$EMPTYDIR/apps/job\""
expect_exit agent 10 0
expect_exit app 1 0
grep -q "the app's report and its container's exit code differ.*reported=3 exit_code=0" "$T/agent.log" ||
	fail "the difference is not logged"
summary_is 0 apps 0 exit_code
summary_is 3 apps 0 report exit_code
exit 0
