#!/bin/bash
# 10 MiB of random bytes in apps/ are logged once and ignored: the agent
# reads at most 4 KiB of it and still stops the sidecar right after the app.
. "$RG_SRCDIR/tests/integration/lib.sh"

shipper_pod
fake_start app 1001 job --run 2s
agent=$(ctr_pid agent)
before=$(awk '/^rchar/ {print $2}' "/proc/$agent/io")
head -c 10M /dev/urandom >"$EMPTYDIR/apps/garbage"
wait_for 5 grep -q "file=apps/garbage" "$T/agent.log" || fail "the garbage was not noticed"
after=$(awk '/^rchar/ {print $2}' "/proc/$agent/io")
assert_between "$((after - before))" 0 65536 "bytes the agent read after the garbage appeared"

expect_exit agent 10 0
app_exit=$(event_ms job "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events: job exit '$app_exit', SIGTERM '$term'"
assert_between "$((term - app_exit))" 0 3000 "ms from the app's exit to the SIGTERM"
[ "$(grep -c 'ignoring a malformed exit-code report' "$T/agent.log")" = 1 ] || fail "not logged exactly once"
summary_is null apps 0 report
exit 0
