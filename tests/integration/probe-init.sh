#!/bin/bash
# Under OnFailure, while the app's restart is awaited, an exec probe or a
# kubectl exec into another container starts a runtime init in the pod. runc
# moves an exec session's init into its container only after it is visible,
# so it is seen in the runtime's cgroup, outside the pod's, and it may end
# there, never having run a program. It is no container: neither the app's
# restart nor a success. The agent keeps the sidecar until the real restart
# has run and succeeded, and stops it after that.
# The init is this harness's runc, without a cgroup of its own (it stays in
# the test's, which is outside the pod's), held until the agent has seen it
# and then gone without an exec: each step waits for the agent's log, so
# nothing depends on when the agent looks.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
first_attempt_fails 60s --run 300ms

"$BIN/runc" --target "$PAUSE" --hold "$RUN/probe-go" --hold-exit 0 --pidfile "$T/probe.pid" \
	--exitfile "$T/probe.exit" -- /bin/true >"$T/probe.log" 2>&1 &
LAUNCHERS="$LAUNCHERS $!"
disown $!
wait_for 5 test -s "$T/probe.pid" || fail "the probe's init did not start"
probe=$(awk '/^NSpid:/ { print $NF }' "/proc/$(cat "$T/probe.pid")/status")
[ -n "$probe" ] || fail "the probe's pid in the pod is unknown"
wait_for 10 grep -q "role=pending name=runc pid=$probe " "$T/agent.log" || fail "the agent never saw the probe's init"
touch "$RUN/probe-go"
ctr_wait probe 5
[ "$RC" = 0 ] || fail "the probe's init exited $RC, want 0"
# The agent heard of its exit: one of the two lines for a pending root that is gone.
gone="(exited before a rescan saw its program run|without joining a container).* pid=$probe "
wait_for 10 grep -qE "$gone" "$T/agent.log" || fail "the agent never heard of the probe's exit"
grep -E "$gone" "$T/agent.log" | grep -q "without joining a container" ||
	fail "the probe's init was taken for a container: $(grep -E "$gone" "$T/agent.log")"
grep -q "app restarted" "$T/agent.log" && fail "the probe's init was taken for the app's restart"
grep -q "apps done" "$T/agent.log" && fail "the agent drained on the probe's exit"
ctr_running proxy || fail "the sidecar was stopped while the restart was awaited"

ctr_start app-restarted 1001 "$BIN/job" --run 500ms --exit 0 --name attempt2 --log "$EVENTS"
expect_exit app-restarted 5 0
expect_exit agent 10 0
in_order "$(event_ms attempt2 "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" \
	"the restart's exit -> the sidecar's SIGTERM"
summary_is restarted apps 0 state
summary_is 0 apps -1 exit_code
summary_is job apps -1 name
summary_len apps 2
exit 0
