#!/bin/bash
# kubectl exec into the app container starts a later ppid-0 process in its
# cgroup. It is not the container's root: the drain starts when the real
# root exits, while the exec session still runs.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job debug-shell
pod_start
fake_start proxy 1002 fluent-bit
ctr_start app 1001 "$BIN/job" --run 1500ms --log "$EVENTS" --started "$RUN/app.up"
wait_for 5 test -e "$RUN/app.up" || fail "app did not start"
ctr_exec app 1001 "$BIN/debug-shell" --run 30s --log "$EVENTS" --started "$RUN/exec.up"
wait_for 5 test -e "$RUN/exec.up" || fail "exec session did not start"
# The agent starts last, so it first sees both processes at once.
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --dir "$EMPTYDIR"

expect_exit agent 10 0
app_exit=$(event_ms job "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events"
assert_between "$((term - app_exit))" 0 3000 "ms from the root's exit to the SIGTERM"
grep -Eq "role=app name=job pid=[0-9]+ processes=2" "$T/agent.log" ||
	fail "the app container should show its root 'job' and 2 processes"
grep -q "name=debug-shell" "$T/agent.log" && fail "the exec session was taken for a container root"
# Alive, not merely silent: a SIGKILL would log no exit event.
kill -0 "$(cat "$T/app-exec.pid")" 2>/dev/null || fail "the exec session should still run"
exit 0
